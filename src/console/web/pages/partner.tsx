/**
 * One partner (city-admin): settings, the API key (rotated with a confirmation, the
 * new key shown once with a copy button), the webhook delivery log with redelivery
 * and "send test event" (city-admin, webhook partners), and the polling link with the
 * items intake refused.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { call, useApi, type types } from '../api.js';
import { useAction, useFeedback } from '../feedback.js';
import { useI18n, type MessageKey } from '../i18n.js';
import { Link, useLocation } from '../router.js';
import { useSession } from '../session.js';
import { Badge, Field, LoadError, Loading, Page, Table } from '../ui.js';
import { AttachmentFailures } from './attachment-failures.js';
import { deliveryErrorWords, eventTypeWords, notPolledWords, pollErrorWords, rejectedProblemWords, rejectedReasonWords } from '../words.js';
import { ReasonMapping } from './reason-mapping.js';

const SCOPES = ['canCreateServiceOrders', 'canCreateAlerts', 'canReadCityData', 'canManageIntegration'] as const;

/** How long a replaced API key may keep working (seconds), as the rotation offers it. */
const KEY_OVERLAPS: readonly (readonly [number, MessageKey])[] = [
  [0, 'partner.rotate.overlap.none'],
  [3600, 'partner.rotate.overlap.hour'],
  [86_400, 'partner.rotate.overlap.day'],
  [604_800, 'partner.rotate.overlap.week'],
];

export function PartnerPage({ code }: { code: string }) {
  const { t } = useI18n();
  const [keyOverlap, setKeyOverlap] = useState(0);
  const { can } = useSession();
  const partner = useApi('getPartner', { path: { code } });
  if (partner.error) return <LoadError error={partner.error} retry={() => void partner.mutate()} />;
  if (!partner.data) return <Loading />;
  const p = partner.data;
  const admin = can('administer', p.tenantId);
  return (
    <Page
      title={t('partner.title', { code: p.code })}
      actions={
        <Link to="/partners" class="button secondary">
          {t('common.back')}
        </Link>
      }
    >
      <div class="columns">
        <div class="col-main">
          {admin ? <PartnerSettingsForm partner={p} onSaved={(next) => void partner.mutate(next, { revalidate: false })} /> : null}
          {admin ? <ReasonMapping code={p.code} tenantId={p.tenantId} /> : null}
          {/* Webhook deliveries and their redelivery are a webhook partner's; a polling partner reads its events itself. */}
          {p.transport === 'webhook' ? <Deliveries code={p.code} admin={can('triage', p.tenantId)} canSendTest={admin} /> : null}
          {p.transport === 'polling' || p.pollingUrl ? <Polling partner={p} admin={can('triage', p.tenantId)} /> : null}
          <AttachmentFailures tenantId={p.tenantId} partner={p.code} canAct={can('triage', p.tenantId)} />
        </div>
        <div class="col-side">
          {admin ? (
            <>
              <RotateSecret
                title={t('partner.rotate')}
                confirm={keyOverlap === 0 ? t('partner.rotate.confirm') : t('partner.rotate.confirmOverlap')}
                shown={t('partner.rotate.done')}
                testid="rotate-key"
                rotate={async () => (await call('rotatePartnerKey', { path: { code: p.code }, body: { overlapSeconds: keyOverlap } })).apiKey}
                onRotated={() => void partner.mutate()}
              >
                <label>
                  <span>{t('partner.rotate.overlap')}</span>
                  <select data-testid="key-overlap" value={String(keyOverlap)} onChange={(e) => setKeyOverlap(Number((e.target as HTMLSelectElement).value))}>
                    {KEY_OVERLAPS.map(([seconds, label]) => (
                      <option key={seconds} value={String(seconds)}>
                        {t(label)}
                      </option>
                    ))}
                  </select>
                </label>
              </RotateSecret>
              {p.transport === 'webhook' ? (
                <RotateSecret
                  title={t('partner.rotateSecret')}
                  confirm={t('partner.rotateSecret.confirm')}
                  shown={t('partner.rotateSecret.done')}
                  testid="rotate-secret"
                  rotate={async () => (await call('rotatePartnerWebhookSecret', { path: { code: p.code }, body: {} })).webhookSecret}
                  onRotated={() => void partner.mutate()}
                />
              ) : null}
            </>
          ) : null}
        </div>
      </div>
    </Page>
  );
}

