/**
 * One pole, named by its code in the selected city: where it is, its telegestor and the
 * changes of state it reported, and the orders and alerts on it, open ones first. A
 * triager creates an order for it from a Pending alert on it (the alert's
 * create-order, with this pole); without one, the map flow (an alert near the pole).
 */
import { call, useApi, type types } from '../api.js';
import { StateChart } from '../chart.js';
import { useAction } from '../feedback.js';
import { useI18n } from '../i18n.js';
import { MapView } from '../map.js';
import { Link, useLocation } from '../router.js';
import { useSession } from '../session.js';
import { Badge, Field, LoadError, Loading, Page, StatusBadge, Table } from '../ui.js';

export function PolePage({ code }: { code: string }) {
  const { t, lang } = useI18n();
  const session = useSession();
  // A link from another granted city's order names that city; else the selected one.
  const tenantId = useLocation().query.get('city') ?? session.tenantId;
  const pole = useApi('getPole', { path: { tenantId, poleCode: code }, query: { states: 100 } });
  if (pole.error) return <LoadError error={pole.error} retry={() => void pole.mutate()} />;
  if (!pole.data) return <Loading />;
  const p = pole.data;
  const number = new Intl.NumberFormat(lang, { maximumFractionDigits: 5, minimumFractionDigits: 5 });
  return (
    <Page
      title={t('pole.title', { code: p.code })}
      actions={
        <Link to="/map" class="button secondary">
          {t('common.back')}
        </Link>
      }
    >
      <div class="columns">
        <div class="col-main">
          <section class="panel" data-testid="pole-details">
            <dl class="fields">
              <Field label={t('col.address')}>{p.address}</Field>
              <Field label={t('pole.neighborhood')}>{p.neighborhood}</Field>
              <Field label={t('pole.location')}>{t('pole.coordinates', { lat: number.format(p.latitude), lon: number.format(p.longitude) })}</Field>
              <Field label={t('pole.active')}>{p.active ? t('pole.active.yes') : <Badge kind="danger">{t('pole.active.no')}</Badge>}</Field>
            </dl>
          </section>
          <Telegestor pole={p} />
          <section class="panel">
            <MapView points={[{ id: p.id, lat: p.latitude, lon: p.longitude, kind: POLE_KIND(p), label: p.code }]} label={t('pole.location')} center={[p.latitude, p.longitude]} zoom={17} fit={false} />
          </section>
        </div>
        <div class="col-side">
          <CreateOrder pole={p} onCreated={() => void pole.mutate()} />
          <section class="panel">
            <h2>{t('pole.orders')}</h2>
            {p.serviceOrders.length === 0 ? <p class="muted">{t('pole.orders.none')}</p> : null}
            <ul class="plain" data-testid="pole-orders">
              {p.serviceOrders.map((o) => (
                <OrderItem key={o.id} order={o} />
              ))}
            </ul>
          </section>
          <section class="panel">
            <h2>{t('pole.alerts')}</h2>
            {p.alerts.length === 0 ? <p class="muted">{t('pole.alerts.none')}</p> : null}
            <ul class="plain" data-testid="pole-alerts">
              {p.alerts.map((a) => (
                <li key={a.id}>
                  <Link to={`/alerts/${a.id}`}>#{a.alertNumber}</Link> <StatusBadge status={a.status} /> <span>{a.reasonName}</span> <span class="muted small">{t(`priority.${a.priority}`)}</span>
                </li>
              ))}
            </ul>
          </section>
        </div>
      </div>
    </Page>
  );
}

function POLE_KIND(p: types.PoleDetail) {
  if (!p.telegestor || p.telegestor.online === null) return 'pole-unknown' as const;
  return p.telegestor.online ? ('pole-online' as const) : ('pole-offline' as const);
}

function OrderItem({ order: o }: { order: types.PoleDetail['serviceOrders'][number] }) {
  const { t, dateTime } = useI18n();
  return (
    <li>
      <Link to={`/orders/${o.id}`}>{o.number}</Link> <StatusBadge status={o.status} /> <span class="muted small">{t(`priority.${o.priority}`)}</span>{' '}
      {o.overdue ? <Badge kind="danger">{t('time.overdue')}</Badge> : null}
      <br />
      <span class="muted small">{t('pole.opened', { when: dateTime(o.openedAt) })}</span>
    </li>
  );
}

