import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import type { RejectedStatusFilter } from '../../db/repositories/partner-poll.repository.js';
import { acceptRejectedItem, dismissRejectedItem, getPartnerPollStatus, type ItemCorrections, listRejectedInbound, pollPartnerNow as requestPoll, retryRejectedItem } from '../../services/partner-poll/index.js';
import { actorOf, bodyOf, queryOf } from './context.js';

export const getPartnerPolling: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await getPartnerPollStatus(ctx.deps, ctx.principal.access, ctx.request.params.code!) });

export const pollPartnerNow: Handler<AdminPrincipal> = async (ctx) => ({ status: 202, body: await requestPoll(ctx.deps, ctx.request.params.code!, actorOf(ctx)) });

export const listRejectedInboundItems: Handler<AdminPrincipal> = async (ctx) => {
  const page = queryOf(ctx, 'page');
  const pageSize = queryOf(ctx, 'pageSize');
  return {
    status: 200,
    body: await listRejectedInbound(ctx.deps, ctx.principal.access, {
      partnerCode: ctx.request.params.code!,
      status: (queryOf(ctx, 'status') ?? 'all') as RejectedStatusFilter,
      page: page === undefined ? undefined : Number(page),
      pageSize: pageSize === undefined ? undefined : Number(pageSize),
    }),
  };
};

export const dismissRejectedInboundItem: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await dismissRejectedItem(ctx.deps, actorOf(ctx), ctx.request.params.itemId!, (bodyOf<{ reason?: string } | undefined>(ctx) ?? {}).reason),
});

export const acceptRejectedInboundItem: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await acceptRejectedItem(ctx.deps, actorOf(ctx), ctx.request.params.itemId!, bodyOf<{ corrections: ItemCorrections }>(ctx).corrections, ctx.signal),
});

export const retryRejectedInboundItem: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await retryRejectedItem(ctx.deps, actorOf(ctx), ctx.request.params.itemId!, ctx.signal) });