function PartnerSettingsForm({ partner: p, onSaved }: { partner: types.Partner; onSaved: (p: types.Partner) => void }) {
  const { t, dateTime } = useI18n();
  const [enabled, setEnabled] = useState(p.enabled);
  const [scopes, setScopes] = useState<string[]>(p.scopes);
  const [transport, setTransport] = useState(p.transport);
  const [webhookUrl, setWebhookUrl] = useState(p.webhookUrl ?? '');
  const [secret, setSecret] = useState('');
  const [pollingUrl, setPollingUrl] = useState(p.pollingUrl ?? '');
  const [interval, setIntervalSeconds] = useState(String(p.pollingIntervalSeconds));
  const [pollingKey, setPollingKey] = useState('');
  const [rate, setRate] = useState(p.rateLimitPerMinute === null ? '' : String(p.rateLimitPerMinute));
  // The fields follow the transport chosen in the form: a polling partner has no webhook.
  const polling = transport === 'polling';
  const save = useAction(
    () =>
      call('updatePartner', {
        path: { code: p.code },
        body: {
          enabled,
          scopes: scopes as types.ScopeInput[],
          transport,
          ...(polling
            ? {
                pollingUrl: pollingUrl.trim() || null,
                ...(interval.trim() ? { pollingIntervalSeconds: Number(interval) } : {}),
                ...(pollingKey ? { pollingKey } : {}),
              }
            : { webhookUrl: webhookUrl.trim() || null, ...(secret ? { webhookSecret: secret } : {}) }),
          rateLimitPerMinute: rate.trim() ? Number(rate) : null,
        },
      }),
    (next) => {
      setSecret('');
      setPollingKey('');
      onSaved(next);
      return t('partner.saved');
    },
  );
  return (
    <form
      class="panel form"
      onSubmit={(e) => {
        e.preventDefault();
        void save.run();
      }}
      data-testid="partner-settings"
    >
      <h2>{t('partner.settings')}</h2>
      <dl class="fields">
        <Field label={t('partner.keyPrefix')}>
          <code>{p.keyPrefix}</code>
        </Field>
        {p.previousKey ? (
          <Field label={t('partner.previousKey')}>
            <span data-testid="previous-key">{t('partner.previousKey.until', { prefix: p.previousKey.keyPrefix, until: dateTime(p.previousKey.expiresAt) })}</span>
          </Field>
        ) : null}
        {polling ? (
          <Field label={t('partnerPolling.keySet')}>
            <span data-testid="polling-key-set">{p.pollingKeySet ? t('partnerPolling.keySet.yes') : t('partnerPolling.keySet.no')}</span>
          </Field>
        ) : (
          <Field label={t('partner.webhookSecretSet')}>{p.webhookSecretSet ? t('common.yes') : t('common.no')}</Field>
        )}
      </dl>
      <label class="check">
        <input type="checkbox" checked={enabled} onChange={() => setEnabled(!enabled)} />
        <span>{t('partner.enabled')}</span>
      </label>
      <fieldset>
        <legend>{t('partner.scopes')}</legend>
        {SCOPES.map((s) => (
          <label key={s} class="check">
            <input type="checkbox" checked={scopes.includes(s)} onChange={() => setScopes(scopes.includes(s) ? scopes.filter((x) => x !== s) : [...scopes, s])} />
            <span>{t(`scope.${s}`)}</span>
          </label>
        ))}
      </fieldset>
      <label>
        <span>{t('partner.transport')}</span>
        <select value={transport} onChange={(e) => setTransport((e.target as HTMLSelectElement).value as typeof transport)}>
          <option value="webhook">{t('partner.transport.webhook')}</option>
          <option value="polling">{t('partner.transport.polling')}</option>
        </select>
      </label>
      {polling ? (
        <>
          <label>
            <span>{t('partnerPolling.url')}</span>
            <input type="url" value={pollingUrl} onInput={(e) => setPollingUrl((e.target as HTMLInputElement).value)} data-testid="polling-url" />
          </label>
          <label>
            <span>{t('partnerPolling.interval')}</span>
            <input type="number" min={1} max={180} required value={interval} onInput={(e) => setIntervalSeconds((e.target as HTMLInputElement).value)} data-testid="polling-interval" />
          </label>
          <label>
            <span>{p.pollingKeySet ? t('partnerPolling.key.replace') : t('partnerPolling.key.set')}</span>
            <input type="password" autoComplete="new-password" maxLength={500} value={pollingKey} onInput={(e) => setPollingKey((e.target as HTMLInputElement).value)} data-testid="polling-key" />
            <span class="muted small">{t('partnerPolling.key.hint')}</span>
          </label>
        </>
      ) : (
        <>
          <label>
            <span>{t('partner.webhookUrl')}</span>
            <input type="url" value={webhookUrl} onInput={(e) => setWebhookUrl((e.target as HTMLInputElement).value)} data-testid="webhook-url" />
          </label>
          <label>
            <span>{t('partner.webhookSecret')}</span>
            <input type="password" autoComplete="new-password" minLength={16} value={secret} onInput={(e) => setSecret((e.target as HTMLInputElement).value)} />
          </label>
        </>
      )}
      <label>
        <span>{t('partner.rateLimit')}</span>
        <input type="number" min={1} value={rate} onInput={(e) => setRate((e.target as HTMLInputElement).value)} />
      </label>
      <button type="submit" disabled={save.busy}>
        {t('common.save')}
      </button>
    </form>
  );
}

