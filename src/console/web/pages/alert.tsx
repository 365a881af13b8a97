/**
 * One alert: everything the partner sent, a map to set its location, and the triage
 * actions its state and the operator's role allow; its timeline from the audit log.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { useSWRConfig } from 'swr';
import { ApiError, call, useApi, type Output, type types } from '../api.js';
import { useAction } from '../feedback.js';
import { useI18n } from '../i18n.js';
import { MapView, type MapPoint } from '../map.js';
import { Link } from '../router.js';
import { useSession } from '../session.js';
import { Badge, DetailActions, Field, LoadError, Loading, Page, StatusBadge, TeamSelect, useDurations } from '../ui.js';
import { Timeline } from './timeline.js';
import { AlertGroupBanner } from './alert-group.js';
import { cityHint, polePath } from '../refs.js';
import { alertConflict, isConflict } from '../conflict.js';
import { TelLink } from '../crew.js';
import { ReasonPicker } from '../reason-picker.js';
import { AfterTriageChoice, ShortcutsDialog, useAlertKeys, useTriageFlow, type TriageFlow } from './alert-flow.js';
import { CompletionRecord } from './completion.js';

export function AlertPage({ id }: { id: string }) {
  const { t } = useI18n();
  const { tenantId } = useSession();
  // A number resolves in the selected city (two granted cities may both have alert 1).
  const alert = useApi('getAlert', { path: { alertId: id }, query: cityHint(id, tenantId) });
  // The pole the operator clicked on the map: the new order's, or the linked order's.
  const [pole, setPole] = useState<types.MapPole | null>(null);
  // After an action the next Pending alert of the inbox's filter opens; keys reach each action.
  const flow = useTriageFlow(alert.data);
  const [help, setHelp] = useState(false);
  useAlertKeys(flow, () => setHelp(true));
  if (alert.error) return <LoadError error={alert.error} retry={() => void alert.mutate()} />;
  if (!alert.data) return <Loading />;
  const a = alert.data;
  return (
    <Page
      title={t('alert.title', { number: a.alertNumber })}
      actions={<DetailActions status={a.status} back="/inbox" />}
    >
      {a.status === 'Pending' ? <AlertGroupBanner alertId={a.id} onMerged={() => void alert.mutate()} /> : null}
      <div class="columns">
        <div class="col-main">
          <AlertDetails alert={a} />
          <Photos alert={a} />
          {a.serviceOrder ? <CompletionRecord orderId={a.serviceOrder.id} /> : null}
          <AlertMap alert={a} pole={pole} onPole={setPole} onChanged={(next) => void alert.mutate(next, { revalidate: false })} />
        </div>
        <div class="col-side">
          <TriageActions alert={a} pole={pole} flow={flow} onChanged={(next) => void alert.mutate(next, { revalidate: false })} reload={() => void alert.mutate()} />
          {a.status === 'Pending' ? <Duplicates alert={a} onLinked={(next) => void alert.mutate(next, { revalidate: false })} /> : null}
          <section class="panel">
            <h2>{t('alert.timeline')}</h2>
            <Timeline of="alert" id={a.id} version={a.updatedAt} />
          </section>
        </div>
      </div>
      {help ? <ShortcutsDialog onClose={() => setHelp(false)} /> : null}
    </Page>
  );
}

function AlertDetails({ alert: a }: { alert: types.Alert }) {
  const { t, dateTime } = useI18n();
  const { tenantId } = useSession();
  // The pole of the alert's order, by its code (the order carries it).
  const order = useApi('getServiceOrder', a.serviceOrder ? { path: { serviceOrderId: a.serviceOrder.id } } : null);
  const poleCode = order.data?.poleCode ?? null;
  const d = useDurations();
  const overdue = d.overdue(a.slaDueAt) && a.status === 'Pending';
  return (
    <section class="panel" data-testid="alert-details">
      <p class="description">{a.description}</p>
      {a.updatedByPartnerAt ? (
        <p class="small" data-testid="partner-updated-at">
          <Badge kind="neutral">{t('alert.partnerUpdated')}</Badge> <span class="muted">{dateTime(a.updatedByPartnerAt)}</span>
        </p>
      ) : null}
      <dl class="fields">
        <Field label={t('col.partner')}>{a.partner.code}</Field>
        <Field label={t('alert.protocol')}>{a.protocolNumber}</Field>
        <Field label={t('col.partnerReason')}>{a.partnerReasonCode}</Field>
        <Field label={t('alert.reason')}>
          {a.reasonName} <code>{a.reasonCode}</code>
        </Field>
        <Field label={t('col.priority')}>{t(`priority.${a.priority}`)}</Field>
        <Field label={t('col.sla')}>
          <span class={overdue ? 'overdue' : ''}>{dateTime(a.slaDueAt)}</span>
        </Field>
        <Field label={t('alert.requester')}>{a.requesterName}</Field>
        <Field label={t('alert.phone')}>{a.requesterPhone ? <TelLink phone={a.requesterPhone} /> : null}</Field>
        <Field label={t('alert.lampType')}>{a.lampType}</Field>
        <Field label={t('alert.address')}>
          {a.address.street}
          {a.address.number ? `, ${a.address.number}` : ''}
          {a.address.neighborhood ? ` — ${a.address.neighborhood}` : ''}
        </Field>
        <Field label={t('alert.reference')}>{a.address.reference}</Field>
        <Field label={t('alert.notes')}>{a.additionalNotes}</Field>
        <Field label={t('alert.location')}>
          {a.latitude !== null && a.longitude !== null ? `${a.latitude.toFixed(6)}, ${a.longitude.toFixed(6)}` : null}
          {a.locationSource ? <span class="muted"> ({t(`locationSource.${a.locationSource}`)})</span> : null}
        </Field>
        <Field label={t('alert.requestedAt')}>{dateTime(a.requestedAt)}</Field>
        <Field label={t('alert.receivedAt')}>{dateTime(a.createdAt)}</Field>
        <Field label={t('alert.order')}>
          {a.serviceOrder ? (
            <Link to={`/orders/${a.serviceOrder.id}`}>
              {a.serviceOrder.number} <StatusBadge status={a.serviceOrder.status} />
            </Link>
          ) : null}
        </Field>
        {poleCode ? (
          <Field label={t('alert.pole')}>
            <Link to={polePath(poleCode, a.tenantId, tenantId)}>{poleCode}</Link>
          </Field>
        ) : null}
        {a.cancelReason ? <Field label={t('alert.cancelReason')}>{a.cancelReason}</Field> : null}
      </dl>
    </section>
  );
}

const POLE_KIND = { online: 'pole-online', off: 'pole-offline', unknown: 'pole-unknown' } as const;

function AlertMap({ alert: a, pole, onPole, onChanged }: { alert: types.Alert; pole: types.MapPole | null; onPole: (p: types.MapPole | null) => void; onChanged: (a: types.Alert) => void }) {
  const { t } = useI18n();
  const { can } = useSession();
  const [picked, setPicked] = useState<[number, number] | null>(null);
  const near = a.latitude !== null && a.longitude !== null ? `${a.latitude},${a.longitude}` : null;
  const poles = useApi('listMapPoles', near ? { path: { tenantId: a.tenantId }, query: { near, radius: 200, limit: 60 } } : null);
  const editable = can('triage', a.tenantId) && (a.status === 'Pending' || (a.status === 'Linked' && a.serviceOrder !== null && ['OPEN', 'ASSIGNED', 'IN_PROGRESS'].includes(a.serviceOrder.status)));
  const city = useApi('getTenant', { path: { tenantId: a.tenantId } });
  // A location far from the city or from every pole: the API says how far, the operator confirms.
  const [doubt, setDoubt] = useState<{ detail: string; lat: number; lon: number } | null>(null);
  const [places, setPlaces] = useState<Output<'searchTenantPlaces'>['items'] | null>(null);
  const save = useAction(
    async (lat: number, lon: number, confirmOutside = false) => {
      try {
        return await call('setAlertLocation', { path: { alertId: a.id }, body: { latitude: lat, longitude: lon, ...(confirmOutside ? { confirmOutside: true } : {}) } });
      } catch (err) {
        if (err instanceof ApiError && err.code === 'location-unconfirmed') {
          setDoubt({ detail: err.detail, lat, lon });
          return null;
        }
        throw err;
      }
    },
    (next) => {
      if (!next) return;
      setDoubt(null);
      setPicked(null);
      onChanged(next);
      return t('alert.located');
    },
  );
  const find = useAction(
    (q: string) => call('searchTenantPlaces', { path: { tenantId: a.tenantId }, query: { q } }),
    (found) => {
      setPlaces(found.items);
      if (found.items[0]) setPicked([found.items[0].latitude, found.items[0].longitude]);
    },
  );
  const points: MapPoint[] = (poles.data?.items ?? []).map((p) => ({
    id: p.id,
    lat: p.latitude,
    lon: p.longitude,
    kind: pole?.id === p.id ? 'picked' : POLE_KIND[p.telegestorState],
    label: `${p.code} · ${t(`pole.${p.telegestorState}`)}${p.distanceMeters !== null ? ` · ${Math.round(p.distanceMeters)} m` : ''}`,
    onClick: editable ? () => onPole(pole?.id === p.id ? null : p) : undefined,
  }));
  if (a.latitude !== null && a.longitude !== null) points.push({ id: a.id, lat: a.latitude, lon: a.longitude, kind: 'alert-selected', label: `#${a.alertNumber}` });
  if (picked) points.push({ id: 'picked', lat: picked[0], lon: picked[1], kind: 'picked', label: t('alert.setLocation', { lat: picked[0].toFixed(5), lon: picked[1].toFixed(5) }) });
  return (
    <section class="panel">
      <h2>{t('alert.map')}</h2>
      {!a.geolocated ? <p class="warn-text">{t('alert.notGeolocated')}</p> : editable ? <p class="muted small">{t('alert.map.hint')}</p> : null}
      {poles.data ? (
        <ul class="legend" aria-label={t('map.legend')}>
          <li>
            <span class="dot dot-pole" aria-hidden="true" /> {t('pole.online')}
          </li>
          <li>
            <span class="dot dot-pole-off" aria-hidden="true" /> {t('pole.off')}
          </li>
          <li>
            <span class="dot dot-pole-unknown" aria-hidden="true" /> {t('pole.unknown')}
          </li>
        </ul>
      ) : null}
      {editable ? (
        <form
          class="row place-search"
          onSubmit={(e) => {
            e.preventDefault();
            const q = String(new FormData(e.currentTarget as HTMLFormElement).get('q') ?? '').trim();
            if (q.length >= 2) void find.run(q);
          }}
        >
          <label>
            <span>{t('alert.place.search')}</span>
            <input name="q" type="search" minLength={2} maxLength={200} required data-testid="place-query" />
          </label>
          <button type="submit" class="secondary" disabled={find.busy} data-testid="place-find">
            {t('alert.place.find')}
          </button>
        </form>
      ) : null}
      {editable && places ? (
        places.length === 0 ? (
          <p class="muted small" data-testid="places-none">
            {t('alert.place.none')}
          </p>
        ) : (
          <ul class="places" data-testid="places">
            {places.map((p) => (
              <li key={`${p.latitude},${p.longitude}`}>
                <button type="button" class="link" onClick={() => setPicked([p.latitude, p.longitude])}>
                  {p.label}
                </button>{' '}
                <span class="muted small">({t(p.source === 'pole' ? 'alert.place.pole' : 'alert.place.geocoder')})</span>
              </li>
            ))}
          </ul>
        )
      ) : null}
      <MapView
        points={points}
        label={t('alert.map')}
        onMapClick={editable ? (lat, lon) => (setDoubt(null), setPicked([lat, lon])) : undefined}
        fit
        focus={picked}
        extent={city.data?.extent ?? null}
      />
      {editable && poles.data && poles.data.items.length > 0 ? (
        <label>
          <span>{t('alert.pole')}</span>
          <select value={pole?.id ?? ''} onChange={(e) => onPole(poles.data!.items.find((p) => p.id === (e.target as HTMLSelectElement).value) ?? null)} data-testid="pole-select">
            <option value="">—</option>
            {poles.data.items.map((p) => (
              <option key={p.id} value={p.id}>
                {p.code} · {t(`pole.${p.telegestorState}`)}
                {p.distanceMeters !== null ? ` · ${Math.round(p.distanceMeters)} m` : ''}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      {editable ? (
        <details class="coords">
          <summary>{t('alert.coords')}</summary>
          <form
            class="row"
            onSubmit={(e) => {
              e.preventDefault();
              const form = new FormData(e.currentTarget as HTMLFormElement);
              const lat = Number(form.get('lat'));
              const lon = Number(form.get('lon'));
              if (Number.isFinite(lat) && Number.isFinite(lon)) setPicked([lat, lon]);
            }}
          >
            <label>
              <span>{t('alert.latitude')}</span>
              <input name="lat" type="number" step="any" min={-90} max={90} required defaultValue={a.latitude ?? ''} />
            </label>
            <label>
              <span>{t('alert.longitude')}</span>
              <input name="lon" type="number" step="any" min={-180} max={180} required defaultValue={a.longitude ?? ''} />
            </label>
            <button type="submit" class="secondary">
              {t('alert.showOnMap')}
            </button>
          </form>
        </details>
      ) : null}
      {doubt && editable ? (
        <div class="confirm" role="alert" data-testid="location-doubt">
          <p class="warn-text">{doubt.detail}</p>
          <div class="row">
            <button type="button" class="danger" disabled={save.busy} onClick={() => void save.run(doubt.lat, doubt.lon, true)} data-testid="confirm-outside">
              {t('alert.confirmOutside')}
            </button>
            <button type="button" class="secondary" onClick={() => (setDoubt(null), setPicked(null))}>
              {t('common.cancel')}
            </button>
          </div>
        </div>
      ) : null}
      {picked && editable && !doubt ? (
        <div class="row">
          <button type="button" disabled={save.busy} onClick={() => void save.run(picked[0], picked[1])} data-testid="set-location">
            {t('alert.setLocation', { lat: picked[0].toFixed(5), lon: picked[1].toFixed(5) })}
          </button>
          <button type="button" class="secondary" onClick={() => setPicked(null)}>
            {t('common.cancel')}
          </button>
        </div>
      ) : null}
    </section>
  );
}

/** Whether the focus is in a field the operator types in (then no panel takes it). */
function typingElsewhere(): boolean {
  const active = document.activeElement as HTMLElement | null;
  return Boolean(active && active.isConnected && (/^(INPUT|SELECT|TEXTAREA)$/.test(active.tagName) || active.isContentEditable));
}

