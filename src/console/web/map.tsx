/**
 * A Leaflet map. The basemap comes from LUMEN_MAP_TILE_URL; when its tiles cannot be
 * reached (a closed network) the map still shows the markers on a plain background,
 * with a scale. Markers are vector circles (no image to load); their labels are set
 * as text, never as HTML.
 */
import L from 'leaflet';
import { createContext, type ComponentChildren } from 'preact';
import { useContext, useEffect, useRef, useState } from 'preact/hooks';
import { useI18n } from './i18n.js';
import { SETTINGS } from './settings.js';

export type PointKind = 'alert' | 'alert-selected' | 'order' | 'pole' | 'pole-online' | 'pole-offline' | 'pole-unknown' | 'picked' | 'supply-fault';

export interface MapPoint {
  id: string;
  lat: number;
  lon: number;
  kind: PointKind;
  /** Shown as a tooltip; plain text. */
  label: string;
  onClick?: () => void;
}

const STYLE: Record<PointKind, L.CircleMarkerOptions> = {
  alert: { radius: 8, color: '#7a2e00', fillColor: '#e8590c', fillOpacity: 0.9, weight: 2 },
  'alert-selected': { radius: 11, color: '#4a1500', fillColor: '#e8590c', fillOpacity: 1, weight: 3 },
  order: { radius: 8, color: '#0b3d91', fillColor: '#1c7ed6', fillOpacity: 0.9, weight: 2 },
  pole: { radius: 5, color: '#333', fillColor: '#868e96', fillOpacity: 0.9, weight: 1 },
  'pole-online': { radius: 6, color: '#0b4d1e', fillColor: '#2f9e44', fillOpacity: 0.9, weight: 1 },
  'pole-offline': { radius: 6, color: '#5c0000', fillColor: '#c92a2a', fillOpacity: 0.9, weight: 1 },
  'pole-unknown': { radius: 6, color: '#333', fillColor: '#adb5bd', fillOpacity: 0.9, weight: 1 },
  picked: { radius: 10, color: '#000', fillColor: '#fab005', fillOpacity: 1, weight: 3 },
  // A suspected supply fault: a dashed ring around the dark pole (its alert's marker sits inside).
  'supply-fault': { radius: 14, color: '#862e9c', fillColor: '#862e9c', fillOpacity: 0.12, weight: 3, dashArray: '5 4' },
};

export interface MapViewProps {
  points: MapPoint[];
  /** Where to look when there is nothing to fit to. */
  center?: [number, number];
  zoom?: number;
  /** Fit the view to the points when they first arrive. */
  fit?: boolean;
  onMapClick?: (lat: number, lon: number) => void;
  /** The view moved: the south-west and north-east corners, the zoom (for bbox queries) and the centre. */
  onView?: (bbox: [number, number, number, number], zoom: number, center: [number, number]) => void;
  label: string;
  class?: string;
  /** Pan to this point whenever it changes (a point typed in, not clicked). */
  focus?: [number, number] | null;
  /** The closest fitting to the points may zoom. Default 17. */
  maxFitZoom?: number;
  /** The city's extent (Tenant.extent): where the map opens when it has no object to show. */
  extent?: { south: number; west: number; north: number; east: number } | null;
  /** Layers of their own (the city map's poles): components that draw on the map through useLeafletMap(). */
  children?: ComponentChildren;
  /** Drawn over the map, inside its frame (a preview card). */
  overlay?: ComponentChildren;
}

const MapContext = createContext<L.Map | null>(null);

/** The Leaflet map of the enclosing MapView (null until it is made), for a layer that draws its own markers. */
export function useLeafletMap(): L.Map | null {
  return useContext(MapContext);
}

/** A city with no extent yet (no poles, none configured): the whole country, never another city. */
const COUNTRY: L.LatLngBoundsExpression = [
  [-33.75, -73.99],
  [5.27, -34.79],
];