function Telegestor({ pole: p }: { pole: types.PoleDetail }) {
  const { t, dateTime, lang } = useI18n();
  const ticks = new Intl.DateTimeFormat(lang, { day: '2-digit', month: '2-digit', hour: '2-digit', minute: '2-digit' });
  const g = p.telegestor;
  if (!g) {
    return (
      <section class="panel" data-testid="pole-telegestor">
        <h2>{t('pole.telegestor')}</h2>
        <p class="muted">{t('pole.telegestor.none')}</p>
      </section>
    );
  }
  const connection = g.online === null ? t('pole.connection.never') : g.online ? t('pole.connection.online') : g.offlineSince ? t('pole.connection.offlineSince', { since: dateTime(g.offlineSince) }) : t('pole.connection.offline');
  const relay = g.relayOn === null ? t('pole.relay.unknown') : g.relayOn ? t('pole.relay.on') : g.relayOffSince ? t('pole.relay.offSince', { since: dateTime(g.relayOffSince) }) : t('pole.relay.off');
  const levels: [string, string, string, string] = [t('pole.connection.offline'), t('pole.connection.online'), `${t('pole.states.relay')} ${t('pole.relay.off')}`, `${t('pole.states.relay')} ${t('pole.relay.on')}`];
  const points = [...p.states].reverse().map((s) => ({ at: Date.parse(s.reportedAt) / 1000, online: s.online, relayOn: s.relayOn }));
  return (
    <section class="panel" data-testid="pole-telegestor">
      <h2>{t('pole.telegestor')}</h2>
      <dl class="fields">
        <Field label={t('pole.identifier')}>
          <code>{g.identifier}</code>
        </Field>
        <Field label={t('pole.connection')}>{g.online === false ? <Badge kind="danger">{connection}</Badge> : connection}</Field>
        <Field label={t('pole.relay')}>{g.relayOn === false ? <Badge kind="danger">{relay}</Badge> : relay}</Field>
        <Field label={t('pole.lastCommunication')}>{g.lastCommunicationAt ? dateTime(g.lastCommunicationAt) : t('pole.connection.never')}</Field>
      </dl>
      <h3>{t('pole.states')}</h3>
      {points.length === 0 ? (
        <p class="muted">{t('pole.states.none')}</p>
      ) : (
        <>
          <StateChart
            points={points}
            until={Date.now() / 1000}
            levels={levels}
            connection={t('pole.states.connection')}
            relay={t('pole.states.relay')}
            timeLabel={t('pole.states.time')}
            time={(s) => dateTime(new Date(s * 1000).toISOString())}
            tick={(s) => ticks.format(new Date(s * 1000))}
            title={t('pole.states.chart')}
          />
          <div class="states">
            <Table testid="pole-states" headers={[t('pole.states.time'), t('pole.states.connection'), t('pole.states.relay')]}>
              {p.states.slice(0, 10).map((s, i) => (
                <tr key={i}>
                  <td>{dateTime(s.reportedAt)}</td>
                  <td>{s.online ? t('pole.connection.online') : t('pole.connection.offline')}</td>
                  <td>{s.relayOn === null ? t('pole.relay.unknown') : s.relayOn ? t('pole.relay.on') : t('pole.relay.off')}</td>
                </tr>
              ))}
            </Table>
          </div>
        </>
      )}
    </section>
  );
}

/**
 * An order is born from an alert (POST /alerts/{id}/create-order, with this pole): one
 * button per Pending alert on the pole; without one, the way to the map at the pole.
 */
function CreateOrder({ pole: p, onCreated }: { pole: types.PoleDetail; onCreated: () => void }) {
  const { t } = useI18n();
  const { can } = useSession();
  const pending = p.alerts.filter((a) => a.status === 'Pending');
  const create = useAction(
    (alertId: string) => call('createOrderFromAlert', { path: { alertId }, body: { poleId: p.id } }),
    (order: types.ServiceOrder) => {
      onCreated();
      return t('pole.create.created', { number: order.number });
    },
  );
  if (!can('triage', p.tenantId)) return null;
  return (
    <section class="panel" data-testid="pole-create-order">
      <h2>{t('pole.create')}</h2>
      {pending.map((a) => (
        <div class="row" key={a.id}>
          <button type="button" disabled={create.busy} onClick={() => void create.run(a.id)} data-testid="pole-create-from-alert">
            {t('pole.create.fromAlert', { number: a.alertNumber })}
          </button>
        </div>
      ))}
      {pending.length === 0 ? (
        <>
          <p class="muted small">{t('pole.create.viaMap')}</p>
          <Link to={`/map?at=${p.latitude},${p.longitude}`} class="button secondary" data-testid="pole-open-map">
            {t('pole.create.openMap')}
          </Link>
        </>
      ) : null}
    </section>
  );
}
