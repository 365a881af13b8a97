/**
 * The city map: every pole of the city at every zoom (the pole layer: clusters counted
 * by state on the server, the poles themselves once few are in view), filtered by
 * priority, reason, team, overdue and telegestor state. A click opens a preview here
 * instead of leaving the page. Zoom, position and filters live in the URL
 * (`?z=13&c=lat,lon&priority=High…`), so Back and reload keep the view; without them
 * the map opens on the city's extent. `?at=lat,lon` (from a pole's page) opens there.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { useApi } from '../api.js';
import { useI18n, type Translate } from '../i18n.js';
import { MapView, useLeafletMap, type MapPoint } from '../map.js';
import { PoleLayer, POLE_MAP_STATES, STATE_COLOURS, type CityMapCell, type CityMapData, type CityMapPole, type PoleFilters, type PoleMapState } from '../pole-layer.js';
import { Link, navigate, useLocation } from '../router.js';
import { useSession } from '../session.js';
import { Choice, LoadError, Page, StatusBadge, teamChoices } from '../ui.js';
import { SupplyFaultLegend, useSupplyFaultPoints } from './map-supply-faults.js';

const PRIORITIES = ['Critical', 'High', 'Medium', 'Low'] as const;
const DEVICE_STATES = ['off', 'unknown', 'online'] as const;
const FILTER_NAMES = ['priority', 'reason', 'team', 'overdue', 'telegestor'] as const;
/** A pole's page opens the map this close. */
const AT_ZOOM = 18;

type Selected = { kind: 'pole'; pole: CityMapPole } | { kind: 'cell'; cell: CityMapCell } | null;

function numberPair(raw: string | null): [number, number] | null {
  const v = (raw ?? '').split(',').map(Number);
  return v.length === 2 && v.every(Number.isFinite) && Math.abs(v[0]!) <= 90 && Math.abs(v[1]!) <= 180 ? [v[0]!, v[1]!] : null;
}

export function stateWord(t: Translate, s: PoleMapState): string {
  return t(`citymap.state.${s}`);
}

export function MapPage() {
  const { tenantId } = useSession();
  // Another city chosen while on the map: open that city on its own extent, with no
  // filter of the previous one (its view and team mean nothing there).
  const opened = useRef(tenantId);
  useEffect(() => {
    if (tenantId === opened.current) return;
    opened.current = tenantId;
    navigate('/map', { replace: true, keepScroll: true });
  }, [tenantId]);
  return <CityMap key={tenantId} tenantId={tenantId} fromUrl={tenantId === opened.current} />;
}

