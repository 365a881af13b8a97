import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { getWebhookDelivery as getOne, listWebhookDeliveries as list, redeliver, redeliverDead, redeliverSince, sendTestEvent } from '../../services/events/index.js';
import { actorOf, bodyOf, queryOf } from './context.js';

export const listWebhookDeliveries: Handler<AdminPrincipal> = async (ctx) => {
  const limit = queryOf(ctx, 'limit');
  return {
    status: 200,
    body: await list(ctx.deps, ctx.principal.access, {
      partnerCode: ctx.request.params.code!,
      status: queryOf(ctx, 'status'),
      since: queryOf(ctx, 'since'),
      serviceOrderId: queryOf(ctx, 'serviceOrderId'),
      limit: limit === undefined ? undefined : Number(limit),
    }),
  };
};

export const getWebhookDelivery: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await getOne(ctx.deps, ctx.principal.access, ctx.request.params.deliveryId!) });

export const redeliverWebhook: Handler<AdminPrincipal> = async (ctx) => ({ status: 201, body: await redeliver(ctx.deps, ctx.request.params.deliveryId!, actorOf(ctx)) });

export const redeliverWebhooksSince: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await redeliverSince(ctx.deps, ctx.request.params.code!, bodyOf<{ since: string }>(ctx).since, actorOf(ctx)),
});

export const redeliverDeadWebhooks: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await redeliverDead(ctx.deps, ctx.request.params.code!, actorOf(ctx)) });

export const sendPartnerTestEvent: Handler<AdminPrincipal> = async (ctx) => ({ status: 202, body: await sendTestEvent(ctx.deps, ctx.request.params.code!, actorOf(ctx)) });