function TriageActions({ alert: a, pole, flow, onChanged, reload }: { alert: types.Alert; pole: types.MapPole | null; flow: TriageFlow; onChanged: (a: types.Alert) => void; reload: () => void }) {
  const { t } = useI18n();
  const { mutate } = useSWRConfig();
  const { can } = useSession();
  const teams = useApi('listTeams', can('triage', a.tenantId) ? { query: { tenantId: a.tenantId } } : null);
  const [teamId, setTeamId] = useState('');
  const [reasonCode, setReasonCode] = useState('');
  const [orderRef, setOrderRef] = useState('');
  const [note, setNote] = useState('');
  const [confirming, setConfirming] = useState(false);
  // The page opens with the focus on this panel (not on <body> or the map), so the
  // keys and Tab start here; the confirmation takes the focus when it appears. An
  // operator already typing in a field (the search box, while the alert loaded) keeps
  // it: the panel never takes the keys from under their fingers.
  const panel = useRef<HTMLElement>(null);
  const yes = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (!typingElsewhere()) panel.current?.focus({ preventScroll: true });
  }, []);
  useEffect(() => {
    if (confirming) yes.current?.focus();
  }, [confirming]);
  const orderLink = (o: { id: string; number: string }) => ({ to: `/orders/${o.id}`, label: t('flow.openOrder', { number: o.number }) });
  // A Pending alert leaves the inbox with its action: the next one opens.
  const pending = a.status === 'Pending';
  // Someone else changed the alert first (409): show it as it is now and say who and when.
  const guard =
    <R,>(run: () => Promise<R>) =>
    async (): Promise<R> => {
      try {
        return await run();
      } catch (err) {
        if (!isConflict(err)) throw err;
        setConfirming(false);
        const now = await alertConflict(t, a.id, a.updatedAt);
        if (!now) throw err;
        onChanged(now.alert);
        throw now.error;
      }
    };
  const create = useAction(
    guard(() => call('createOrderFromAlert', { path: { alertId: a.id }, body: { ...(teamId ? { teamId } : {}), ...(reasonCode ? { reasonCode } : {}), ...(pole ? { poleId: pole.id } : {}) } })),
    (order) => {
      reload();
      flow.done(t('flow.done.order', { alert: a.alertNumber, number: order.number }), orderLink(order), true);
    },
  );
  const reclassify = useAction(
    guard(() => call('reclassifyAlert', { path: { alertId: a.id }, body: { reasonCode } })),
    (next) => {
      onChanged(next);
      flow.done(t('flow.done.reclassify', { alert: a.alertNumber, reason: next.reasonName ?? next.reasonCode }), next.serviceOrder ? orderLink(next.serviceOrder) : null, pending);
    },
  );
  const link = useAction(
    guard(() => call('linkAlert', { path: { alertId: a.id }, body: { serviceOrderId: orderRef.trim() } })),
    (next) => {
      onChanged(next);
      flow.done(t('flow.done.link', { alert: a.alertNumber, number: next.serviceOrder?.number ?? '' }), next.serviceOrder ? orderLink(next.serviceOrder) : null, true);
    },
  );
  const attach = useAction(
    () => call('setServiceOrderPole', { path: { serviceOrderId: a.serviceOrder!.id }, body: { poleId: pole!.id } }),
    (order) => {
      reload();
      // The order's pole code shown with the alert is read again.
      void mutate((key) => Array.isArray(key) && key[0] === 'getServiceOrder');
      return t('alert.poleAttached', { pole: pole?.code ?? '', number: order.number });
    },
  );
  const discard = useAction(
    // The console never discards without the note the partner receives.
    guard(() => call('discardAlert', { path: { alertId: a.id }, body: { reason: note.trim() } })),
    (next) => {
      setConfirming(false);
      setNote('');
      onChanged(next);
      flow.done(t('flow.done.discard', { alert: a.alertNumber }), null, true);
    },
  );
  if (!can('triage', a.tenantId)) return null;
  const open = a.status === 'Pending';
  const reclassifiable = open || (a.status === 'Linked' && a.serviceOrder !== null && ['OPEN', 'ASSIGNED', 'IN_PROGRESS'].includes(a.serviceOrder.status));
  if (!open && !reclassifiable) return null;
  return (
    <section class="panel triage-panel" data-testid="triage" ref={panel} tabIndex={-1} aria-labelledby="triage-title">
      <h2 id="triage-title">{t('alert.actions')}</h2>
      <p class="muted small keys-hint" data-testid="flow-keys-hint">{t('flow.keys.hint')}</p>
      <ReasonPicker tenantId={a.tenantId} value={reasonCode} onChange={setReasonCode} emptyLabel={t('flow.reason.keep', { reason: a.reasonName ?? a.reasonCode })} label={t('alert.reasonCode')} testid="reason-picker" />
      {reclassifiable ? (
        <button type="button" class="secondary" disabled={reclassify.busy || !reasonCode} onClick={() => void reclassify.run()}>
          {t('alert.reclassify')}
        </button>
      ) : null}
      {pole ? (
        <p class="picked" data-testid="picked-pole">
          {t('alert.pole')}: <strong>{pole.code}</strong> ({t(`pole.${pole.telegestorState}`)})
        </p>
      ) : null}
      {!open && pole && a.serviceOrder ? (
        <button type="button" class="secondary" disabled={attach.busy} onClick={() => void attach.run()} data-testid="attach-pole">
          {t('alert.attachPole', { number: a.serviceOrder.number })}
        </button>
      ) : null}
      {open ? (
        <>
          <hr />
          <label>
            <span>{t('alert.team')}</span>
            <TeamSelect teams={teams.data?.items ?? []} value={teamId} onChange={setTeamId} testid="create-team" />
          </label>
          <button type="button" disabled={create.busy} onClick={() => void create.run()} data-testid="create-order">
            {t('alert.createOrder')}
          </button>
          <hr />
          <label>
            <span>{t('alert.link')}</span>
            <input
              value={orderRef}
              placeholder="OS-2026-00042"
              onInput={(e) => setOrderRef((e.target as HTMLInputElement).value)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' && orderRef.trim()) void link.run();
              }}
              data-testid="link-order"
            />
          </label>
          <button type="button" class="secondary" disabled={link.busy || !orderRef.trim()} onClick={() => void link.run()} data-testid="link">
            {t('alert.link')}
          </button>
          <hr />
          <label>
            <span>{t('alert.discard.note')}</span>
            <textarea rows={2} maxLength={500} required value={note} onInput={(e) => (setNote((e.target as HTMLTextAreaElement).value), setConfirming(false))} data-testid="discard-note" />
          </label>
          {confirming ? (
            <div class="confirm" role="alert" data-testid="discard-confirm">
              <p>{t('alert.discard.confirm', { number: a.alertNumber })}</p>
              <div class="row">
                <button type="button" class="danger" ref={yes} disabled={discard.busy || !note.trim()} onClick={() => void discard.run()} data-testid="discard-yes">
                  {t('alert.discard.yes')}
                </button>
                <button type="button" class="secondary" disabled={discard.busy} onClick={() => setConfirming(false)}>
                  {t('confirm.back')}
                </button>
              </div>
            </div>
          ) : (
            <div class="row">
              <button type="button" class="danger" disabled={discard.busy || !note.trim()} onClick={() => setConfirming(true)} data-testid="discard">
                {t('alert.discard')}
              </button>
              {!note.trim() ? <span class="muted small">{t('alert.discard.needsNote')}</span> : null}
            </div>
          )}
        </>
      ) : null}
      <AfterTriageChoice />
    </section>
  );
}