function CityMap({ tenantId, fromUrl }: { tenantId: string; fromUrl: boolean }) {
  const { t, lang } = useI18n();
  const location = useLocation();
  const query = fromUrl ? location.query : new URLSearchParams();
  // Where to open, read once: the URL's view, a pole's `at`, else the city's extent.
  const [initial] = useState(() => {
    const c = numberPair(query.get('c'));
    const z = Number(query.get('z'));
    if (c && Number.isInteger(z) && z >= 0 && z <= 19) return { center: c, zoom: z };
    const at = numberPair(query.get('at'));
    return at ? { center: at, zoom: AT_ZOOM } : null;
  });
  const filters: PoleFilters = {};
  for (const name of FILTER_NAMES) {
    const v = query.get(name);
    if (!v) continue;
    if (name === 'overdue') {
      if (v === 'true') filters.overdue = true;
    } else filters[name] = v;
  }
  const setFilter = (name: (typeof FILTER_NAMES)[number], value: string | null) => {
    const q = new URLSearchParams(window.location.search);
    if (value) q.set(name, value);
    else q.delete(name);
    setSelected(null);
    navigate(`/map?${q}`);
  };
  const city = useApi('getTenant', { path: { tenantId } });
  // The requests themselves, where they are (a citizen's request may be on no pole), and the
  // orders they became: markers over the pole layer, a page of each at most.
  const pending = useApi('listAlerts', { query: { tenantId, status: 'Pending', pageSize: 500 } }, { refreshInterval: 60_000 });
  const linked = useApi('listAlerts', { query: { tenantId, status: 'Linked', pageSize: 500 } }, { refreshInterval: 60_000 });
  const supplyFaults = useSupplyFaultPoints(tenantId);
  const points: MapPoint[] = [...supplyFaults];
  for (const a of pending.data?.items ?? []) {
    if (a.latitude === null || a.longitude === null) continue;
    points.push({ id: a.id, lat: a.latitude, lon: a.longitude, kind: 'alert', label: `#${a.alertNumber} ${a.description}`, onClick: () => navigate(`/alerts/${a.id}`) });
  }
  const orderIds = new Set<string>();
  for (const a of linked.data?.items ?? []) {
    if (!a.serviceOrder || a.latitude === null || a.longitude === null || orderIds.has(a.serviceOrder.id)) continue;
    orderIds.add(a.serviceOrder.id);
    const orderId = a.serviceOrder.id;
    points.push({ id: orderId, lat: a.latitude, lon: a.longitude, kind: 'order', label: `${a.serviceOrder.number} ${a.description}`, onClick: () => navigate(`/orders/${orderId}`) });
  }
  const teams = useApi('listTeams', { query: { tenantId } });
  const reasons = useApi('listReasons', { path: { tenantId } });
  const [view, setView] = useState<{ bbox: string; zoom: number } | null>(null);
  const [data, setData] = useState<{ answer: CityMapData | undefined; error: unknown }>({ answer: undefined, error: null });
  const [selected, setSelected] = useState<Selected>(null);
  const count = new Intl.NumberFormat(lang);
  const total = data.answer?.total;

  const describeCell = (c: CityMapCell) =>
    t('citymap.cell', { count: count.format(c.count) }) +
    POLE_MAP_STATES.filter((s) => c.states[s] > 0)
      .map((s) => `; ${stateWord(t, s)}: ${count.format(c.states[s])}`)
      .join('');
  const describePole = (p: CityMapPole) => `${p.code} · ${stateWord(t, p.state)}`;

  return (
    <Page title={t('map.title')}>
      <form class="filters" onSubmit={(e) => e.preventDefault()} data-testid="citymap-filters">
        <label>
          <span>{t('citymap.filter.priority')}</span>
          <Choice value={filters.priority ?? ''} onChange={(v) => setFilter('priority', v)} options={PRIORITIES.map((p) => ({ value: p, label: t(`priority.${p}`) }))} empty={t('citymap.filter.any')} testid="citymap-priority" />
        </label>
        <label>
          <span>{t('citymap.filter.reason')}</span>
          <Choice value={filters.reason ?? ''} onChange={(v) => setFilter('reason', v)} options={(reasons.data?.items ?? []).map((r) => ({ value: r.code, label: lang === 'en' ? r.nameEn : r.namePt }))} empty={t('citymap.filter.any')} testid="citymap-reason" />
        </label>
        <label>
          <span>{t('citymap.filter.team')}</span>
          <Choice value={filters.team ?? ''} onChange={(v) => setFilter('team', v)} options={teamChoices(teams.data?.items)} empty={t('citymap.filter.any')} testid="citymap-team" />
        </label>
        <label>
          <span>{t('citymap.filter.telegestor')}</span>
          <Choice value={filters.telegestor ?? ''} onChange={(v) => setFilter('telegestor', v)} options={DEVICE_STATES.map((s) => ({ value: s, label: t(`citymap.device.${s}`) }))} empty={t('citymap.filter.any')} testid="citymap-telegestor" />
        </label>
        <label class="check">
          <input type="checkbox" checked={filters.overdue === true} onChange={() => setFilter('overdue', filters.overdue ? null : 'true')} data-testid="citymap-overdue" />
          <span>{t('citymap.filter.overdue')}</span>
        </label>
      </form>
      {data.error ? <LoadError error={data.error as Error} /> : null}
      {pending.error || linked.error ? <LoadError error={(pending.error ?? linked.error) as Error} /> : null}
      <ul class="legend" aria-label={t('map.legend')} data-testid="citymap-legend">
        <li>
          {t('citymap.inView')} <strong data-testid="citymap-total">{total ? count.format(total.count) : '…'}</strong>
        </li>
        {POLE_MAP_STATES.map((s) => (
          <li key={s} data-state={s}>
            <span class="dot" style={{ background: STATE_COLOURS[s].fill, borderColor: STATE_COLOURS[s].border }} aria-hidden="true" /> {stateWord(t, s)}{' '}
            <span class="muted" data-testid={`citymap-count-${s}`}>
              {total ? count.format(total[s]) : '…'}
            </span>
          </li>
        ))}
        <li data-testid="citymap-requests">
          <span class="dot dot-alert" aria-hidden="true" /> {t('map.alerts')} <span class="muted">{count.format(points.filter((p) => p.kind === 'alert').length)}</span>
        </li>
        <li data-testid="citymap-orders">
          <span class="dot dot-order" aria-hidden="true" /> {t('map.orders')} <span class="muted">{count.format(orderIds.size)}</span>
        </li>
        <SupplyFaultLegend count={supplyFaults.length} />
      </ul>
      <MapView
        points={points}
        label={t('map.title')}
        class="map-tall"
        fit={false}
        {...(initial ? { center: initial.center, zoom: initial.zoom } : {})}
        maxFitZoom={16}
        extent={city.data?.extent ?? null}
        onView={(b, zoom, center) => {
          setView({ bbox: b.map((x) => x.toFixed(5)).join(','), zoom });
          if (!window.location.pathname.endsWith('/map')) return;
          // The country shown while the city's extent is still being read is not a view
          // of the operator's: kept out of the URL, or the page made again (a reload, the
          // other language) would open there and never on the city.
          if (!initial && city.data === undefined) return;
          const q = new URLSearchParams(window.location.search);
          q.delete('at');
          q.set('z', String(zoom));
          q.set('c', `${center[0].toFixed(5)},${center[1].toFixed(5)}`);
          navigate(`/map?${q}`, { replace: true, keepScroll: true });
        }}
        onMapClick={() => setSelected(null)}
        overlay={selected ? <Preview selected={selected} onClose={() => setSelected(null)} tenantId={tenantId} /> : null}
      >
        <PoleLayer
          tenantId={tenantId}
          view={view}
          filters={filters}
          onData={(answer, error) => setData({ answer, error })}
          onSelectPole={(pole) => setSelected({ kind: 'pole', pole })}
          onSelectCell={(cell) => setSelected({ kind: 'cell', cell })}
          describeCell={describeCell}
          describePole={describePole}
        />
      </MapView>
    </Page>
  );
}