/** A secret made on the server and shown once: confirm, then see it with a copy button. */
function RotateSecret({
  title,
  confirm,
  shown,
  testid,
  rotate,
  onRotated,
  children,
}: {
  title: string;
  confirm: string;
  shown: string;
  testid: string;
  rotate: () => Promise<string>;
  onRotated: () => void;
  children?: ComponentChildren;
}) {
  const { t } = useI18n();
  const feedback = useFeedback();
  const [confirming, setConfirming] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const run = useAction(rotate, (value) => {
    setConfirming(false);
    setSecret(value);
    onRotated();
  });
  return (
    <section class="panel" data-testid={testid}>
      <h2>{title}</h2>
      {secret ? (
        <div class="secret">
          <p>{shown}</p>
          <code data-testid="new-secret">{secret}</code>
          <button
            type="button"
            onClick={() =>
              navigator.clipboard.writeText(secret).then(
                () => feedback.ok(t('common.copied')),
                (err: unknown) => feedback.error(err),
              )
            }
          >
            {t('common.copy')}
          </button>
        </div>
      ) : confirming ? (
        <div>
          {children}
          <p class="warn-text">{confirm}</p>
          <div class="row">
            <button type="button" class="danger" disabled={run.busy} onClick={() => void run.run()} data-testid="rotate-confirm">
              {t('common.confirm')}
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>
              {t('common.cancel')}
            </button>
          </div>
        </div>
      ) : (
        <button type="button" class="secondary" onClick={() => setConfirming(true)} data-testid="rotate">
          {title}
        </button>
      )}
    </section>
  );
}

const DELIVERY_STATUSES = ['pending', 'failed', 'succeeded', 'dead'] as const;

/** Refresh the log every 10 s, every 2 s while a delivery in it is still open (a test event just sent shows its outcome). */
const logRefresh = (data?: { deliveries: types.WebhookDelivery[] }): number => (data?.deliveries.some((d) => d.status === 'pending' || d.status === 'failed') ? 2_000 : 10_000);

