/**
 * The city map's suspected supply faults (issue 24 §2): each dark pole whose telemetry
 * lamp-out alert is grouped with others (one circuit, or close together, dark at the
 * same time) gets a dashed ring around it, and the legend counts them. Kept apart from
 * the map page's own layers: it only adds points and a legend line.
 */
import { useApi } from '../api.js';
import { useI18n } from '../i18n.js';
import type { MapPoint } from '../map.js';
import { navigate } from '../router.js';

/** The rings, for MapView's points (before the alerts, so an alert's own marker stays on top). */
export function useSupplyFaultPoints(tenantId: string | null): MapPoint[] {
  const { t } = useI18n();
  const faults = useApi('listSupplyFaults', tenantId ? { path: { tenantId } } : null, { refreshInterval: 60_000 });
  return (faults.data?.items ?? []).map((f) => ({
    id: `supply-${f.alertId}`,
    lat: f.latitude,
    lon: f.longitude,
    kind: 'supply-fault' as const,
    label: t('dup.map.marker', { number: f.alertNumber, code: f.poleCode }),
    onClick: () => navigate(`/alerts/${f.alertId}`),
  }));
}

export function SupplyFaultLegend({ count }: { count: number }) {
  const { t } = useI18n();
  if (count === 0) return null;
  return (
    <li data-testid="supply-fault-legend">
      <span class="dot dot-supply-fault" aria-hidden="true" /> {t('dup.map.legend')} ({count})
    </li>
  );
}
