/**
 * The city at a glance: Pending alerts and open orders with coordinates, and, once
 * zoomed in far enough, the poles in view with their telegestor state. Poles come from
 * a bounding-box query with a limit, never the whole set (a city has a million). A pole
 * opens its page; `?at=lat,lon` opens the map there.
 */
import { useState } from 'preact/hooks';
import { useApi } from '../api.js';
import { useI18n } from '../i18n.js';
import { MapView, type MapPoint } from '../map.js';
import { navigate, useLocation } from '../router.js';
import { useSession } from '../session.js';
import { LoadError, Page } from '../ui.js';
import { SupplyFaultLegend, useSupplyFaultPoints } from './map-supply-faults.js';

/** Poles appear from this zoom on (a few streets in view). */
const POLE_ZOOM = 16;
const POLE_LIMIT = 500;
const POLE_KIND = { online: 'pole-online', off: 'pole-offline', unknown: 'pole-unknown' } as const;

export function MapPage() {
  const { t } = useI18n();
  const { tenantId } = useSession();
  // `?at=lat,lon` (from a pole's page): open there, close enough to see the poles.
  const at = (useLocation().query.get('at') ?? '').split(',').map(Number);
  const focus: [number, number] | null = at.length === 2 && at.every(Number.isFinite) ? [at[0]!, at[1]!] : null;
  const pending = useApi('listAlerts', { query: { tenantId, status: 'Pending', pageSize: 500 } }, { refreshInterval: 60_000 });
  const linked = useApi('listAlerts', { query: { tenantId, status: 'Linked', pageSize: 500 } }, { refreshInterval: 60_000 });
  const city = useApi('getTenant', { path: { tenantId } });
  const [view, setView] = useState<{ bbox: string; zoom: number } | null>(null);
  const showPoles = view !== null && view.zoom >= POLE_ZOOM;
  const poles = useApi('listMapPoles', showPoles ? { path: { tenantId }, query: { bbox: view.bbox, limit: POLE_LIMIT } } : null, { keepPreviousData: true });
  const supplyFaults = useSupplyFaultPoints(tenantId);
  const points: MapPoint[] = [...supplyFaults];
  if (showPoles) {
    for (const p of poles.data?.items ?? []) {
      const code = p.code;
      points.push({ id: p.id, lat: p.latitude, lon: p.longitude, kind: POLE_KIND[p.telegestorState], label: `${p.code} · ${t(`pole.${p.telegestorState}`)}`, onClick: () => navigate(`/poles/${encodeURIComponent(code)}`) });
    }
  }
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
        <li>
          <span class="dot dot-pole" aria-hidden="true" /> {showPoles ? `${t('map.poles')} (${poles.data?.items.length ?? '…'})` : t('map.zoomForPoles')}
          {showPoles && poles.data?.truncated ? ` — ${t('map.truncated')}` : ''}
        </li>
        <SupplyFaultLegend count={supplyFaults.length} />
      </ul>
      <MapView
        points={points}
        label={t('map.title')}
        class="map-tall"
        fit={focus === null}
        {...(focus ? { center: focus } : {})}
        zoom={focus ? POLE_ZOOM + 1 : 13}
        maxFitZoom={POLE_ZOOM - 1}
        extent={city.data?.extent ?? null}
        onView={(b, zoom) => setView({ bbox: b.map((x) => x.toFixed(5)).join(','), zoom })}
      />
    </Page>
  );
}