export function MapView({ points, center, zoom = 15, fit = true, onMapClick, onView, label, class: className, focus, maxFitZoom = 17, extent, children, overlay }: MapViewProps) {
  const { t } = useI18n();
  const [tilesFailed, setTilesFailed] = useState(false);
  const [made, setMade] = useState<L.Map | null>(null);
  const el = useRef<HTMLDivElement>(null);
  const map = useRef<L.Map | null>(null);
  const layer = useRef<L.LayerGroup | null>(null);
  const fitted = useRef(false);
  const handlers = useRef({ onMapClick, onView });
  handlers.current = { onMapClick, onView };

  useEffect(() => {
    if (!el.current) return;
    // No zoom animation: a page left while one runs would have Leaflet finish it on a
    // removed map (a "_leaflet_pos" error); operators gain nothing from the motion.
    const m = L.map(el.current, { zoomControl: true, attributionControl: true, keyboard: true, zoomAnimation: false });
    // The object when there is one (the points fit below), else the city, else the country.
    if (center) m.setView(center, zoom);
    else if (extent) m.fitBounds(boxOf(extent), { maxZoom: maxFitZoom });
    else m.fitBounds(COUNTRY);
    if (SETTINGS.tileUrl) {
      // A tile that does not load is left blank; the markers do not depend on it. The
      // operator is told once, so a grey plane is not taken for an empty city.
      const tiles = L.tileLayer(SETTINGS.tileUrl, { maxZoom: 19, attribution: escapeText(SETTINGS.tileAttribution), crossOrigin: false });
      tiles.once('tileerror', () => setTilesFailed(true));
      tiles.addTo(m);
    }
    L.control.scale({ imperial: false }).addTo(m);
    layer.current = L.layerGroup().addTo(m);
    m.on('click', (e: L.LeafletMouseEvent) => handlers.current.onMapClick?.(e.latlng.lat, e.latlng.lng));
    const report = () => {
      const b = m.getBounds();
      // Where the map looks, readable by tests and by anyone inspecting the page.
      const c = m.getCenter();
      el.current?.setAttribute('data-view', `${c.lat.toFixed(5)},${c.lng.toFixed(5)},${m.getZoom()}`);
      handlers.current.onView?.([b.getSouth(), b.getWest(), b.getNorth(), b.getEast()], m.getZoom(), [c.lat, c.lng]);
    };
    m.on('moveend', report);
    map.current = m;
    setMade(m);
    report();
    return () => {
      setMade(null);
      // Handlers first: stop() ends a move with a moveend, which must not report a view
      // of a map that is going away (the page already shows another URL).
      m.off();
      m.stop();
      m.remove();
      map.current = null;
    };
  }, []);

  useEffect(() => {
    const m = map.current;
    const group = layer.current;
    if (!m || !group) return;
    group.clearLayers();
    for (const p of points) {
      const marker = L.circleMarker([p.lat, p.lon], { ...STYLE[p.kind], className: `marker marker-${p.kind}` });
      // bindTooltip with a DOM node: the label is text content, never parsed as HTML.
      const tip = document.createElement('span');
      tip.textContent = p.label;
      marker.bindTooltip(tip);
      if (p.onClick) {
        const click = p.onClick;
        marker.on('click', (e: L.LeafletMouseEvent) => {
          L.DomEvent.stopPropagation(e);
          click();
        });
      }
      marker.addTo(group);
      // Markers are not in the tab order: the keys belong to the page's actions (the
      // pole select offers the same choice to the keyboard).
      const path = marker.getElement();
      path?.setAttribute('tabindex', '-1');
      path?.setAttribute('focusable', 'false');
    }
    if (fit && !fitted.current && points.length > 0) {
      fitted.current = true;
      if (points.length === 1) m.setView([points[0]!.lat, points[0]!.lon], Math.max(m.getZoom(), zoom));
      else m.fitBounds(L.latLngBounds(points.map((p) => [p.lat, p.lon] as [number, number])), { padding: [30, 30], maxZoom: maxFitZoom });
    }
  }, [points, fit]);

  useEffect(() => {
    if (center && map.current && !fitted.current) map.current.setView(center, map.current.getZoom());
  }, [center?.[0], center?.[1]]);

  // The city's extent arrives after the map opened: look at the city, unless an object is shown.
  useEffect(() => {
    if (extent && map.current && !fitted.current && !center && points.length === 0) map.current.fitBounds(boxOf(extent), { maxZoom: maxFitZoom });
  }, [extent?.south, extent?.west, extent?.north, extent?.east]);

  useEffect(() => {
    const m = map.current;
    if (focus && m && !m.getBounds().contains(focus)) m.setView(focus, m.getZoom());
  }, [focus?.[0], focus?.[1]]);

  return (
    <div class="map-frame">
      {tilesFailed ? (
        <p class="map-notice" role="status" data-testid="tiles-failed">
          {t('map.tilesFailed')}
        </p>
      ) : null}
      <div ref={el} class={`map ${className ?? ''}`} role="region" aria-label={label} data-testid="map" />
      <MapContext.Provider value={made}>
        {children}
        {overlay}
      </MapContext.Provider>
    </div>
  );
}

function boxOf(e: { south: number; west: number; north: number; east: number }): L.LatLngBoundsExpression {
  return [
    [e.south, e.west],
    [e.north, e.east],
  ];
}

/** Leaflet puts the attribution in as HTML; the operator-configured text goes in escaped. */
function escapeText(text: string): string {
  const span = document.createElement('span');
  span.textContent = text;
  return span.innerHTML;
}
