import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { clearPlannedVisit as clearVisit, setPlannedVisit as planVisit, orderTimeline, setOrderPole, listServiceOrders as listOrders, assignServiceOrder as assign, cancelServiceOrder as cancel, completeServiceOrder as complete, getServiceOrder as findOrder, startServiceOrder as start } from '../../services/operations/index.js';
import type { CompletionInput } from '../../services/completion/index.js';
import { actorOf, bodyOf, bodyRef, orderOf, queryOf, undoHeaders, undoOf } from './context.js';

const orderId = async (ctx: Parameters<Handler<AdminPrincipal>>[0]): Promise<string> => (await orderOf(ctx)).id;

export const getServiceOrder: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await findOrder(ctx.deps, ctx.principal.access, await orderId(ctx)) });

export const assignServiceOrder: Handler<AdminPrincipal> = async (ctx) => {
  const { teamId, note } = bodyOf<{ teamId: string; note?: string }>(ctx);
  const order = await orderOf(ctx);
  return { status: 200, body: await assign(ctx.deps, actorOf(ctx), order.id, await bodyRef('team', ctx, teamId, order.tenantId, '/teamId', 'order'), note) };
};

export const startServiceOrder: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await start(ctx.deps, actorOf(ctx), await orderId(ctx), bodyOf<{ note?: string }>(ctx).note) });

export const completeServiceOrder: Handler<AdminPrincipal> = async (ctx) => {
  const { note, ...completion } = bodyOf<{ note?: string } & CompletionInput>(ctx);
  return { status: 200, body: await complete(ctx.deps, actorOf(ctx), await orderId(ctx), note, completion) };
};

export const cancelServiceOrder: Handler<AdminPrincipal> = async (ctx) => {
  const undo = undoOf(ctx);
  const body = await cancel(ctx.deps, actorOf(ctx), await orderId(ctx), bodyOf<{ reason?: string }>(ctx).reason, undo);
  return { status: 200, body, headers: undoHeaders(undo) };
};

export const listServiceOrders: Handler<AdminPrincipal> = async (ctx) => {
  const q = (name: string) => queryOf(ctx, name);
  return {
    status: 200,
    body: await listOrders(ctx.deps, ctx.principal.access, {
      tenantId: q('tenantId'),
      status: q('status'),
      team: q('team'),
      overdue: q('overdue'),
      reason: q('reason'),
      partner: q('partner'),
      text: q('text'),
      openedAfter: q('openedAfter'),
      openedBefore: q('openedBefore'),
      sort: q('sort'),
      cursor: q('cursor'),
      limit: q('limit'),
    }),
  };
};

export const getServiceOrderTimeline: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await orderTimeline(ctx.deps.db, ctx.principal.access, await orderOf(ctx)) });

export const setServiceOrderPole: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await setOrderPole(ctx.deps, actorOf(ctx), await orderOf(ctx), bodyOf<{ poleId: string | null }>(ctx).poleId),
});

export const setPlannedVisit: Handler<AdminPrincipal> = async (ctx) => {
  const { startsAt, endsAt } = bodyOf<{ startsAt: string; endsAt: string }>(ctx);
  return { status: 200, body: await planVisit(ctx.deps, actorOf(ctx), await orderId(ctx), startsAt, endsAt) };
};

export const clearPlannedVisit: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await clearVisit(ctx.deps, actorOf(ctx), await orderId(ctx)) });
