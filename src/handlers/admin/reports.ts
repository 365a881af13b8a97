import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler, HandlerContext } from '../../http/surface.js';
import { copyOut } from '../../db/copy-out.js';
import { StreamBody } from '../../lib/stream-body.js';
import { alertsCsv, auditCsv, periodOf, serviceOrdersCsv, tenantReport, type CsvExport } from '../../services/reports/index.js';
import { queryOf } from './context.js';

type Ctx = HandlerContext<AdminPrincipal>;

export const getTenantReport: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await tenantReport(ctx.deps, ctx.principal.access, ctx.request.params.tenantId!, periodOf({ from: queryOf(ctx, 'from'), to: queryOf(ctx, 'to') }), ctx.lang),
});

/** A CSV export streamed from PostgreSQL's COPY (see src/db/copy-out.ts). */
function csv(ctx: Ctx, e: CsvExport) {
  return {
    status: 200,
    body: new StreamBody(() => copyOut(ctx.deps.pool, e.copySql, e.prefix)),
    contentType: 'text/csv; charset=utf-8',
    headers: { 'content-disposition': `attachment; filename="${e.filename}"`, 'cache-control': 'no-store' },
  };
}

export const exportServiceOrders: Handler<AdminPrincipal> = async (ctx) => {
  const q = (name: string) => queryOf(ctx, name);
  return csv(
    ctx,
    await serviceOrdersCsv(
      ctx.deps,
      ctx.principal.access,
      ctx.request.params.tenantId!,
      { status: q('status'), team: q('team'), overdue: q('overdue'), reason: q('reason'), partner: q('partner'), text: q('text'), openedAfter: q('openedAfter'), openedBefore: q('openedBefore') },
      ctx.lang,
    ),
  );
};

export const exportAlerts: Handler<AdminPrincipal> = async (ctx) =>
  csv(ctx, await alertsCsv(ctx.deps, ctx.principal.access, ctx.request.params.tenantId!, { status: queryOf(ctx, 'status'), partner: queryOf(ctx, 'partner'), from: queryOf(ctx, 'from'), to: queryOf(ctx, 'to') }, ctx.lang));

export const exportAuditEntries: Handler<AdminPrincipal> = async (ctx) =>
  csv(ctx, await auditCsv(ctx.deps, ctx.principal.access, ctx.request.params.tenantId!, { from: queryOf(ctx, 'from'), to: queryOf(ctx, 'to') }, ctx.lang));
