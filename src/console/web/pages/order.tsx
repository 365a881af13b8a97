/** One service order: its state, the moves its status allows, linked alerts, events sent, timeline. */
import { useState } from 'preact/hooks';
import { call, useApi, useApiEach, useRefreshOn, type types } from '../api.js';
import { useAction } from '../feedback.js';
import { useI18n } from '../i18n.js';
import { MapView } from '../map.js';
import { Link } from '../router.js';
import { useSession } from '../session.js';
import { DetailActions, Field, LoadError, Loading, Page, StatusBadge, TeamSelect } from '../ui.js';
import { PlannedVisitForm } from './planned-visit.js';
import { DeliveryTable } from './partner.js';
import { Timeline } from './timeline.js';
import { cityHint, polePath } from '../refs.js';
import { isConflict, orderConflict } from '../conflict.js';
import { NavigateLinks, PlannedVisitText, TelLink } from '../crew.js';
import { OrderCompletion } from './completion.js';

export function OrderPage({ id }: { id: string }) {
  const { t, dateTime, lang } = useI18n();
  const { tenantId } = useSession();
  // The note goes with whichever move is made: Start at the top, the rest below (completing
  // has its own form, with materials and photos).
  const [note, setNote] = useState('');
  // A number resolves in the selected city (two granted cities may both have OS-2026-00001).
  const order = useApi('getServiceOrder', { path: { serviceOrderId: id }, query: cityHint(id, tenantId) });
  // The order's own city and id (the URL may name it by number), which may not be the switcher's city.
  const alerts = useApi('listAlerts', order.data ? { query: { tenantId: order.data.tenantId, serviceOrderId: order.data.id, pageSize: 100 } } : null);
  // The reason by its name in the operator's language (the code beside it, as the reasons page shows it).
  const reasons = useApi('listReasons', order.data ? { path: { tenantId: order.data.tenantId } } : null);
  if (order.error) return <LoadError error={order.error} retry={() => void order.mutate()} />;
  if (!order.data) return <Loading />;
  const o = order.data;
  const refresh = (next: types.ServiceOrder) => {
    void order.mutate({ ...o, ...next });
    void alerts.mutate();
  };
  return (
    <Page
      title={t('order.title', { number: o.number })}
      actions={<DetailActions status={o.status} back="/orders" />}
    >
      <OrderQuickActions order={o} note={note} setNote={setNote} onChanged={refresh} />
      {o.plannedVisit || ['OPEN', 'ASSIGNED', 'IN_PROGRESS'].includes(o.status) ? (
        <section class="panel" data-testid="planned-visit">
          <h2>{t('crew.visit')}</h2>
          {o.plannedVisit ? <PlannedVisitText visit={o.plannedVisit} testid="order-visit" /> : <p class="muted">{t('crew.visit.none')}</p>}
          <PlannedVisitForm order={o} onChanged={(next) => void order.mutate(next)} />
        </section>
      ) : null}
      <div class="columns">
        <div class="col-main">
          <section class="panel" data-testid="order-details">
            <dl class="fields">
              <Field label={t('alert.reason')}>
                {(() => {
                  const r = reasons.data?.items.find((x) => x.code === o.type);
                  // Not the bare code while the city's reasons are on their way.
                  if (!reasons.data && !reasons.error) return <span class="muted">{t('common.loading')}</span>;
                  return r ? (
                    <>
                      {lang === 'en' ? r.nameEn : r.namePt} <code>{o.type}</code>
                    </>
                  ) : (
                    <code>{o.type}</code>
                  );
                })()}
              </Field>
              <Field label={t('col.priority')}>{t(`priority.${o.priority}`)}</Field>
              <Field label={t('col.address')}>
                {o.address}
                {o.neighborhood ? ` — ${o.neighborhood}` : ''}
              </Field>
              <Field label={t('col.team')}>{o.team?.name}</Field>
              <Field label={t('order.pole')}>{o.poleCode ? <Link to={polePath(o.poleCode, o.tenantId, tenantId)}>{o.poleCode}</Link> : null}</Field>
              <Field label={t('order.opened')}>{dateTime(o.openedAt)}</Field>
              <Field label={t('order.closed')}>{o.closedAt ? dateTime(o.closedAt) : null}</Field>
            </dl>
          </section>
          <OrderCompletion order={o} onChanged={() => (void order.mutate(), void alerts.mutate())} />
          {o.latitude !== null && o.longitude !== null ? (
            <section class="panel">
              <MapView points={[{ id: o.id, lat: o.latitude, lon: o.longitude, kind: 'order', label: o.number }]} label={t('nav.map')} fit />
            </section>
          ) : null}
          <section class="panel">
            <h2>{t('order.alerts')}</h2>
            {alerts.error ? <LoadError error={alerts.error} /> : null}
            <ul class="plain" data-testid="order-alerts">
              {(alerts.data?.items ?? []).map((a) => (
                <li key={a.id}>
                  <Link to={`/alerts/${a.id}`}>#{a.alertNumber}</Link> <StatusBadge status={a.status} /> <span>{a.description}</span> <span class="tag">{a.partner.code}</span>
                  {a.requesterPhone ? (
                    <div class="small">
                      {t('crew.requester')}: {a.requesterName} · <TelLink phone={a.requesterPhone} />
                    </div>
                  ) : null}
                </li>
              ))}
            </ul>
          </section>
          <OrderDeliveries order={o} alerts={alerts.data?.items ?? []} />
        </div>
        <div class="col-side">
          <OrderActions order={o} note={note} setNote={setNote} onChanged={refresh} />
          <section class="panel">
            <h2>{t('alert.timeline')}</h2>
            <Timeline of="order" id={o.id} version={o.updatedAt} />
          </section>
        </div>
      </div>
    </Page>
  );
}

