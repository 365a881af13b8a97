/**
 * Service orders of the current city as a board (one column per status) or a table,
 * filtered by status, team and overdue and ordered by the API's sorts (the table's
 * headers); the filters and the order live in the URL.
 */
import { useEffect } from 'preact/hooks';
import { useApi } from '../api.js';
import { useI18n } from '../i18n.js';
import { Link, navigate, useLocation } from '../router.js';
import { useSession } from '../session.js';
import { Badge, Choice, LoadError, Loading, Page, StatusBadge, Table, teamChoices, useDurations, type SortableHeader } from '../ui.js';
import { polePath } from '../refs.js';
import { ReasonPicker } from '../reason-picker.js';
import { warmOrders } from '../offline/cache.js';

const STATUSES = ['OPEN', 'ASSIGNED', 'IN_PROGRESS', 'COMPLETED', 'CANCELLED'] as const;
const OPEN_STATUSES = 'OPEN,ASSIGNED,IN_PROGRESS';
const SORTS = ['sla', 'priority', 'opened'] as const;
type Sort = (typeof SORTS)[number];

export function OrdersPage() {
  const { t, dateTime } = useI18n();
  const { tenantId } = useSession();
  const { query } = useLocation();
  const view = query.get('view') === 'table' ? 'table' : 'board';
  const team = query.get('team') ?? '';
  const overdue = query.get('overdue') === 'true';
  const status = query.get('status') ?? '';
  const sort: Sort = SORTS.find((x) => x === query.get('sort')) ?? 'sla';
  const set = (name: string, value: string | null) => {
    const q = new URLSearchParams(query);
    if (value) q.set(name, value);
    else q.delete(name);
    const s = q.toString();
    navigate(`/orders${s ? `?${s}` : ''}`);
  };
  const teams = useApi('listTeams', { query: { tenantId } });
  // Filters other pages link with (the reports' figures): passed on as the list takes them.
  const linked = Object.fromEntries(['reason', 'partner', 'openedAfter', 'openedBefore'].flatMap((name) => (query.get(name) ? [[name, query.get(name)!]] : [])));
  const orders = useApi('listServiceOrders', { query: { tenantId, limit: 200, sort, ...linked, ...(status ? { status } : {}), ...(team ? { team } : {}), ...(overdue ? { overdue: true } : {}) } }, { refreshInterval: 30_000 });
  const d = useDurations();
  const rows = orders.data?.items ?? [];
  // The day's orders, read now for the street: each one's page opens without a connection.
  useEffect(() => void warmOrders(rows, tenantId), [orders.data]);
  const alertsText = (n: number) => (n === 0 ? t('orders.alerts.none') : n === 1 ? t('orders.alerts.one') : t('orders.alerts.other', { n }));
  /** Overdue says so in words; time left reads as time left; a closed order shows when it closed. */
  const dueText = (r: (typeof rows)[number]) => (r.closedAt ? t('orders.closedAt', { when: dateTime(r.closedAt) }) : r.overdue ? t('orders.overdueBy', { time: d.age(r.slaDueAt) }) : t('orders.dueIn', { time: d.until(r.slaDueAt) }));
  const sortable = (label: string, by: Sort, direction: SortableHeader['direction']): SortableHeader => ({ label, sorted: sort === by, direction, onSort: () => set('sort', by === 'sla' ? null : by), testid: `orders-sort-${by}` });
  return (
    <Page
      title={t('orders.title')}
      actions={
        <div class="segmented" role="group" aria-label={t('orders.title')}>
          <button type="button" aria-pressed={view === 'board'} onClick={() => set('view', null)}>
            {t('orders.board')}
          </button>
          <button type="button" aria-pressed={view === 'table'} onClick={() => set('view', 'table')}>
            {t('orders.table')}
          </button>
        </div>
      }
    >
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          <span>{t('orders.filter.status')}</span>
          <select value={status} onChange={(e) => set('status', (e.target as HTMLSelectElement).value)} data-testid="orders-status">
            <option value="">{t('inbox.filter.all')}</option>
            <option value={OPEN_STATUSES}>{t('orders.filter.open')}</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {t(`status.${s}`)}
              </option>
            ))}
            {status && status !== OPEN_STATUSES && !(STATUSES as readonly string[]).includes(status) ? <option value={status}>{status.split(',').map((s) => ((STATUSES as readonly string[]).includes(s) ? t(`status.${s as (typeof STATUSES)[number]}`) : s)).join(', ')}</option> : null}
          </select>
        </label>
        <label>
          <span>{t('orders.filter.team')}</span>
          <Choice value={team} onChange={(v) => set('team', v)} options={teamChoices(teams.data?.items)} empty={t('orders.filter.allTeams')} />
        </label>
        <ReasonPicker tenantId={tenantId} value={query.get('reason') ?? ''} onChange={(code) => set('reason', code || null)} emptyLabel={t('inbox.filter.all')} label={t('orders.filter.reason')} testid="orders-reason" />
        <label class="check">
          <input type="checkbox" checked={overdue} onChange={() => set('overdue', overdue ? null : 'true')} />
          <span>{t('orders.filter.overdue')}</span>
        </label>
      </form>
      {orders.error ? <LoadError error={orders.error} /> : null}
      {!orders.data && !orders.error ? <Loading /> : null}
      {orders.data && rows.length === 0 ? <p class="empty">{t('orders.empty')}</p> : null}
      {rows.length > 0 && view === 'board' ? (
        <div class="board" data-testid="orders-board">
          {STATUSES.map((s) => (
            <section key={s} class="board-col" aria-label={t(`status.${s}`)}>
              <h2>
                {t(`status.${s}`)} <span class="muted">{rows.filter((r) => r.status === s).length}</span>
              </h2>
              {rows
                .filter((r) => r.status === s)
                .map((r) => (
                  <Link key={r.id} to={`/orders/${r.id}`} class="card">
                    <strong>{r.number}</strong>
                    <span class="card-text">{r.address}</span>
                    <span class="muted small">
                      {r.team?.name ?? '—'} · {alertsText(r.alertCount)} {r.overdue ? <Badge kind="danger">{t('time.overdue')}</Badge> : null}
                    </span>
                  </Link>
                ))}
            </section>
          ))}
        </div>
      ) : null}
      {rows.length > 0 && view === 'table' ? (
        <Table
          testid="orders-table"
          headers={[
            sortable(t('col.number'), 'opened', 'descending'),
            t('col.status'),
            sortable(t('col.priority'), 'priority', 'other'),
            t('col.address'),
            t('order.pole'),
            t('col.team'),
            sortable(t('col.sla'), 'sla', 'ascending'),
            t('orders.col.alerts'),
            t('col.partner'),
          ]}
        >
          {rows.map((r) => (
            <tr key={r.id}>
              <td class="nowrap">
                <Link to={`/orders/${r.id}`}>{r.number}</Link>
              </td>
              <td>
                <StatusBadge status={r.status} />
              </td>
              <td class="nowrap"><Badge kind={r.priority.toLowerCase()}>{t(`priority.${r.priority}`)}</Badge></td>
              <td>{r.address}</td>
              <td class="nowrap">{r.poleCode ? <Link to={polePath(r.poleCode, r.tenantId, tenantId)}>{r.poleCode}</Link> : '—'}</td>
              <td>{r.team?.name ?? '—'}</td>
              <td class={r.overdue ? 'overdue nowrap' : 'nowrap'} data-testid="order-due">
                {dueText(r)}
              </td>
              <td class="nowrap">{alertsText(r.alertCount)}</td>
              <td>{r.partners.join(', ')}</td>
            </tr>
          ))}
        </Table>
      ) : null}
      {orders.data && orders.data.total > rows.length ? <p class="muted small">{`${rows.length} / ${orders.data.total}`}</p> : null}
    </Page>
  );
}
