/**
 * One alert: everything the partner sent, a map to set its location, and the triage
 * actions its state and the operator's role allow; its timeline from the audit log.
 */
import { useState } from 'preact/hooks';
import { call, useApi, type types } from '../api.js';
import { useAction } from '../feedback.js';
import { useI18n } from '../i18n.js';
import { MapView, type MapPoint } from '../map.js';
import { Link, navigate } from '../router.js';
import { useSession } from '../session.js';
import { DetailActions, Field, LoadError, Loading, Page, StatusBadge, useDurations } from '../ui.js';
import { Timeline } from './timeline.js';

export function AlertPage({ id }: { id: string }) {
  const { t } = useI18n();
  const alert = useApi('getAlert', { path: { alertId: id } });
  if (alert.error) return <LoadError error={alert.error} retry={() => void alert.mutate()} />;
  if (!alert.data) return <Loading />;
  const a = alert.data;
  return (
    <Page
      title={t('alert.title', { number: a.alertNumber })}
      actions={<DetailActions status={a.status} back="/inbox" />}
    >
      <div class="columns">
        <div class="col-main">
          <AlertDetails alert={a} />
          <AlertMap alert={a} onChanged={(next) => void alert.mutate(next, { revalidate: false })} />
        </div>
        <div class="col-side">
          <TriageActions alert={a} onChanged={(next) => void alert.mutate(next, { revalidate: false })} reload={() => void alert.mutate()} />
          <section class="panel">
            <h2>{t('alert.timeline')}</h2>
            <Timeline entityType="alert" entityId={a.id} tenantId={a.tenantId} version={a.updatedAt} />
          </section>
        </div>
      </div>
    </Page>
  );
}

function AlertDetails({ alert: a }: { alert: types.Alert }) {
  const { t, dateTime } = useI18n();
  const d = useDurations();
  const overdue = d.overdue(a.slaDueAt) && a.status === 'Pending';
  return (
    <section class="panel" data-testid="alert-details">
      <p class="description">{a.description}</p>
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
        <Field label={t('alert.phone')}>{a.requesterPhone}</Field>
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
          {a.locationSource ? <span class="muted"> ({t('alert.locationSource', { source: a.locationSource })})</span> : null}
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
        {a.cancelReason ? <Field label={t('alert.cancelReason')}>{a.cancelReason}</Field> : null}
      </dl>
    </section>
  );
}

