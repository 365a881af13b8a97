/**
 * The city map's pole layer: every pole of the city in view, at every zoom, from
 * GET /tenants/{tenantId}/map. Cells are drawn as a ring split by state with the count
 * in the middle; from zoom 17, when few, the poles themselves as dots. Colours come
 * from STATE_COLOURS only, so the legend and the markers cannot disagree. Self-contained:
 * it draws on the enclosing MapView's Leaflet map through its own layer group.
 */
import L from 'leaflet';
import { useEffect } from 'preact/hooks';
import { useApi, type Output } from './api.js';
import { useI18n } from './i18n.js';
import { useLeafletMap } from './map.js';

export type PoleMapState = 'alert' | 'order' | 'off' | 'unknown' | 'ok';
export const POLE_MAP_STATES: readonly PoleMapState[] = ['alert', 'order', 'off', 'unknown', 'ok'];

/** Fill and border of each state, for the markers and the legend. */
export const STATE_COLOURS: Record<PoleMapState, { fill: string; border: string }> = {
  alert: { fill: '#e8590c', border: '#7a2e00' },
  order: { fill: '#1c7ed6', border: '#0b3d91' },
  off: { fill: '#c92a2a', border: '#5c0000' },
  unknown: { fill: '#adb5bd', border: '#495057' },
  ok: { fill: '#2f9e44', border: '#0b4d1e' },
};

export type CityMapData = Output<'getCityMap'>;
export type CityMapCell = CityMapData['cells'][number];
export type CityMapPole = CityMapData['poles'][number];

export interface PoleFilters {
  priority?: string;
  reason?: string;
  team?: string;
  overdue?: boolean;
  telegestor?: string;
}

export interface PoleLayerProps {
  tenantId: string;
  /** The view: `south,west,north,east` and zoom (from MapView's onView). */
  view: { bbox: string; zoom: number } | null;
  filters: PoleFilters;
  onSelectPole: (pole: CityMapPole) => void;
  onSelectCell: (cell: CityMapCell) => void;
  /** The answer for the view, for the legend's counts. */
  onData?: (data: CityMapData | undefined, error: unknown) => void;
  /** The words of a marker's tooltip (plain text). */
  describeCell: (cell: CityMapCell) => string;
  describePole: (pole: CityMapPole) => string;
}

/** A ring split by state (a conic gradient) around the count. */
function cellIcon(cell: CityMapCell): L.DivIcon {
  const size = Math.round(Math.min(64, 30 + Math.log10(Math.max(cell.count, 1)) * 8));
  let from = 0;
  const stops: string[] = [];
  for (const s of POLE_MAP_STATES) {
    const n = cell.states[s];
    if (n === 0) continue;
    const to = from + (n / cell.count) * 360;
    stops.push(`${STATE_COLOURS[s].fill} ${from.toFixed(2)}deg ${to.toFixed(2)}deg`);
    from = to;
  }
  const el = document.createElement('div');
  el.className = 'pole-cluster';
  el.style.width = el.style.height = `${size}px`;
  el.style.background = `conic-gradient(${stops.join(', ')})`;
  const count = document.createElement('span');
  count.textContent = cell.count >= 10_000 ? `${Math.round(cell.count / 1000)}k` : String(cell.count);
  el.appendChild(count);
  el.dataset.count = String(cell.count);
  for (const s of POLE_MAP_STATES) el.dataset[s] = String(cell.states[s]);
  return L.divIcon({ html: el, className: 'pole-cluster-icon', iconSize: [size, size] });
}

export function PoleLayer({ tenantId, view, filters, onSelectPole, onSelectCell, onData, describeCell, describePole }: PoleLayerProps) {
  const map = useLeafletMap();
  // The markers' words (describeCell, describePole) are written again when the language changes.
  const { lang } = useI18n();
  // `filters` holds only the filters set (the page drops empty ones).
  const answer = useApi('getCityMap', view ? { path: { tenantId }, query: { zoom: view.zoom, bbox: view.bbox, ...(filters as Record<string, never>) } } : null, { keepPreviousData: true, refreshInterval: 60_000 });
  const data = answer.data;

  useEffect(() => {
    onData?.(data, answer.error);
  }, [data, answer.error]);

  useEffect(() => {
    if (!map || !data) return;
    const group = L.layerGroup().addTo(map);
    for (const cell of data.cells) {
      const marker = L.marker([cell.latitude, cell.longitude], { icon: cellIcon(cell), keyboard: true, title: describeCell(cell), alt: describeCell(cell) });
      marker.on('click', (e: L.LeafletMouseEvent) => {
        L.DomEvent.stopPropagation(e);
        onSelectCell(cell);
      });
      marker.addTo(group);
    }
    for (const pole of data.poles) {
      const colour = STATE_COLOURS[pole.state];
      const marker = L.circleMarker([pole.latitude, pole.longitude], { radius: 7, color: colour.border, fillColor: colour.fill, fillOpacity: 0.95, weight: 2, className: `marker pole-dot pole-dot-${pole.state}` });
      const tip = document.createElement('span');
      tip.textContent = describePole(pole);
      marker.bindTooltip(tip);
      marker.on('click', (e: L.LeafletMouseEvent) => {
        L.DomEvent.stopPropagation(e);
        onSelectPole(pole);
      });
      marker.addTo(group);
    }
    return () => {
      group.remove();
    };
  }, [map, data, lang]);

  return null;
}