function Deliveries({ code, admin, canSendTest }: { code: string; admin: boolean; canSendTest: boolean }) {
  const { t } = useI18n();
  // `?deliveries=dead` (from the partners list's count) opens the log on those.
  const { query } = useLocation();
  const [status, setStatus] = useState<(typeof DELIVERY_STATUSES)[number] | ''>(DELIVERY_STATUSES.find((x) => x === query.get('deliveries')) ?? '');
  const [since, setSince] = useState('');
  const log = useApi('listWebhookDeliveries', { path: { code }, query: { limit: 100, ...(status ? { status } : {}) } }, { refreshInterval: logRefresh });
  const test = useAction(
    () => call('sendPartnerTestEvent', { path: { code } }),
    (r) => {
      void log.mutate();
      return t('partner.testEvent.done', { id: r.deliveryId });
    },
  );
  const dead = useAction(
    () => call('redeliverDeadWebhooks', { path: { code } }),
    (r) => {
      void log.mutate();
      return t('partner.redeliverDead.done', { count: r.count });
    },
  );
  const again = useAction(
    () => call('redeliverWebhooksSince', { path: { code }, body: { since: new Date(since).toISOString() } }),
    (r) => {
      void log.mutate();
      return t('partner.redeliverSince.done', { count: r.count });
    },
  );
  return (
    <section class="panel">
      <h2>{t('partner.deliveries')}</h2>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          <span>{t('col.status')}</span>
          <select value={status} onChange={(e) => setStatus((e.target as HTMLSelectElement).value as typeof status)} data-testid="delivery-status">
            <option value="">{t('partner.status.all')}</option>
            {DELIVERY_STATUSES.map((s) => (
              <option key={s} value={s}>
                {t(`delivery.${s}` as MessageKey)}
              </option>
            ))}
          </select>
        </label>
        {canSendTest ? (
          <button type="button" class="secondary" disabled={test.busy} onClick={() => void test.run()} data-testid="send-test-event" title={t('partner.testEvent.hint')}>
            {t('partner.testEvent')}
          </button>
        ) : null}
        {admin ? (
          <>
            <button type="button" disabled={dead.busy} onClick={() => void dead.run()} data-testid="redeliver-dead">
              {t('partner.redeliverDead')}
            </button>
            <label>
              <span>{t('partner.redeliverSince')}</span>
              <input type="datetime-local" value={since} onInput={(e) => setSince((e.target as HTMLInputElement).value)} />
            </label>
            <button type="button" class="secondary" disabled={again.busy || !since} onClick={() => void again.run()}>
              {t('partner.redeliver')}
            </button>
          </>
        ) : null}
      </form>
      {log.error ? <LoadError error={log.error} /> : null}
      {!log.data && !log.error ? <Loading /> : null}
      {log.data ? <DeliveryTable deliveries={log.data.deliveries} onRedelivered={admin ? () => void log.mutate() : undefined} /> : null}
    </section>
  );
}

/** A delivery log: event, state, attempts, the last answer; redeliver one when allowed. */
export function DeliveryTable({ deliveries, onRedelivered, withPartner = false }: { deliveries: types.WebhookDelivery[]; onRedelivered?: () => void; withPartner?: boolean }) {
  const { t, dateTime } = useI18n();
  const again = useAction(
    (id: string) => call('redeliverWebhook', { path: { deliveryId: id } }),
    () => {
      onRedelivered?.();
      return t('partner.redeliver.done');
    },
  );
  if (deliveries.length === 0) return <p class="muted">{t('partner.deliveries.empty')}</p>;
  return (
    <Table
      testid="deliveries"
      headers={[t('col.when'), ...(withPartner ? [t('col.partner')] : []), t('col.event'), t('col.status'), t('col.attempts'), t('col.result'), ...(onRedelivered ? [{ hidden: t('partner.redeliver') }] : [])]}
    >
          {deliveries.map((d) => (
            <tr key={d.id} data-status={d.status} data-event-type={d.eventType}>
              <td class="nowrap">{dateTime(d.occurredAt)}</td>
              {withPartner ? <td>{d.partnerCode}</td> : null}
              <td>
                {eventTypeWords(t, d.eventType)}
              </td>
              <td>
                <Badge kind={d.status === 'succeeded' ? 'ok' : d.status === 'dead' ? 'danger' : 'warn'}>{t(`delivery.${d.status}` as MessageKey)}</Badge>
              </td>
              <td>{d.attempts}</td>
              <td class="small">{deliveryErrorWords(t, d.lastStatusCode, d.lastError)}</td>
              {onRedelivered ? (
                <td>
                  <button type="button" class="secondary small" disabled={again.busy} onClick={() => void again.run(d.id)}>
                    {t('partner.redeliver')}
                  </button>
                </td>
              ) : null}
            </tr>
      ))}
    </Table>
  );
}