function OrderDeliveries({ order, alerts }: { order: types.AdminServiceOrder; alerts: types.Alert[] }) {
  const { t } = useI18n();
  const { can } = useSession();
  const { tenantId } = order;
  const partners = [...new Set(alerts.map((a) => a.partner.code))];
  const shown = partners.length > 0 && can('administer', tenantId);
  // The order's own deliveries, of every partner whose alert it carries (the delivery log is read per partner).
  const logs = useApiEach(
    'listWebhookDeliveries',
    shown ? partners.map((code) => ({ path: { code }, query: { serviceOrderId: order.id, limit: 200 } })) : null,
    { refreshInterval: 10_000 },
  );
  // A move of the order writes its events: read again when it changes.
  useRefreshOn(order.updatedAt, logs);
  if (!shown) return null;
  const mine = (logs.data ?? []).flatMap((l) => l.deliveries).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  return (
    <section class="panel">
      <h2>{t('order.deliveries')}</h2>
      {logs.error ? <LoadError error={logs.error} /> : logs.data ? <DeliveryTable deliveries={mine} withPartner={partners.length > 1} /> : <Loading />}
    </section>
  );
}

interface MoveProps {
  order: types.AdminServiceOrder;
  note: string;
  setNote: (note: string) => void;
  onChanged: (o: types.ServiceOrder) => void;
}

/** A move's run, guarded: someone else moved the order first (409) shows it as it is now and says who and when. */
function guarded(t: ReturnType<typeof useI18n>['t'], o: types.AdminServiceOrder, onChanged: (o: types.ServiceOrder) => void, reset: () => void) {
  return (run: () => Promise<types.ServiceOrder>) =>
    async (): Promise<types.ServiceOrder> => {
      try {
        return await run();
      } catch (err) {
        if (!isConflict(err)) throw err;
        reset();
        const now = await orderConflict(t, o.id, o.updatedAt);
        if (!now) throw err;
        onChanged(now.order);
        throw now.error;
      }
    };
}

/**
 * The crew's bar at the top of the order (visible without scrolling on a phone): Start,
 * the way to the completion form (one way to complete: with its note, materials and
 * photos, kept on the phone when there is no connection), and the way there (the
 * phone's maps app, the configured route planner).
 */
