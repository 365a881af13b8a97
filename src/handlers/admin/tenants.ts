import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { changeIntakePolicy } from '../../services/tenants/index.js';
import { getTenant as findTenantView, listAllTenants } from '../../services/tenants/index.js';
import { tenantAttention } from '../../services/operations/index.js';
import { actorOf, bodyOf } from './context.js';

export const listTenants: Handler<AdminPrincipal> = async ({ deps }) => ({ status: 200, body: { items: await listAllTenants(deps) } });

export const getTenant: Handler<AdminPrincipal> = async ({ deps, request }) => ({ status: 200, body: await findTenantView(deps, request.params.tenantId!) });

export const setTenantIntakePolicy: Handler<AdminPrincipal> = async (ctx) => {
  const { intakePolicy } = bodyOf<{ intakePolicy: string }>(ctx);
  return { status: 200, body: await changeIntakePolicy(ctx.deps, actorOf(ctx), ctx.request.params.tenantId!, intakePolicy) };
};

export const getTenantAttention: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await tenantAttention(ctx.deps, ctx.principal.access, ctx.request.params.tenantId!) });
