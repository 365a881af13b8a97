import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { createOperator as create, disableOperator as disable, enableOperator as enable, getOperator as find, grantRole, listOperators as list, resetOperatorPassword as reset, revokeRole, type CreateOperatorInput } from '../../services/operators/index.js';
import { actorOf, bodyOf } from './context.js';

export const listOperators: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: { items: await list(ctx.deps, ctx.principal.access) } });

export const createOperator: Handler<AdminPrincipal> = async (ctx) => {
  const created = await create(ctx.deps, actorOf(ctx), bodyOf<CreateOperatorInput>(ctx));
  return { status: 201, body: created, headers: { location: `/api/admin/operators/${created.operator.id}`, 'cache-control': 'no-store' } };
};

export const getOperator: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await find(ctx.deps, ctx.principal.access, ctx.request.params.operatorId!) });

export const disableOperator: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await disable(ctx.deps, actorOf(ctx), ctx.request.params.operatorId!) });

export const enableOperator: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await enable(ctx.deps, actorOf(ctx), ctx.request.params.operatorId!) });

export const grantOperatorRole: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await grantRole(ctx.deps, actorOf(ctx), ctx.request.params.operatorId!, ctx.request.params.tenantId!, bodyOf<{ role: string }>(ctx).role),
});

export const revokeOperatorRole: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await revokeRole(ctx.deps, actorOf(ctx), ctx.request.params.operatorId!, ctx.request.params.tenantId!) });

export const resetOperatorPassword: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await reset(ctx.deps, actorOf(ctx), ctx.request.params.operatorId!),
  headers: { 'cache-control': 'no-store' },
});
