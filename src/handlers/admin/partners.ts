import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { createPartner as create, getPartner as find, listPartners as list, rotatePartnerKey as rotate, rotateWebhookSecret, type RotatePartnerKeyInput, updatePartner as update, type RotateWebhookSecretInput, type CreatePartnerInput, type UpdatePartnerInput } from '../../services/partners/index.js';
import { actorOf, bodyOf, queryOf } from './context.js';

export const listPartners: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: { items: await list(ctx.deps, ctx.principal.access, queryOf(ctx, 'tenantId')) } });

export const createPartner: Handler<AdminPrincipal> = async (ctx) => {
  const created = await create(ctx.deps, bodyOf<CreatePartnerInput>(ctx), actorOf(ctx));
  return { status: 201, body: created, headers: { location: `/api/admin/partners/${encodeURIComponent(created.code)}`, 'cache-control': 'no-store' } };
};

export const getPartner: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await find(ctx.deps, ctx.principal.access, ctx.request.params.code!) });

export const updatePartner: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await update(ctx.deps, ctx.request.params.code!, bodyOf<UpdatePartnerInput>(ctx), actorOf(ctx)) });

export const rotatePartnerKey: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await rotate(ctx.deps, ctx.request.params.code!, actorOf(ctx), bodyOf<RotatePartnerKeyInput | undefined>(ctx) ?? {}),
  headers: { 'cache-control': 'no-store' },
});

export const rotatePartnerWebhookSecret: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await rotateWebhookSecret(ctx.deps, ctx.request.params.code!, bodyOf<RotateWebhookSecretInput | undefined>(ctx) ?? {}, actorOf(ctx)),
  headers: { 'cache-control': 'no-store' },
});
