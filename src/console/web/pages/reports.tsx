/**
 * The council's page: the backlog now, time to triage and to repair, SLA compliance over
 * a period, per team, reason and partner; every figure links to the list behind it, and
 * the city's orders, alerts and audit log download as CSV with the same period.
 */
import { BarChart } from '../chart.js';
import { useApi, type types } from '../api.js';
import { useI18n, type MessageKey } from '../i18n.js';
import { Link, navigate, useLocation } from '../router.js';
import { useSession } from '../session.js';
import { LoadError, Loading, Page, Table } from '../ui.js';

const AGES = ['d0_1', 'd1_3', 'd3_7', 'd7_30', 'd30_plus'] as const;
const OPEN_STATUSES = ['OPEN', 'ASSIGNED', 'IN_PROGRESS'] as const;
const COLORS: Record<string, string> = { OPEN: '#c2410c', ASSIGNED: '#1d4ed8', IN_PROGRESS: '#15803d' };
const DAY = 86_400_000;
/** Where each age bucket starts and ends, in days before now (the order list's openedAfter/openedBefore). */
const AGE_DAYS: Record<(typeof AGES)[number], [number | null, number]> = { d0_1: [1, 0], d1_3: [3, 1], d3_7: [7, 3], d7_30: [30, 7], d30_plus: [null, 30] };

