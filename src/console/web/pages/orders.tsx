/**
 * Service orders of the current city as a board (one column per status) or a table.
 * The orders come from the alerts linked to them (each alert names its order).
 */
import { useApi } from '../api.js';
import { useI18n } from '../i18n.js';
import { Link, navigate, useLocation } from '../router.js';
import { useSession } from '../session.js';
import { LoadError, Loading, Page, StatusBadge, Table } from '../ui.js';

const STATUSES = ['OPEN', 'ASSIGNED', 'IN_PROGRESS', 'COMPLETED', 'CANCELLED'] as const;

interface OrderRow {
  id: string;
  number: string;
  status: string;
  alerts: { id: string; alertNumber: number; description: string; partner: string }[];
}

export function OrdersPage() {
  const { t } = useI18n();
  const { tenantId } = useSession();
  const { query } = useLocation();
  const view = query.get('view') === 'table' ? 'table' : 'board';
  const linked = useApi('listAlerts', { query: { tenantId, status: 'Linked', pageSize: 500 } }, { refreshInterval: 30_000 });
  const resolved = useApi('listAlerts', { query: { tenantId, status: 'Resolved', pageSize: 100 } });
  const error = linked.error ?? resolved.error;
  const orders = new Map<string, OrderRow>();
  for (const a of [...(linked.data?.items ?? []), ...(resolved.data?.items ?? [])]) {
    if (!a.serviceOrder) continue;
    const row: OrderRow = orders.get(a.serviceOrder.id) ?? { id: a.serviceOrder.id, number: a.serviceOrder.number, status: a.serviceOrder.status, alerts: [] };
    row.alerts.push({ id: a.id, alertNumber: a.alertNumber, description: a.description, partner: a.partner.code });
    orders.set(row.id, row);
  }
  const rows = [...orders.values()].sort((x, y) => y.number.localeCompare(x.number));
  return (
    <Page
      title={t('orders.title')}
      actions={
        <div class="segmented" role="group" aria-label={t('orders.title')}>
          <button type="button" aria-pressed={view === 'board'} onClick={() => navigate('/orders')}>
            {t('orders.board')}
          </button>
          <button type="button" aria-pressed={view === 'table'} onClick={() => navigate('/orders?view=table')}>
            {t('orders.table')}
          </button>
        </div>
      }
    >
      {error ? <LoadError error={error} /> : null}
      {!linked.data && !error ? <Loading /> : null}
      {linked.data && rows.length === 0 ? <p class="empty">{t('orders.empty')}</p> : null}
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
                    <span class="card-text">{r.alerts[0]?.description}</span>
                    <span class="muted small">{r.alerts.map((a) => `#${a.alertNumber}`).join(' ')}</span>
                  </Link>
                ))}
            </section>
          ))}
        </div>
      ) : null}
      {rows.length > 0 && view === 'table' ? (
        <Table testid="orders-table" headers={[t('col.number'), t('col.status'), t('col.description'), t('col.partner')]}>
              {rows.map((r) => (
                <tr key={r.id}>
                  <td>
                    <Link to={`/orders/${r.id}`}>{r.number}</Link>
                  </td>
                  <td>
                    <StatusBadge status={r.status} />
                  </td>
                  <td>{r.alerts[0]?.description}</td>
                  <td>{[...new Set(r.alerts.map((a) => a.partner))].join(', ')}</td>
                </tr>
              ))}
        </Table>
      ) : null}
    </Page>
  );
}
