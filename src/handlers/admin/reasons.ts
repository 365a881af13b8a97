import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import {
  applyReasonMapping,
  createReason as create,
  listReasons as list,
  mapReason,
  partnerReasonCodes,
  unmapReason,
} from '../../services/operations/index.js';
import { actorOf, bodyOf } from './context.js';

export const listReasons: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: { items: (await list(ctx.deps, ctx.request.params.tenantId!, ctx.principal.access)).reasons } });

export const createReason: Handler<AdminPrincipal> = async (ctx) => {
  const body = bodyOf<{ code: string; namePt: string; nameEn: string; priority: string; slaHours: number }>(ctx);
  return { status: 201, body: await create(ctx.deps, { ...body, tenantId: ctx.request.params.tenantId! }, actorOf(ctx)) };
};

export const listPartnerReasonCodes: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await partnerReasonCodes(ctx.deps, ctx.request.params.code!, actorOf(ctx)) });

export const mapPartnerReasonCode: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await mapReason(ctx.deps, { partnerCode: ctx.request.params.code!, from: ctx.request.params.partnerCode!, to: bodyOf<{ reasonCode: string }>(ctx).reasonCode, description: bodyOf<{ description?: string | null }>(ctx).description }, actorOf(ctx), {
    from: '/path/partnerCode',
    to: '/reasonCode',
  }),
});

export const unmapPartnerReasonCode: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await unmapReason(ctx.deps, { partnerCode: ctx.request.params.code!, from: ctx.request.params.partnerCode! }, actorOf(ctx)),
});

export const applyPartnerReasonMapping: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await applyReasonMapping(ctx.deps, ctx.request.params.code!, ctx.request.params.partnerCode!, actorOf(ctx)),
});