/** A day of the operator's calendar (their browser's zone), as the date inputs write it. */
function isoDay(d: Date): string {
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/** The local midnight that starts a day `plus` days after `day` (YYYY-MM-DD), as an instant. */
function midnight(day: string, plus = 0): string {
  const [y = 0, m = 1, d = 1] = day.split('-').map(Number);
  return new Date(y, m - 1, d + plus).toISOString();
}

export function ReportsPage() {
  const { t, lang } = useI18n();
  const { tenantId } = useSession();
  const { query } = useLocation();
  const today = new Date();
  // Both days are included, as the fields read ("from 30 days ago to today"), in the operator's own calendar.
  const dayOr = (value: string | null, otherwise: string) => (value !== null && /^\d{4}-\d{2}-\d{2}$/.test(value) ? value : otherwise);
  const from = dayOr(query.get('from'), isoDay(new Date(today.getFullYear(), today.getMonth(), today.getDate() - 30)));
  const to = dayOr(query.get('to'), isoDay(today));
  const set = (name: string, value: string) => {
    const q = new URLSearchParams(query);
    q.set(name, value);
    navigate(`/reports?${q.toString()}`, { replace: true });
  };
  const period = { from: midnight(from), to: midnight(to, 1) };
  const report = useApi('getTenantReport', { path: { tenantId }, query: period });
  const hours = (s: number | null) => (s === null ? '—' : s < 5400 ? t('time.minutes', { n: Math.round(s / 60) }) : s < 172800 ? t('time.hours', { n: Math.round(s / 3600) }) : t('time.days', { n: Math.round(s / 86400) }));
  const percent = new Intl.NumberFormat(lang, { style: 'percent', maximumFractionDigits: 0 });
  const exportUrl = (kind: string, extra = '') => `/api/admin/tenants/${tenantId}/exports/${kind}?from=${encodeURIComponent(period.from)}&to=${encodeURIComponent(period.to)}${extra}`;

  const filters = (
    <form class="filters" onSubmit={(e) => e.preventDefault()}>
      <label>
        <span>{t('reports.from')}</span>
        <input type="date" value={from} max={to} onChange={(e) => set('from', (e.target as HTMLInputElement).value)} />
      </label>
      <label>
        <span>{t('reports.to')}</span>
        <input type="date" value={to} min={from} onChange={(e) => set('to', (e.target as HTMLInputElement).value)} />
      </label>
      <div class="downloads">
        <span>{t('reports.download')}</span>
        <a class="button secondary" href={`/api/admin/tenants/${tenantId}/exports/service-orders`} download data-testid="export-orders">
          {t('reports.export.orders')}
        </a>
        <a class="button secondary" href={exportUrl('alerts')} download data-testid="export-alerts">
          {t('reports.export.alerts')}
        </a>
        <a class="button secondary" href={exportUrl('audit')} download data-testid="export-audit">
          {t('reports.export.audit')}
        </a>
      </div>
    </form>
  );
  if (report.error) return <Page title={t('reports.title')}>{filters}<LoadError error={report.error} retry={() => void report.mutate()} /></Page>;
  if (!report.data) return <Page title={t('reports.title')}>{filters}<Loading /></Page>;
  const r = report.data;
  const count = (status: string, age: string) => r.backlog.orders.find((o) => o.status === status && o.age === age)?.count ?? 0;
  const ageLink = (age: (typeof AGES)[number], status?: string) => {
    const [after, before] = AGE_DAYS[age];
    const q = new URLSearchParams({ view: 'table', status: status ?? OPEN_STATUSES.join(',') });
    if (after !== null) q.set('openedAfter', new Date(today.getTime() - after * DAY).toISOString());
    q.set('openedBefore', new Date(today.getTime() - before * DAY).toISOString());
    return `/orders?${q.toString()}`;
  };
  const groupLink = (dim: 'team' | 'reason' | 'partner', key: string | null, status?: string) => {
    const q = new URLSearchParams({ view: 'table' });
    if (key !== null) q.set(dim, key);
    if (status) q.set('status', status);
    return `/orders?${q.toString()}`;
  };
  const label = (g: types.ReportGroup, dim: 'team' | 'reason' | 'partner') => g.label ?? (dim === 'team' ? t('reports.noTeam') : '—');
  const breakdown = (title: MessageKey, b: types.ReportBreakdown, kind: 'duration' | 'sla', testid: string) => (
    <section class="panel" data-testid={testid}>
      <h2>{t(title)}</h2>
      <p class="figure">
        {kind === 'sla' ? (
          b.overall.count === 0 ? t('reports.none') : t('reports.sla.overall', { percent: percent.format((b.overall.onTime ?? 0) / b.overall.count), onTime: b.overall.onTime ?? 0, count: b.overall.count })
        ) : b.overall.count === 0 ? (
          t('reports.none')
        ) : (
          t('reports.duration.overall', { p50: hours(b.overall.p50Seconds), p90: hours(b.overall.p90Seconds), count: b.overall.count })
        )}
      </p>
      {(['team', 'reason', 'partner'] as const).map((dim) => {
        const rows = dim === 'team' ? b.byTeam : dim === 'reason' ? b.byReason : b.byPartner;
        if (rows.length === 0) return null;
        return (
          <Table key={dim} testid={`${testid}-${dim}`} headers={[t(`reports.by.${dim}` as MessageKey), t('reports.count'), ...(kind === 'sla' ? [t('reports.onTime')] : [t('reports.p50'), t('reports.p90')])]}>
            {rows.map((g) => (
              <tr key={`${dim}-${g.key ?? ''}`}>
                <td>
                  <Link to={groupLink(dim, g.key, kind === 'sla' || title === 'reports.repair' ? 'COMPLETED' : undefined)}>{label(g, dim)}</Link>
                </td>
                <td>{g.count}</td>
                {kind === 'sla' ? (
                  <td>{percent.format((g.onTime ?? 0) / Math.max(1, g.count))}</td>
                ) : (
                  <>
                    <td>{hours(g.p50Seconds)}</td>
                    <td>{hours(g.p90Seconds)}</td>
                  </>
                )}
              </tr>
            ))}
          </Table>
        );
      })}
    </section>
  );
  const ageLabels = AGES.map((a) => t(`reports.age.${a}` as MessageKey));
  return (
    <Page title={t('reports.title')}>
      {filters}
      <div class="report-grid">
        <section class="panel" data-testid="report-backlog">
          <h2>{t('reports.backlog')}</h2>
          <p class="figure">
            <Link to="/orders?view=table&overdue=true">{t('reports.overdue', { n: r.backlog.overdueOrders })}</Link>
          </p>
          <BarChart
            title={t('reports.backlog.chart')}
            categories={ageLabels}
            short={AGES.map((a) => t(`reports.age.short.${a}` as MessageKey))}
            xLabel={t('reports.age')}
            counts
            stacked
            series={OPEN_STATUSES.map((s) => ({ label: t(`status.${s}` as MessageKey), color: COLORS[s]!, values: AGES.map((a) => count(s, a)) }))}
          />
          <Table testid="report-backlog-table" headers={[t('reports.age'), ...OPEN_STATUSES.map((s) => t(`status.${s}` as MessageKey)), t('reports.pendingAlerts')]}>
            {AGES.map((a, i) => (
              <tr key={a}>
                <td>
                  <Link to={ageLink(a)}>{ageLabels[i]}</Link>
                </td>
                {OPEN_STATUSES.map((s) => (
                  <td key={s}>{count(s, a) ? <Link to={ageLink(a, s)}>{String(count(s, a))}</Link> : '0'}</td>
                ))}
                <td>
                  <Link to="/inbox">{String(r.backlog.pendingAlerts.find((p) => p.age === a)?.count ?? 0)}</Link>
                </td>
              </tr>
            ))}
          </Table>
        </section>
        {breakdown('reports.triage', r.timeToTriage, 'duration', 'report-triage')}
        <section class="panel" data-testid="report-repair-chart">
          <h2>{t('reports.repair.chart')}</h2>
          {r.timeToRepair.byTeam.length === 0 ? (
            <p>{t('reports.none')}</p>
          ) : (
            <BarChart
              title={t('reports.repair.chart')}
              categories={r.timeToRepair.byTeam.map((g) => label(g, 'team'))}
              xLabel={t('reports.by.team')}
              series={[
                { label: t('reports.p50.hours'), color: '#1d4ed8', values: r.timeToRepair.byTeam.map((g) => Math.round((g.p50Seconds ?? 0) / 360) / 10) },
                { label: t('reports.p90.hours'), color: '#93c5fd', values: r.timeToRepair.byTeam.map((g) => Math.round((g.p90Seconds ?? 0) / 360) / 10) },
              ]}
            />
          )}
        </section>
        {breakdown('reports.repair', r.timeToRepair, 'duration', 'report-repair')}
        {breakdown('reports.sla', r.sla, 'sla', 'report-sla')}
      </div>
    </Page>
  );
}
