import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { cityMap, mapPoles, poleByCode } from '../../services/operations/index.js';
import { queryOf } from './context.js';

export const listMapPoles: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await mapPoles(ctx.deps, ctx.principal.access, { tenantId: ctx.request.params.tenantId!, near: queryOf(ctx, 'near'), radius: queryOf(ctx, 'radius'), bbox: queryOf(ctx, 'bbox'), limit: queryOf(ctx, 'limit') }),
});

export const getPole: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await poleByCode(ctx.deps, ctx.principal.access, { tenantId: ctx.request.params.tenantId!, code: ctx.request.params.poleCode!, states: queryOf(ctx, 'states') }, ctx.lang),
});

export const getCityMap: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await cityMap(ctx.deps, ctx.principal.access, {
    tenantId: ctx.request.params.tenantId!,
    zoom: queryOf(ctx, 'zoom')!,
    bbox: queryOf(ctx, 'bbox'),
    priority: queryOf(ctx, 'priority'),
    reason: queryOf(ctx, 'reason'),
    team: queryOf(ctx, 'team'),
    overdue: queryOf(ctx, 'overdue'),
    telegestor: queryOf(ctx, 'telegestor'),
    limit: queryOf(ctx, 'limit'),
  }),
});
