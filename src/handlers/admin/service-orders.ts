import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { assignServiceOrder as assign, cancelServiceOrder as cancel, completeServiceOrder as complete, getServiceOrder as findOrder, startServiceOrder as start } from '../../services/operations/index.js';
import { actorOf, bodyOf } from './context.js';

const orderId = (ctx: Parameters<Handler<AdminPrincipal>>[0]): string => ctx.request.params.serviceOrderId!;

export const getServiceOrder: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await findOrder(ctx.deps, ctx.principal.access, orderId(ctx)) });

export const assignServiceOrder: Handler<AdminPrincipal> = async (ctx) => {
  const { teamId, note } = bodyOf<{ teamId: string; note?: string }>(ctx);
  return { status: 200, body: await assign(ctx.deps, actorOf(ctx), orderId(ctx), teamId, note) };
};

export const startServiceOrder: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await start(ctx.deps, actorOf(ctx), orderId(ctx), bodyOf<{ note?: string }>(ctx).note) });

export const completeServiceOrder: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await complete(ctx.deps, actorOf(ctx), orderId(ctx), bodyOf<{ note?: string }>(ctx).note) });

export const cancelServiceOrder: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await cancel(ctx.deps, actorOf(ctx), orderId(ctx), bodyOf<{ reason?: string }>(ctx).reason) });