function AlertMap({ alert: a, onChanged }: { alert: types.Alert; onChanged: (a: types.Alert) => void }) {
  const { t } = useI18n();
  const { can } = useSession();
  const [picked, setPicked] = useState<[number, number] | null>(null);
  const editable = can('triage', a.tenantId) && (a.status === 'Pending' || (a.status === 'Linked' && a.serviceOrder !== null && ['OPEN', 'ASSIGNED', 'IN_PROGRESS'].includes(a.serviceOrder.status)));
  const save = useAction(
    (lat: number, lon: number) => call('setAlertLocation', { path: { alertId: a.id }, body: { latitude: lat, longitude: lon } }),
    (next) => {
      setPicked(null);
      onChanged(next);
      return t('alert.located');
    },
  );
  const points: MapPoint[] = [];
  if (a.latitude !== null && a.longitude !== null) points.push({ id: a.id, lat: a.latitude, lon: a.longitude, kind: 'alert-selected', label: `#${a.alertNumber}` });
  if (picked) points.push({ id: 'picked', lat: picked[0], lon: picked[1], kind: 'picked', label: t('alert.setLocation', { lat: picked[0].toFixed(5), lon: picked[1].toFixed(5) }) });
  return (
    <section class="panel">
      <h2>{t('alert.map')}</h2>
      {!a.geolocated ? <p class="warn-text">{t('alert.notGeolocated')}</p> : editable ? <p class="muted small">{t('alert.map.hint')}</p> : null}
      <MapView points={points} label={t('alert.map')} onMapClick={editable ? (lat, lon) => setPicked([lat, lon]) : undefined} fit focus={picked} />
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
      {picked && editable ? (
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

function TriageActions({ alert: a, onChanged, reload }: { alert: types.Alert; onChanged: (a: types.Alert) => void; reload: () => void }) {
  const { t } = useI18n();
  const { can } = useSession();
  const teams = useApi('listTeams', can('triage', a.tenantId) ? { query: { tenantId: a.tenantId } } : null);
  const [teamId, setTeamId] = useState('');
  const [reasonCode, setReasonCode] = useState('');
  const [orderRef, setOrderRef] = useState('');
  const [note, setNote] = useState('');
  const create = useAction(
    () => call('createOrderFromAlert', { path: { alertId: a.id }, body: { ...(teamId ? { teamId } : {}), ...(reasonCode ? { reasonCode } : {}) } }),
    (order) => {
      reload();
      navigate(`/orders/${order.id}`);
      return t('alert.createOrder.done', { number: order.number });
    },
  );
  const reclassify = useAction(
    () => call('reclassifyAlert', { path: { alertId: a.id }, body: { reasonCode } }),
    (next) => {
      onChanged(next);
      return t('alert.reclassified');
    },
  );
  const link = useAction(
    () => call('linkAlert', { path: { alertId: a.id }, body: { serviceOrderId: orderRef.trim() } }),
    (next) => {
      onChanged(next);
      return t('alert.linked', { number: next.serviceOrder?.number ?? '' });
    },
  );
  const discard = useAction(
    () => call('discardAlert', { path: { alertId: a.id }, body: note.trim() ? { reason: note.trim() } : {} }),
    (next) => {
      onChanged(next);
      return t('alert.discarded');
    },
  );
  if (!can('triage', a.tenantId)) return null;
  const open = a.status === 'Pending';
  const reclassifiable = open || (a.status === 'Linked' && a.serviceOrder !== null && ['OPEN', 'ASSIGNED', 'IN_PROGRESS'].includes(a.serviceOrder.status));
  if (!open && !reclassifiable) return null;
  return (
    <section class="panel" data-testid="triage">
      <h2>{t('alert.actions')}</h2>
      <label>
        <span>{t('alert.reasonCode')}</span>
        <input value={reasonCode} placeholder={a.reasonCode} pattern="[A-Za-z0-9_.\-]{1,64}" onInput={(e) => setReasonCode((e.target as HTMLInputElement).value)} />
      </label>
      {reclassifiable ? (
        <button type="button" class="secondary" disabled={reclassify.busy || !reasonCode} onClick={() => void reclassify.run()}>
          {t('alert.reclassify')}
        </button>
      ) : null}
      {open ? (
        <>
          <hr />
          <label>
            <span>{t('alert.team')}</span>
            <select value={teamId} onChange={(e) => setTeamId((e.target as HTMLSelectElement).value)} data-testid="create-team">
              <option value="">{t('alert.team.none')}</option>
              {(teams.data?.items ?? []).map((team) => (
                <option key={team.id} value={team.id}>
                  {team.name}
                </option>
              ))}
            </select>
          </label>
          <button type="button" disabled={create.busy} onClick={() => void create.run()} data-testid="create-order">
            {t('alert.createOrder')}
          </button>
          <hr />
          <label>
            <span>{t('alert.link')}</span>
            <input value={orderRef} placeholder="OS-…" onInput={(e) => setOrderRef((e.target as HTMLInputElement).value)} data-testid="link-order" />
          </label>
          <button type="button" class="secondary" disabled={link.busy || !orderRef.trim()} onClick={() => void link.run()}>
            {t('alert.link')}
          </button>
          <hr />
          <label>
            <span>{t('alert.discard.note')}</span>
            <textarea rows={2} maxLength={500} value={note} onInput={(e) => setNote((e.target as HTMLTextAreaElement).value)} data-testid="discard-note" />
          </label>
          <button type="button" class="danger" disabled={discard.busy} onClick={() => void discard.run()} data-testid="discard">
            {t('alert.discard')}
          </button>
        </>
      ) : null}
    </section>
  );
}