function OrderQuickActions({ order: o, note, setNote, onChanged }: MoveProps) {
  const { t } = useI18n();
  const { can } = useSession();
  const body = () => (note.trim() ? { note: note.trim() } : {});
  const guard = guarded(t, o, onChanged, () => {});
  const start = useAction(
    guard(() => call('startServiceOrder', { path: { serviceOrderId: o.id }, body: body() })),
    (next: types.ServiceOrder) => {
      setNote('');
      onChanged(next);
      return t('order.started');
    },
  );
  const moves = can('triage', o.tenantId);
  const located = o.latitude !== null && o.longitude !== null;
  if (!located && !(moves && (o.status === 'ASSIGNED' || o.status === 'IN_PROGRESS'))) return null;
  const toCompletion = () => {
    // The form, or the completion already waiting to be sent from this phone.
    const form = document.querySelector<HTMLElement>('[data-testid="completion-form"], [data-testid="completion-pending"]');
    form?.scrollIntoView({ block: 'start' });
    (form?.querySelector<HTMLElement>('[data-testid="completion-note"]') ?? form)?.focus({ preventScroll: true });
  };
  return (
    <div class="crew-bar" data-testid="order-quick-actions">
      {moves && o.status === 'ASSIGNED' ? (
        <button type="button" key="start" disabled={start.busy} onClick={() => void start.run()} data-testid="start">
          {t('order.start')}
        </button>
      ) : null}
      {moves && (o.status === 'ASSIGNED' || o.status === 'IN_PROGRESS') ? (
        <button type="button" key="complete" onClick={toCompletion} data-testid="complete">
          {t('order.complete')}
        </button>
      ) : null}
      {located ? <NavigateLinks lat={o.latitude!} lon={o.longitude!} /> : null}
    </div>
  );
}

function OrderActions({ order: o, note, setNote, onChanged }: MoveProps) {
  const { t } = useI18n();
  const { can } = useSession();
  const { tenantId } = o;
  const teams = useApi('listTeams', can('triage', tenantId) ? { query: { tenantId } } : null);
  const [teamId, setTeamId] = useState(o.team?.id ?? '');
  const [confirming, setConfirming] = useState(false);
  const body = () => (note.trim() ? { note: note.trim() } : {});
  const done = (message: string) => (next: types.ServiceOrder) => {
    setNote('');
    setConfirming(false);
    onChanged(next);
    return message;
  };
  const guard = guarded(t, o, onChanged, () => setConfirming(false));
  const assign = useAction(guard(() => call('assignServiceOrder', { path: { serviceOrderId: o.id }, body: { teamId, ...body() } })), done(t('order.assigned')));
  // The console never cancels without the note the partner receives.
  const cancel = useAction(guard(() => call('cancelServiceOrder', { path: { serviceOrderId: o.id }, body: { reason: note.trim() } })), done(t('order.cancelled')));
  if (!can('triage', tenantId)) return null;
  const openish = ['OPEN', 'ASSIGNED', 'IN_PROGRESS'].includes(o.status);
  if (!openish) return null;
  const busy = assign.busy || cancel.busy;
  return (
    <section class="panel" data-testid="order-actions">
      <h2>{t('order.actions')}</h2>
      <label>
        <span>{t('order.note')}</span>
        <textarea rows={3} maxLength={500} value={note} onInput={(e) => (setNote((e.target as HTMLTextAreaElement).value), setConfirming(false))} data-testid="order-note" />
      </label>
      {o.status === 'OPEN' || o.status === 'ASSIGNED' ? (
        <div class="row">
          <label>
            <span>{t('col.team')}</span>
            <TeamSelect teams={teams.data?.items ?? []} value={teamId} onChange={setTeamId} empty="—" testid="assign-team" />
          </label>
          <button type="button" disabled={busy || !teamId} onClick={() => void assign.run()} data-testid="assign">
            {t('order.assign')}
          </button>
        </div>
      ) : null}
      <div class="row">
        {confirming ? null : (
          <button type="button" class="danger" disabled={busy || !note.trim()} onClick={() => setConfirming(true)} data-testid="cancel-order">
            {t('order.cancel')}
          </button>
        )}
      </div>
      {!confirming && !note.trim() ? <p class="muted small">{t('order.cancel.needsNote')}</p> : null}
      {confirming ? (
        <div class="confirm" role="alert" data-testid="cancel-confirm">
          <p>{t('order.cancel.confirm', { number: o.number })}</p>
          <div class="row">
            <button type="button" class="danger" disabled={busy || !note.trim()} onClick={() => void cancel.run()} data-testid="cancel-yes">
              {t('order.cancel.yes')}
            </button>
            <button type="button" class="secondary" disabled={busy} onClick={() => setConfirming(false)}>
              {t('confirm.back')}
            </button>
          </div>
        </div>
      ) : null}
    </section>
  );
}
