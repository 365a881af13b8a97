/** The city at a glance: Pending alerts and open orders (through their alerts) with coordinates. */
import { useApi } from '../api.js';
import { useI18n } from '../i18n.js';
import { MapView, type MapPoint } from '../map.js';
import { navigate } from '../router.js';
import { useSession } from '../session.js';
import { LoadError, Page } from '../ui.js';

export function MapPage() {
  const { t } = useI18n();
  const { tenantId } = useSession();
  const pending = useApi('listAlerts', { query: { tenantId, status: 'Pending', pageSize: 500 } }, { refreshInterval: 60_000 });
  const linked = useApi('listAlerts', { query: { tenantId, status: 'Linked', pageSize: 500 } }, { refreshInterval: 60_000 });
  const points: MapPoint[] = [];
  for (const a of pending.data?.items ?? []) {
    if (a.latitude === null || a.longitude === null) continue;
    points.push({ id: a.id, lat: a.latitude, lon: a.longitude, kind: 'alert', label: `#${a.alertNumber} ${a.description}`, onClick: () => navigate(`/alerts/${a.id}`) });
  }
  const seen = new Set<string>();
  for (const a of linked.data?.items ?? []) {
    if (!a.serviceOrder || a.latitude === null || a.longitude === null || seen.has(a.serviceOrder.id)) continue;
    seen.add(a.serviceOrder.id);
    const orderId = a.serviceOrder.id;
    points.push({ id: orderId, lat: a.latitude, lon: a.longitude, kind: 'order', label: `${a.serviceOrder.number} ${a.description}`, onClick: () => navigate(`/orders/${orderId}`) });
  }
  const error = pending.error ?? linked.error;
  return (
    <Page title={t('map.title')}>
      {error ? <LoadError error={error} /> : null}
      <ul class="legend" aria-label={t('map.legend')}>
        <li>
          <span class="dot dot-alert" aria-hidden="true" /> {t('map.alerts')} ({points.filter((p) => p.kind === 'alert').length})
        </li>
        <li>
          <span class="dot dot-order" aria-hidden="true" /> {t('map.orders')} ({points.filter((p) => p.kind === 'order').length})
        </li>
      </ul>
      <MapView points={points} label={t('map.title')} class="map-tall" fit zoom={13} />
    </Page>
  );
}