/** The preview of what was clicked: a pole (its open work, a link to its page) or a cell (its counts). */
function Preview({ selected, onClose, tenantId }: { selected: NonNullable<Selected>; onClose: () => void; tenantId: string }) {
  const { t, lang } = useI18n();
  const count = new Intl.NumberFormat(lang);
  return (
    <aside class="map-preview panel" role="region" aria-label={t('citymap.preview')} data-testid="citymap-preview">
      <button type="button" class="map-preview-close" onClick={onClose} aria-label={t('citymap.preview.close')}>
        ×
      </button>
      {selected.kind === 'pole' ? (
        <PolePreview pole={selected.pole} tenantId={tenantId} />
      ) : (
        <>
          <h2>{t('citymap.cell', { count: count.format(selected.cell.count) })}</h2>
          <ul class="plain">
            {POLE_MAP_STATES.filter((s) => selected.cell.states[s] > 0).map((s) => (
              <li key={s}>
                <span class="dot" style={{ background: STATE_COLOURS[s].fill, borderColor: STATE_COLOURS[s].border }} aria-hidden="true" /> {stateWord(t, s)}: {count.format(selected.cell.states[s])}
              </li>
            ))}
          </ul>
          <ZoomToCell cell={selected.cell} onDone={onClose} />
        </>
      )}
    </aside>
  );
}

function PolePreview({ pole, tenantId }: { pole: CityMapPole; tenantId: string }) {
  const { t } = useI18n();
  const detail = useApi('getPole', { path: { tenantId, poleCode: pole.code }, query: { states: 1 } });
  const openOrders = (detail.data?.serviceOrders ?? []).filter((o) => ['OPEN', 'ASSIGNED', 'IN_PROGRESS'].includes(o.status));
  const openAlerts = (detail.data?.alerts ?? []).filter((a) => a.status === 'Pending' || a.status === 'Linked');
  return (
    <>
      <h2 data-testid="citymap-preview-code">{t('pole.title', { code: pole.code })}</h2>
      <p>{pole.address}</p>
      <p>
        <span class="dot" style={{ background: STATE_COLOURS[pole.state].fill, borderColor: STATE_COLOURS[pole.state].border }} aria-hidden="true" /> {stateWord(t, pole.state)}
      </p>
      {detail.error ? <LoadError error={detail.error} /> : null}
      {openAlerts.length > 0 ? (
        <ul class="plain" aria-label={t('pole.alerts')}>
          {openAlerts.map((a) => (
            <li key={a.id}>
              <Link to={`/alerts/${a.id}`}>{t('citymap.preview.alert', { number: a.alertNumber })}</Link> <StatusBadge status={a.status} />
            </li>
          ))}
        </ul>
      ) : null}
      {openOrders.length > 0 ? (
        <ul class="plain" aria-label={t('pole.orders')}>
          {openOrders.map((o) => (
            <li key={o.id}>
              <Link to={`/orders/${o.id}`}>{o.number}</Link> <StatusBadge status={o.status} />
            </li>
          ))}
        </ul>
      ) : null}
      {detail.data && openAlerts.length === 0 && openOrders.length === 0 ? <p class="muted small">{t('citymap.preview.noWork')}</p> : null}
      <Link to={`/poles/${encodeURIComponent(pole.code)}`} class="button">
        {t('citymap.preview.open')}
      </Link>
    </>
  );
}

/** Zooms the map to a cell's box, where its poles spread out (one by one when few). */
function ZoomToCell({ cell, onDone }: { cell: CityMapCell; onDone: () => void }) {
  const { t } = useI18n();
  const map = useLeafletMap();
  const b = cell.bounds;
  return (
    <button
      type="button"
      class="secondary"
      data-testid="citymap-zoom-cell"
      onClick={() => {
        map?.fitBounds([
          [b.south, b.west],
          [b.north, b.east],
        ]);
        onDone();
      }}
    >
      {t('citymap.cell.zoom')}
    </button>
  );
}