function Polling({ partner: p, admin }: { partner: types.Partner; admin: boolean }) {
  const { t, dateTime } = useI18n();
  const code = p.code;
  const state = useApi('getPartnerPolling', { path: { code } }, { refreshInterval: 10_000 });
  const rejected = useApi('listRejectedInboundItems', { path: { code }, query: { status: 'open', pageSize: 50 } });
  /** What the last retry of an item found, and when (an accepted one stays in view, saying so). */
  const [outcomes, setOutcomes] = useState<ReadonlyMap<string, { at: string; accepted: boolean; item: types.RejectedInboundItem }>>(new Map());
  const retry = useAction(
    (id: string) => call('retryRejectedInboundItem', { path: { itemId: id } }),
    (r) => {
      setOutcomes((prev) => new Map(prev).set(r.item.id, { at: new Date().toISOString(), accepted: r.accepted, item: r.item }));
      void rejected.mutate((d) => (d ? { ...d, items: d.items.map((x) => (x.id === r.item.id ? r.item : x)) } : d), { revalidate: false });
      return r.accepted ? t('rejected.retried.accepted') : t('rejected.retried.refused');
    },
  );
  const listed = rejected.data?.items ?? [];
  const rejectedItems = [...listed, ...[...outcomes.values()].filter((o) => o.accepted && !listed.some((x) => x.id === o.item.id)).map((o) => o.item)];
  const poll = useAction(
    () => call('pollPartnerNow', { path: { code } }),
    () => {
      void state.mutate();
      return t('partner.pollNow.done');
    },
  );
  return (
    <section class="panel">
      <h2>{t('partner.polling')}</h2>
      {state.error ? <LoadError error={state.error} /> : null}
      {state.data ? (
        <dl class="fields">
          <Field label={t('polling.active')}>
            <span data-testid="polling-active">{state.data.polling ? t('common.yes') : notPolledWords(t, p)}</span>
          </Field>
          <Field label={t('partnerPolling.url')}>
            <span class="break" data-testid="polling-url-shown">{p.pollingUrl ?? t('partnerPolling.url.none')}</span>
          </Field>
          <Field label={t('partnerPolling.interval.label')}>{t('partnerPolling.interval.value', { seconds: p.pollingIntervalSeconds })}</Field>
          <Field label={t('partnerPolling.keySet')}>{p.pollingKeySet ? t('partnerPolling.keySet.yes') : t('partnerPolling.keySet.no')}</Field>
          <Field label={t('polling.lastSuccessAt')}>{dateTime(state.data.lastSuccessAt)}</Field>
          <Field label={t('polling.lag')}>{state.data.lagSeconds === null ? '—' : t('polling.lagSeconds', { seconds: state.data.lagSeconds })}</Field>
          <Field label={t('polling.failures')}>{state.data.consecutiveFailures}</Field>
          <Field label={t('polling.lastError')}>{state.data.lastError ? pollErrorWords(t, state.data.lastError.kind) : '—'}</Field>
        </dl>
      ) : null}
      {admin ? (
        <button type="button" class="secondary" disabled={poll.busy} onClick={() => void poll.run()}>
          {t('partner.pollNow')}
        </button>
      ) : null}
      <h3>{t('partner.rejected')}</h3>
      {rejected.data && rejectedItems.length === 0 ? <p class="muted">{t('partner.rejected.empty')}</p> : null}
      <ul class="plain rejected-list" data-testid="rejected-items">
        {rejectedItems.map((r) => (
          <RejectedItem
            key={r.id}
            item={r}
            outcome={outcomes.get(r.id)}
            admin={admin}
            retrying={retry.busy}
            onRetry={() => void retry.run(r.id)}
            onChanged={(next, accepted) => {
              if (accepted !== undefined) setOutcomes((prev) => new Map(prev).set(next.id, { at: new Date().toISOString(), accepted, item: next }));
              void rejected.mutate((d) => (d ? { ...d, items: accepted === undefined ? d.items.filter((x) => x.id !== next.id) : d.items.map((x) => (x.id === next.id ? next : x)) } : d), { revalidate: false });
            }}
          />
        ))}
      </ul>
    </section>
  );
}

