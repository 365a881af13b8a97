import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { createOrderFromAlert as createOrder, discardAlert as discard, getAlert as findAlert, linkAlert as link, listAlerts as list, reclassifyAlert as reclassify, setAlertLocation as setLocation } from '../../services/operations/index.js';
import { actorOf, bodyOf, queryOf } from './context.js';

export const listAlerts: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await list(
    ctx.deps,
    ctx.principal.access,
    {
      tenantId: queryOf(ctx, 'tenantId')!,
      status: queryOf(ctx, 'status'),
      notGeolocated: queryOf(ctx, 'notGeolocated'),
      serviceOrderId: queryOf(ctx, 'serviceOrderId'),
      page: queryOf(ctx, 'page'),
      pageSize: queryOf(ctx, 'pageSize'),
    },
    ctx.lang,
  ),
});

export const getAlert: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await findAlert(ctx.deps, ctx.principal.access, ctx.request.params.alertId!, ctx.lang) });

export const createOrderFromAlert: Handler<AdminPrincipal> = async (ctx) => {
  const body = bodyOf<{ teamId?: string; reasonCode?: string }>(ctx);
  const order = await createOrder(ctx.deps, actorOf(ctx), ctx.request.params.alertId!, body);
  return { status: 201, body: order, headers: { location: `/api/admin/service-orders/${order.id}` } };
};

export const linkAlert: Handler<AdminPrincipal> = async (ctx) => {
  const { serviceOrderId } = bodyOf<{ serviceOrderId: string }>(ctx);
  return { status: 200, body: await link(ctx.deps, actorOf(ctx), ctx.request.params.alertId!, serviceOrderId, ctx.lang) };
};

export const discardAlert: Handler<AdminPrincipal> = async (ctx) => {
  const { reason } = bodyOf<{ reason?: string }>(ctx);
  return { status: 200, body: await discard(ctx.deps, actorOf(ctx), ctx.request.params.alertId!, reason, ctx.lang) };
};

export const reclassifyAlert: Handler<AdminPrincipal> = async (ctx) => {
  const { reasonCode } = bodyOf<{ reasonCode: string }>(ctx);
  return { status: 200, body: await reclassify(ctx.deps, actorOf(ctx), ctx.request.params.alertId!, reasonCode, ctx.lang) };
};

export const setAlertLocation: Handler<AdminPrincipal> = async (ctx) => {
  const { latitude, longitude } = bodyOf<{ latitude: number; longitude: number }>(ctx);
  return { status: 200, body: await setLocation(ctx.deps, actorOf(ctx), ctx.request.params.alertId!, latitude, longitude, ctx.lang) };
};
