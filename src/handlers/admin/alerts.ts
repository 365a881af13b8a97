import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { alertGroup, alertTimeline, bulkTriage, undoAction as undo, requireTriageTenant, type BulkTriageInput, duplicateSuggestions, createOrderFromAlert as createOrder, discardAlert as discard, getAlert as findAlert, linkAlert as link, listAlerts as list, reclassifyAlert as reclassify, setAlertLocation as setLocation } from '../../services/operations/index.js';
import { actorOf, alertOf, bodyOf, bodyRef, queryOf, undoHeaders, undoOf } from './context.js';

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
      partner: queryOf(ctx, 'partner'),
      reason: queryOf(ctx, 'reason'),
      partnerReason: queryOf(ctx, 'partnerReason'),
      overdue: queryOf(ctx, 'overdue'),
      text: queryOf(ctx, 'text'),
      sort: queryOf(ctx, 'sort'),
      page: queryOf(ctx, 'page'),
      pageSize: queryOf(ctx, 'pageSize'),
      grouped: queryOf(ctx, 'grouped'),
    },
    ctx.lang,
  ),
});

export const getAlert: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await findAlert(ctx.deps, ctx.principal.access, (await alertOf(ctx)).id, ctx.lang) });

export const createOrderFromAlert: Handler<AdminPrincipal> = async (ctx) => {
  const body = bodyOf<{ teamId?: string; reasonCode?: string; poleId?: string }>(ctx);
  const alert = await alertOf(ctx);
  const teamId = body.teamId === undefined ? undefined : await bodyRef('team', ctx, body.teamId, alert.tenantId, '/teamId', 'alert');
  const undo = undoOf(ctx);
  const order = await createOrder(ctx.deps, actorOf(ctx), alert.id, { ...body, teamId }, undo);
  return { status: 201, body: order, headers: { location: `/api/admin/service-orders/${order.id}`, ...undoHeaders(undo) } };
};

export const linkAlert: Handler<AdminPrincipal> = async (ctx) => {
  const alert = await alertOf(ctx);
  const serviceOrderId = await bodyRef('service order', ctx, bodyOf<{ serviceOrderId: string }>(ctx).serviceOrderId, alert.tenantId, '/serviceOrderId', 'alert');
  const undo = undoOf(ctx);
  const body = await link(ctx.deps, actorOf(ctx), alert.id, serviceOrderId, ctx.lang, undo);
  return { status: 200, body, headers: undoHeaders(undo) };
};

export const discardAlert: Handler<AdminPrincipal> = async (ctx) => {
  const { reason } = bodyOf<{ reason?: string }>(ctx);
  const undo = undoOf(ctx);
  const body = await discard(ctx.deps, actorOf(ctx), (await alertOf(ctx)).id, reason, ctx.lang, undo);
  return { status: 200, body, headers: undoHeaders(undo) };
};

export const reclassifyAlert: Handler<AdminPrincipal> = async (ctx) => {
  const { reasonCode } = bodyOf<{ reasonCode: string }>(ctx);
  const undo = undoOf(ctx);
  const body = await reclassify(ctx.deps, actorOf(ctx), (await alertOf(ctx)).id, reasonCode, ctx.lang, undo);
  return { status: 200, body, headers: undoHeaders(undo) };
};

export const setAlertLocation: Handler<AdminPrincipal> = async (ctx) => {
  const { latitude, longitude, confirmOutside } = bodyOf<{ latitude: number; longitude: number; confirmOutside?: boolean }>(ctx);
  return { status: 200, body: await setLocation(ctx.deps, actorOf(ctx), (await alertOf(ctx)).id, latitude, longitude, ctx.lang, confirmOutside === true) };
};

export const getAlertTimeline: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await alertTimeline(ctx.deps.db, ctx.principal.access, await alertOf(ctx)) });

export const getAlertDuplicates: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await duplicateSuggestions(ctx.deps, ctx.principal.access, await alertOf(ctx)) });

/** One action on many alerts of one tenant; team names and order numbers are resolved in that tenant. */
export const bulkTriageAlerts: Handler<AdminPrincipal> = async (ctx) => {
  const body = bodyOf<BulkTriageInput>(ctx);
  // The tenant first: references in the body are looked up only in a tenant the caller triages.
  await requireTriageTenant(ctx.deps, ctx.principal.access, body.tenantId);
  const teamId = (body.action === 'create-order' || body.action === 'assign-team') && body.teamId !== undefined ? await bodyRef('team', ctx, body.teamId, body.tenantId, '/teamId', 'alert') : body.teamId;
  const serviceOrderId = body.action === 'link' && body.serviceOrderId !== undefined ? await bodyRef('service order', ctx, body.serviceOrderId, body.tenantId, '/serviceOrderId', 'alert') : body.serviceOrderId;
  const undo = undoOf(ctx);
  const result = await bulkTriage(ctx.deps, actorOf(ctx), { ...body, teamId, serviceOrderId }, undo);
  return { status: 200, body: result, headers: undoHeaders(undo) };
};

/** Undoes an action made with `Prefer: undo` while its window lasts. */
export const undoAction: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await undo(ctx.deps, actorOf(ctx), ctx.request.params.actionId!) });

export const getAlertGroup: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await alertGroup(ctx.deps, ctx.principal.access, await alertOf(ctx)) });