/** A value the citizen sent, read from the stored item (any JSON): text, or null when absent or not text. */
function sentText(item: unknown, ...path: string[]): string | null {
  let v: unknown = item;
  for (const p of path) v = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[p] : undefined;
  if (typeof v === 'number') return String(v);
  return typeof v === 'string' ? v : null;
}

const CORRECTABLE = [
  ['description', ['problem', 'description'], 'rejected.field.problem.description'],
  ['street', ['address', 'street'], 'rejected.field.address.street'],
  ['number', ['address', 'number'], 'rejected.field.address.number'],
  ['neighborhood', ['address', 'neighborhood'], 'rejected.field.address.neighborhood'],
  ['reference', ['address', 'reference'], 'rejected.field.address.reference'],
  ['requesterName', ['requester', 'name'], 'rejected.field.requester.name'],
  ['phone', ['requester', 'phone'], 'rejected.field.requester.phone'],
  ['latitude', ['address', 'latitude'], 'rejected.field.address.latitude'],
  ['longitude', ['address', 'longitude'], 'rejected.field.address.longitude'],
] as const;

/**
 * One refused item: what the citizen sent and why intake refused it, in words; a
 * triager may correct fields and accept it (it becomes an alert, once), try it again
 * as it is, or dismiss it with a reason.
 */
