/**
 * Service orders of the current city as a board (one column per status) or a table,
 * filtered by team and overdue; the filters live in the URL.
 */
import { useApi } from '../api.js';
import { useI18n } from '../i18n.js';
import { Link, navigate, useLocation } from '../router.js';
import { useSession } from '../session.js';
import { Badge, LoadError, Loading, Page, StatusBadge, Table, useDurations } from '../ui.js';
import { polePath } from '../refs.js';

const STATUSES = ['OPEN', 'ASSIGNED', 'IN_PROGRESS', 'COMPLETED', 'CANCELLED'] as const;

export function OrdersPage() {
  const { t, dateTime } = useI18n();
  const { tenantId } = useSession();
  const { query } = useLocation();
  const view = query.get('view') === 'table' ? 'table' : 'board';
  const team = query.get('team') ?? '';
  const overdue = query.get('overdue') === 'true';
  const set = (name: string, value: string | null) => {
    const q = new URLSearchParams(query);
    if (value) q.set(name, value);
    else q.delete(name);
    const s = q.toString();
    navigate(`/orders${s ? `?${s}` : ''}`);
  };
  const teams = useApi('listTeams', { query: { tenantId } });
  // Filters other pages link with (the reports' figures): passed on as the list takes them.
  const linked = Object.fromEntries(['status', 'reason', 'partner', 'openedAfter', 'openedBefore'].flatMap((name) => (query.get(name) ? [[name, query.get(name)!]] : [])));
  const orders = useApi('listServiceOrders', { query: { tenantId, limit: 200, sort: 'sla', ...linked, ...(team ? { team } : {}), ...(overdue ? { overdue: true } : {}) } }, { refreshInterval: 30_000 });
  const d = useDurations();
  const rows = orders.data?.items ?? [];
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
          <span>{t('orders.filter.team')}</span>
          <select value={team} onChange={(e) => set('team', (e.target as HTMLSelectElement).value)}>
            <option value="">{t('inbox.filter.all')}</option>
            {(teams.data?.items ?? []).map((x) => (
              <option key={x.id} value={x.id}>
                {x.name}
              </option>
            ))}
          </select>
        </label>
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
                      {r.team?.name ?? '—'} · {r.alertCount} {r.overdue ? <Badge kind="danger">{t('time.overdue')}</Badge> : null}
                    </span>
                  </Link>
                ))}
            </section>
          ))}
        </div>
      ) : null}
      {rows.length > 0 && view === 'table' ? (
        <Table testid="orders-table" headers={[t('col.number'), t('col.status'), t('col.address'), t('order.pole'), t('col.team'), t('col.sla'), t('col.partner')]}>
          {rows.map((r) => (
            <tr key={r.id}>
              <td>
                <Link to={`/orders/${r.id}`}>{r.number}</Link>
              </td>
              <td>
                <StatusBadge status={r.status} />
              </td>
              <td>{r.address}</td>
              <td class="nowrap">{r.poleCode ? <Link to={polePath(r.poleCode, r.tenantId, tenantId)}>{r.poleCode}</Link> : '—'}</td>
              <td>{r.team?.name ?? '—'}</td>
              <td class={r.overdue ? 'overdue nowrap' : 'nowrap'}>{r.closedAt ? dateTime(r.closedAt) : d.until(r.slaDueAt)}</td>
              <td>{r.partners.join(', ')}</td>
            </tr>
          ))}
        </Table>
      ) : null}
      {orders.data && orders.data.total > rows.length ? <p class="muted small">{`${rows.length} / ${orders.data.total}`}</p> : null}
    </Page>
  );
}