/** Open orders on the same pole or within 50 m: one click links this alert to one. */
function Duplicates({ alert: a, onLinked }: { alert: types.Alert; onLinked: (a: types.Alert) => void }) {
  const { t } = useI18n();
  const { can } = useSession();
  const suggestions = useApi('getAlertDuplicates', { path: { alertId: a.id } });
  const link = useAction(
    async (orderId: string) => {
      try {
        return await call('linkAlert', { path: { alertId: a.id }, body: { serviceOrderId: orderId } });
      } catch (err) {
        if (!isConflict(err)) throw err;
        const now = await alertConflict(t, a.id, a.updatedAt);
        if (!now) throw err;
        onLinked(now.alert);
        throw now.error;
      }
    },
    (next) => {
      onLinked(next);
      return t('alert.linked', { number: next.serviceOrder?.number ?? '' });
    },
  );
  if (suggestions.error) return <LoadError error={suggestions.error} />;
  const items = suggestions.data?.items ?? [];
  if (items.length === 0) return null;
  return (
    <section class="panel" data-testid="duplicates">
      <h2>{t('alert.duplicates')}</h2>
      <ul class="plain">
        {items.map((d) => (
          <li key={d.serviceOrder.id} class="row">
            <Link to={`/orders/${d.serviceOrder.id}`}>{d.serviceOrder.number}</Link> <StatusBadge status={d.serviceOrder.status} />
            <span class="muted small">
              {d.samePole ? t('alert.samePole') : d.distanceMeters !== null ? t('alert.metres', { n: Math.round(d.distanceMeters) }) : ''}
            </span>
            <span class="small">{d.serviceOrder.address}</span>
            {can('triage', a.tenantId) ? (
              <button type="button" class="secondary small" disabled={link.busy} onClick={() => void link.run(d.serviceOrder.id)}>
                {t('alert.linkThis')}
              </button>
            ) : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

/**
 * The photos the partner sent, full size. The alert list carries them (the single-alert
 * read does not), so they come from the list searched by the alert's protocol number.
 */
function Photos({ alert: a }: { alert: types.Alert }) {
  const { t } = useI18n();
  const found = useApi('listAlerts', { query: { tenantId: a.tenantId, text: a.protocolNumber, pageSize: 20 } });
  const photos = found.data?.items.find((x) => x.id === a.id)?.photos ?? [];
  if (photos.length === 0) return null;
  return (
    <section class="panel" data-testid="photos">
      <h2>{t('alert.photos')}</h2>
      <div class="photos">
        {photos.map((p) =>
          p.success ? (
            <img key={p.id} src={`/api/admin/alerts/${a.id}/attachments/${p.id}`} alt={p.filename ?? t('alert.photos')} loading="lazy" />
          ) : (
            <p key={p.id} class="warn-text">
              {p.filename ?? p.contentType}: {p.error}
            </p>
          ),
        )}
      </div>
    </section>
  );
}
