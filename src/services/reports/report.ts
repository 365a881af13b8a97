import type { ReportBreakdown, ReportGroup, TenantReport } from '../../../generated/admin/types.gen.js';
import { backlog, repairFigures, triageFigures, type FigureRow } from '../../db/repositories/reports/report.repository.js';
import { AppError, type FieldError } from '../../lib/errors.js';
import type { Language } from '../../lib/i18n.js';
import { requireTenantRole, type AdminAccess } from '../operators/index.js';
import type { ServiceDeps } from '../deps.js';
import { findTenant } from '../../db/repositories/tenant.repository.js';
import { isUuid } from '../tenants/index.js';

const DAY_MS = 86_400_000;
/** The longest period one dashboard covers. */
const MAX_DAYS = 366;

export interface Period {
  from: Date;
  to: Date;
}

/**
 * `[from, to)` from the query: `to` defaults to now and `from` to 30 days before `to`; `from`
 * must come before `to`, at most 366 days before. 400 naming the parameter otherwise.
 */
export function periodOf(input: { from?: string; to?: string }, now = new Date()): Period {
  const errors: FieldError[] = [];
  const parse = (name: 'from' | 'to'): Date | undefined => {
    const v = input[name];
    if (v === undefined) return undefined;
    const t = Date.parse(v);
    if (Number.isNaN(t)) errors.push({ pointer: `/query/${name}`, message: 'must be a date-time' });
    return new Date(t);
  };
  const to = parse('to') ?? now;
  const from = parse('from') ?? new Date(to.getTime() - 30 * DAY_MS);
  if (errors.length === 0 && from.getTime() >= to.getTime()) errors.push({ pointer: '/query/from', message: 'must come before to' });
  if (errors.length === 0 && to.getTime() - from.getTime() > MAX_DAYS * DAY_MS) errors.push({ pointer: '/query/from', message: `must be at most ${MAX_DAYS} days before to` });
  if (errors.length > 0) throw new AppError('invalid-parameter', {}, errors);
  return { from, to };
}

function group(r: FigureRow, lang: Language): ReportGroup {
  return {
    key: r.dim === 'overall' ? null : r.key,
    label: r.dim === 'overall' ? null : lang === 'en' ? r.label_en : r.label_pt,
    count: r.count,
    p50Seconds: r.p50 === null ? null : Math.round(Number(r.p50)),
    p90Seconds: r.p90 === null ? null : Math.round(Number(r.p90)),
    onTime: r.on_time,
  };
}

const EMPTY_OVERALL: ReportGroup = { key: null, label: null, count: 0, p50Seconds: null, p90Seconds: null, onTime: null };

function breakdown(rows: FigureRow[], lang: Language, sla: boolean): ReportBreakdown {
  const pick = (dim: FigureRow['dim']) =>
    rows
      .filter((r) => r.dim === dim)
      .map((r) => group(r, lang))
      .map((g) => (sla ? { ...g, p50Seconds: null, p90Seconds: null } : { ...g, onTime: null }));
  const overall = pick('overall')[0] ?? { ...EMPTY_OVERALL, onTime: sla ? 0 : null };
  return { overall, byTeam: pick('team'), byReason: pick('reason'), byPartner: pick('partner') };
}

/**
 * The dashboard of one city (TenantReport): the backlog now, and over the period the
 * time to triage, the time to repair and SLA compliance, overall and per team, reason
 * and partner. Any role on the tenant; another city's is 404.
 */
export async function tenantReport(deps: ServiceDeps, access: AdminAccess, tenantId: string, period: Period, lang: Language): Promise<TenantReport> {
  if (!isUuid(tenantId)) throw new AppError('not-found', { resource: `tenant ${tenantId}` });
  requireTenantRole(access, tenantId, 'viewer', `tenant ${tenantId}`);
  if (!(await findTenant(deps.db, tenantId))) throw new AppError('not-found', { resource: `tenant ${tenantId}` });
  const [now, triage, repair] = await Promise.all([backlog(deps.db, tenantId), triageFigures(deps.db, tenantId, period.from, period.to), repairFigures(deps.db, tenantId, period.from, period.to)]);
  return {
    tenantId,
    from: period.from.toISOString(),
    to: period.to.toISOString(),
    generatedAt: new Date().toISOString(),
    backlog: {
      orders: now.orders.map((o) => ({ status: o.status, age: o.age as TenantReport['backlog']['orders'][number]['age'], count: o.count })),
      pendingAlerts: now.pendingAlerts.map((a) => ({ age: a.age as TenantReport['backlog']['pendingAlerts'][number]['age'], count: a.count })),
      overdueOrders: now.overdueOrders,
    },
    timeToTriage: breakdown(triage, lang, false),
    timeToRepair: breakdown(repair, lang, false),
    sla: breakdown(repair, lang, true),
  };
}
