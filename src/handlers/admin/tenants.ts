import type { AlertGrouping } from '../../../generated/admin/types.gen.js';
import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { changeIntakePolicy, createTenantAs, listVisibleTenants, showTenant, tenantView, type CreateTenantInput } from '../../services/tenants/index.js';
import { searchPlaces, setTenantExtent as setExtent, type SetExtentInput } from '../../services/city-extent/index.js';
import { getAlertGrouping, setAlertGrouping, supplyFaultMarkers, tenantAttention } from '../../services/operations/index.js';
import { actorOf, bodyOf, queryOf } from './context.js';

export const listTenants: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: { items: await listVisibleTenants(ctx.deps, ctx.principal.access) } });

export const createTenant: Handler<AdminPrincipal> = async (ctx) => {
  const created = await createTenantAs(ctx.deps, actorOf(ctx), bodyOf<CreateTenantInput>(ctx));
  return { status: 201, body: created, headers: { location: `/api/admin/tenants/${created.id}` } };
};

export const getTenant: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await showTenant(ctx.deps, ctx.principal.access, ctx.request.params.tenantId!) });

export const setTenantIntakePolicy: Handler<AdminPrincipal> = async (ctx) => {
  const { intakePolicy } = bodyOf<{ intakePolicy: string }>(ctx);
  return { status: 200, body: await changeIntakePolicy(ctx.deps, actorOf(ctx), ctx.request.params.tenantId!, intakePolicy) };
};

export const getTenantAttention: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await tenantAttention(ctx.deps, ctx.principal.access, ctx.request.params.tenantId!) });

export const setTenantExtent: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: tenantView(await setExtent(ctx.deps, actorOf(ctx), ctx.request.params.tenantId!, bodyOf<SetExtentInput>(ctx))),
});

export const searchTenantPlaces: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await searchPlaces(ctx.deps, ctx.principal.access, ctx.request.params.tenantId!, queryOf(ctx, 'q') ?? '', ctx.lang, ctx.signal),
});

export const getTenantAlertGrouping: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await getAlertGrouping(ctx.deps, ctx.principal.access, ctx.request.params.tenantId!) });

export const setTenantAlertGrouping: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await setAlertGrouping(ctx.deps, actorOf(ctx), ctx.request.params.tenantId!, bodyOf<AlertGrouping>(ctx)),
});

export const listSupplyFaults: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await supplyFaultMarkers(ctx.deps, ctx.principal.access, ctx.request.params.tenantId!) });