function RejectedItem({
  item: r,
  outcome: o,
  admin,
  retrying,
  onRetry,
  onChanged,
}: {
  item: types.RejectedInboundItem;
  outcome?: { at: string; accepted: boolean };
  admin: boolean;
  retrying: boolean;
  onRetry: () => void;
  onChanged: (next: types.RejectedInboundItem, accepted?: boolean) => void;
}) {
  const { t, dateTime } = useI18n();
  const [mode, setMode] = useState<'view' | 'correct' | 'dismiss'>('view');
  const initial = Object.fromEntries(CORRECTABLE.map(([field, path]) => [field, sentText(r.item, ...path) ?? ''])) as Record<(typeof CORRECTABLE)[number][0], string>;
  const [values, setValues] = useState(initial);
  const [reason, setReason] = useState('');
  const accept = useAction(
    () => {
      const corrections: Record<string, string | number> = {};
      for (const [field] of CORRECTABLE) {
        const v = values[field].trim();
        if (v === initial[field].trim() || v === '') continue;
        corrections[field] = field === 'latitude' || field === 'longitude' ? Number(v.replace(',', '.')) : v;
      }
      return call('acceptRejectedInboundItem', { path: { itemId: r.id }, body: { corrections } });
    },
    (res) => {
      if (res.accepted) setMode('view');
      onChanged(res.item, res.accepted);
      return res.accepted ? t('rejected.accepted') : t('rejected.stillRefused');
    },
  );
  const dismiss = useAction(
    () => call('dismissRejectedInboundItem', { path: { itemId: r.id }, body: { reason: reason.trim() } }),
    (next) => {
      onChanged(next);
      return t('rejected.dismissed');
    },
  );
  const text = (v: string | null) => (v === null || v.trim() === '' ? <span class="muted">{t('rejected.empty')}</span> : v);
  const street = [sentText(r.item, 'address', 'street'), sentText(r.item, 'address', 'number')].filter((x) => x && x.trim()).join(', ');
  const place = [street, sentText(r.item, 'address', 'neighborhood')].filter((x) => x && x.trim()).join(' — ');
  const lat = sentText(r.item, 'address', 'latitude');
  const lon = sentText(r.item, 'address', 'longitude');
  const done = o?.accepted || r.resolvedAt !== null;
  return (
    <li data-item={r.id} class="rejected-item">
      <div class="row wrap">
        <code>{r.protocolNumber ?? '—'}</code>
        <span class="muted small" data-testid="rejected-seen">
          {r.timesSeen === 1 ? t('rejected.timesSeen.one') : t('rejected.timesSeen.other', { n: r.timesSeen })}
        </span>
        {o ? (
          <Badge kind={o.accepted ? 'ok' : 'warn'}>
            <span data-testid="rejected-retried">{t(o.accepted ? 'rejected.retriedAt.accepted' : 'rejected.retriedAt.refused', { when: dateTime(o.at) })}</span>
          </Badge>
        ) : null}
      </div>
      <dl class="fields" data-testid="rejected-sent" aria-label={t('rejected.sent')}>
        <Field label={t('rejected.field.problem.description')}>{text(sentText(r.item, 'problem', 'description'))}</Field>
        <Field label={t('rejected.field.address')}>{text(place || null)}</Field>
        <Field label={t('rejected.field.requester.phone')}>{text(sentText(r.item, 'requester', 'phone'))}</Field>
        <Field label={t('rejected.location')}>{lat !== null && lon !== null ? `${lat}, ${lon}` : <span class="muted">{t('rejected.noLocation')}</span>}</Field>
      </dl>
      {done ? null : (
        <div data-testid="rejected-why">
          <strong class="small">{t('rejected.why')}: {rejectedProblemWords(t, r.problemCode)}</strong>
          <ul class="changes">
            {r.reasons.map((x, i) => (
              <li key={i}>{rejectedReasonWords(t, x, r.item)}</li>
            ))}
          </ul>
        </div>
      )}
      {admin && !done && mode === 'view' ? (
        <div class="row wrap">
          <button type="button" class="small" onClick={() => setMode('correct')} data-testid="rejected-correct">
            {t('rejected.correct')}
          </button>
          <button type="button" class="secondary small" disabled={retrying} onClick={onRetry}>
            {t('common.retry')}
          </button>
          <button type="button" class="secondary small" onClick={() => setMode('dismiss')} data-testid="rejected-dismiss">
            {t('failures.dismiss')}
          </button>
        </div>
      ) : null}
      {admin && !done && mode === 'correct' ? (
        <form
          class="form rejected-form"
          data-testid="rejected-form"
          onSubmit={(e) => {
            e.preventDefault();
            void accept.run();
          }}
        >
          <p class="muted small">{t('rejected.correct.hint')}</p>
          {CORRECTABLE.map(([field, , label]) => (
            <label key={field}>
              <span>{t(label)}</span>
              {field === 'description' ? (
                <textarea rows={2} maxLength={4000} value={values[field]} onInput={(e) => setValues({ ...values, [field]: (e.target as HTMLTextAreaElement).value })} data-testid={`fix-${field}`} />
              ) : (
                <input
                  inputMode={field === 'latitude' || field === 'longitude' ? 'decimal' : undefined}
                  value={values[field]}
                  onInput={(e) => setValues({ ...values, [field]: (e.target as HTMLInputElement).value })}
                  data-testid={`fix-${field}`}
                />
              )}
            </label>
          ))}
          <div class="row wrap">
            <button type="submit" disabled={accept.busy} data-testid="rejected-accept">
              {t('rejected.accept')}
            </button>
            <button type="button" class="secondary" onClick={() => setMode('view')}>
              {t('common.cancel')}
            </button>
          </div>
        </form>
      ) : null}
      {admin && !done && mode === 'dismiss' ? (
        <form
          class="form"
          onSubmit={(e) => {
            e.preventDefault();
            void dismiss.run();
          }}
        >
          <label>
            <span>{t('rejected.dismiss.reason')}</span>
            <input required maxLength={500} value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} data-testid="rejected-dismiss-reason" />
          </label>
          <div class="row wrap">
            <button type="submit" class="danger" disabled={dismiss.busy || !reason.trim()} data-testid="rejected-dismiss-yes">
              {t('rejected.dismiss.confirm')}
            </button>
            <button type="button" class="secondary" onClick={() => setMode('view')}>
              {t('common.cancel')}
            </button>
          </div>
        </form>
      ) : null}
    </li>
  );
}
