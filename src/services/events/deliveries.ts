import { sql, type RawBuilder } from 'kysely';
import type { WebhookAttempt, WebhookDelivery } from '../../../generated/admin/types.gen.js';
import { parseDateTime } from '../../lib/time.js';
import { AppError } from '../../lib/errors.js';
import type { DeliveryStatus } from '../../db/tables/events.js';
import type { Executor, Tx } from '../../db/database.js';
import { findExternalSystemByCode, type ExternalSystemRow } from '../../db/repositories/external-system.repository.js';
import { attemptsOf, behindFailedDelivery, findDelivery, hasOpenDelivery, insertDelivery, listDeliveries, type AttemptRow, type DeliveryRow, type OrderingKey } from '../../db/repositories/webhook-delivery.repository.js';
import { actorLabel, recordAudit, type Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { wakeDeliveries } from './dispatch.js';
import { isUuid } from '../tenants/index.js';
import { inScope, type AdminAccess, type TenantRole } from '../operators/index.js';

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'failed', 'succeeded', 'dead'];

/** One attempt as operators see it. */
export type WebhookAttemptView = WebhookAttempt;

/** One delivery of one event to a partner's webhook, with its attempts. */
export type WebhookDeliveryView = WebhookDelivery;

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

function attemptView(a: AttemptRow): WebhookAttemptView {
  return { attempt: a.attempt, at: a.started_at.toISOString(), latencyMs: a.latency_ms, succeeded: a.succeeded, statusCode: a.status_code, error: a.error, nextAttemptAt: iso(a.next_attempt_at) };
}

type ListedDelivery = Awaited<ReturnType<typeof listDeliveries>>[number];

function deliveryView(partnerCode: string, d: ListedDelivery, attempts: AttemptRow[]): WebhookDeliveryView {
  const open = d.status === 'pending' || d.status === 'failed';
  return {
    id: d.id,
    partnerCode,
    eventId: d.event_id,
    eventType: d.event_type,
    occurredAt: d.occurred_at.toISOString(),
    serviceOrderId: d.service_order_id,
    alertId: d.alert_id,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: open ? d.next_attempt_at.toISOString() : null,
    lastAttemptAt: iso(d.last_attempt_at),
    lastStatusCode: d.last_status_code,
    lastError: d.last_error,
    redeliveryOf: d.redelivery_of,
    requestedBy: d.requested_by,
    createdAt: d.created_at.toISOString(),
    finishedAt: iso(d.finished_at),
    attemptLog: attempts.filter((a) => a.delivery_id === d.id).map(attemptView),
  };
}

/** The partner, when the caller holds `role` on its tenant (not-found as an unknown code otherwise). */
export async function requirePartner(deps: ServiceDeps, access: AdminAccess, code: string, role: TenantRole): Promise<ExternalSystemRow> {
  return inScope(access, await findExternalSystemByCode(deps.db, code), role, `partner ${code}`);
}

export interface DeliveryQuery {
  partnerCode: string;
  status?: string;
  /** Deliveries created at or after this ISO instant. */
  since?: string;
  /** Deliveries of this service order's events. */
  serviceOrderId?: string;
  /** Default 50, at most 500. */
  limit?: number;
}

/** The delivery log of a partner, newest first, each with its attempts. */
export async function listWebhookDeliveries(deps: ServiceDeps, access: AdminAccess, q: DeliveryQuery): Promise<{ partnerCode: string; deliveries: WebhookDeliveryView[] }> {
  const errors = [];
  if (q.status !== undefined && !DELIVERY_STATUSES.includes(q.status as DeliveryStatus)) errors.push({ pointer: '/query/status', message: `must be one of ${DELIVERY_STATUSES.join(', ')}` });
  const since = q.since !== undefined ? parseDateTime(q.since) : undefined;
  if (since === null) errors.push({ pointer: '/query/since', message: 'must be an ISO 8601 date-time' });
  const limit = q.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) errors.push({ pointer: '/query/limit', message: 'must be a whole number from 1 to 500' });
  if (q.serviceOrderId !== undefined && !isUuid(q.serviceOrderId)) errors.push({ pointer: '/query/serviceOrderId', message: 'must be a service order id (UUID)' });
  // Query values: 400, as every other query problem.
  if (errors.length > 0) throw new AppError('invalid-parameter', {}, errors);
  const partner = await requirePartner(deps, access, q.partnerCode, 'viewer');
  const rows = await listDeliveries(deps.db, { externalSystemId: partner.id, status: q.status as DeliveryStatus | undefined, since: since ?? undefined, serviceOrderId: q.serviceOrderId, limit });
  const attempts = await attemptsOf(deps.db, rows.map((r) => r.id));
  return { partnerCode: partner.code, deliveries: rows.map((r) => deliveryView(partner.code, r, attempts)) };
}

/** One delivery with its attempts. */
export async function getWebhookDelivery(deps: ServiceDeps, access: AdminAccess, deliveryId: string): Promise<WebhookDeliveryView> {
  if (!isUuid(deliveryId)) throw new AppError('not-found', { resource: `webhook delivery ${deliveryId}` });
  const found = await findDelivery(deps.db, deliveryId);
  const partner = found ? await deps.db.selectFrom('external_system').select('tenant_id').where('id', '=', found.external_system_id).executeTakeFirst() : undefined;
  inScope(access, partner, 'viewer', `webhook delivery ${deliveryId}`);
  return viewOf(deps.db, found!);
}

async function viewOf(db: Executor, d: DeliveryRow): Promise<WebhookDeliveryView> {
  const partner = await db.selectFrom('external_system').select('code').where('id', '=', d.external_system_id).executeTakeFirstOrThrow();
  const rows = await listDeliveries(db, { externalSystemId: d.external_system_id, limit: 1, id: d.id });
  return deliveryView(partner.code, rows[0]!, await attemptsOf(db, [d.id]));
}

export function requireWebhookPartner(p: ExternalSystemRow): void {
  const why = !p.enabled ? 'is disabled' : p.transport !== 'webhook' ? 'is in polling mode' : !p.webhook_url ? 'has no webhook URL' : !p.webhook_secret_enc ? 'has no webhook secret' : null;
  if (why) throw new AppError('conflict', { reason: `partner ${p.code} ${why}: nothing can be delivered to it` });
}

/**
 * Delivers one delivery's event again, as a new delivery (same eventId, attempts from
 * 1, the whole retry schedule), behind any open delivery of the same order. Refused
 * while the event still has an open delivery. A test event's delivery is repeated the
 * same way (same test event, same body). Returns the new delivery as written
 * (pending): its first attempt may start the moment the transaction commits.
 */
export async function redeliver(deps: ServiceDeps, deliveryId: string, actor: Actor): Promise<WebhookDeliveryView> {
  if (!isUuid(deliveryId)) throw new AppError('not-found', { resource: `webhook delivery ${deliveryId}` });
  return deps.db.transaction().execute(async (tx) => {
    const original = await tx.selectFrom('webhook_delivery').selectAll().where('id', '=', deliveryId).forUpdate().executeTakeFirst();
    if (!original) throw new AppError('not-found', { resource: `webhook delivery ${deliveryId}` });
    const partner = inScope(actor.access, await tx.selectFrom('external_system').selectAll().where('id', '=', original.external_system_id).executeTakeFirst(), 'triager', `webhook delivery ${deliveryId}`);
    requireWebhookPartner(partner);
    // An event's delivery, or a test event's (0031: exactly one of the two is set).
    const eventId = (original.event_id ?? original.test_event_id)!;
    const of = original.event_id !== null ? { event_id: original.event_id } : { test_event_id: eventId };
    await lockEventDeliveries(tx, eventId);
    if (await hasOpenDelivery(tx, original)) throw new AppError('conflict', { reason: `event ${eventId} is still being delivered; wait until its delivery succeeds or is dead` });
    const d = await insertDelivery(tx, { ...of, external_system_id: original.external_system_id, ordering_key: original.ordering_key, requested_by: actorLabel(actor), redelivery_of: original.id });
    await wakeDeliveries(tx, d.blocked ? [d] : []);
    await recordAudit(tx, actor, { tenantId: partner.tenant_id, action: 'webhook.redeliver', entityType: 'partner', entityId: partner.id, before: null, after: { deliveryId: d.id, redeliveryOf: original.id, eventId } });
    return viewOf(tx, d);
  });
}

/**
 * Delivers again every event of a partner written at or after `since`, oldest first,
 * each as a new delivery (events with an open delivery are skipped: they are on their
 * way). Per-order ordering holds among the new deliveries. Test events are not events
 * (they are read from test_event, not event): never sent again by this.
 */
export async function redeliverSince(deps: ServiceDeps, partnerCode: string, since: string, actor: Actor): Promise<{ partnerCode: string; since: string; count: number; deliveryIds: string[] }> {
  const from = parseDateTime(since);
  if (!from) throw new AppError('validation-failed', { count: 1 }, [{ pointer: '/since', message: 'must be an ISO 8601 date-time' }]);
  const partner = await requirePartner(deps, actor.access, partnerCode, 'triager');
  requireWebhookPartner(partner);
  const ids = await deps.db.transaction().execute(async (tx) => {
    const queued = await queueRedeliveries(tx, partner.id, actor, sql<boolean>`e.created_at >= ${from}`, false);
    await recordAudit(tx, actor, { tenantId: partner.tenant_id, action: 'webhook.redeliver-since', entityType: 'partner', entityId: partner.id, before: null, after: { since: from.toISOString(), count: queued.length } });
    return queued;
  });
  return { partnerCode: partner.code, since: from.toISOString(), count: ids.length, deliveryIds: ids };
}

/**
 * Writes a new delivery for each event of a partner that `filter` (over event `e`)
 * selects, oldest first, skipping events with an open delivery (they are on their
 * way). Per-order ordering holds among the new deliveries. With `ofDead`, each new
 * delivery records the dead one it replaces (redelivery_of), so that dead one stops
 * counting as waiting for an operator.
 */
async function queueRedeliveries(tx: Tx, partnerId: string, actor: Actor, filter: RawBuilder<boolean>, ofDead: boolean): Promise<string[]> {
  // Serialises with concurrent redeliveries of this partner.
  await sql`SELECT pg_advisory_xact_lock(hashtext('lumen.webhook.redeliver'), hashtext(${partnerId}))`.execute(tx);
  // Blocked (see migration 0012): behind a delivery of the same order that failed and
  // waits for a retry; and every new delivery of an order but the first, behind that
  // first one, which is written in this same transaction (its record unblocks the next).
  const { rows } = await sql<{ id: string; external_system_id: string; ordering_key: string; behind_failed: boolean }>`
    WITH n AS (
      SELECT e.id AS event_id, e.external_system_id, coalesce(e.service_order_id, e.alert_id) AS ordering_key, e.write_seq,
        row_number() OVER (PARTITION BY coalesce(e.service_order_id, e.alert_id) ORDER BY e.write_seq) AS nth,
        ${behindFailedDelivery(sql.ref('e.external_system_id'), sql`coalesce(e.service_order_id, e.alert_id)`)} AS behind_failed,
        ${ofDead ? sql`(SELECT d.id FROM webhook_delivery d WHERE d.event_id = e.id ORDER BY d.position DESC LIMIT 1)` : sql`NULL::uuid`} AS redelivery_of
      FROM event e
      WHERE e.external_system_id = ${partnerId}
        AND ${filter}
        AND NOT EXISTS (SELECT 1 FROM webhook_delivery o WHERE o.event_id = e.id AND o.status IN ('pending', 'failed'))
    ), ins AS (
      INSERT INTO webhook_delivery (event_id, external_system_id, ordering_key, requested_by, blocked, redelivery_of)
      SELECT event_id, external_system_id, ordering_key, ${actorLabel(actor)}, behind_failed OR nth > 1, redelivery_of FROM n
      ORDER BY write_seq
      RETURNING id, event_id, position
    )
    SELECT ins.id, n.external_system_id, n.ordering_key, n.behind_failed
    FROM ins JOIN n ON n.event_id = ins.event_id
    ORDER BY ins.position`.execute(tx);
  if (rows.length > 0) await wakeDeliveries(tx, uniqueKeys(rows.filter((r) => r.behind_failed)));
  return rows.map((r) => r.id);
}

/**
 * Delivers again every event of a partner whose last delivery is dead (every attempt
 * failed), oldest first, each as a new delivery that records the dead one it replaces.
 * Events delivered since, or still on their way, are left alone, and so are dead test
 * events (an operator sends a new one, or redelivers that one by id). Needs triager on
 * the partner's tenant; another tenant's partner is not-found.
 */
export async function redeliverDead(deps: ServiceDeps, partnerCode: string, actor: Actor): Promise<{ partnerCode: string; count: number; deliveryIds: string[] }> {
  const partner = await requirePartner(deps, actor.access, partnerCode, 'triager');
  requireWebhookPartner(partner);
  const ids = await deps.db.transaction().execute(async (tx) => {
    const lastIsDead = sql<boolean>`(SELECT d.status FROM webhook_delivery d WHERE d.event_id = e.id ORDER BY d.position DESC LIMIT 1) = 'dead'`;
    const queued = await queueRedeliveries(tx, partner.id, actor, lastIsDead, true);
    await recordAudit(tx, actor, { tenantId: partner.tenant_id, action: 'webhook.redeliver-dead', entityType: 'partner', entityId: partner.id, before: null, after: { count: queued.length } });
    return queued;
  });
  return { partnerCode: partner.code, count: ids.length, deliveryIds: ids };
}

function uniqueKeys(keys: readonly OrderingKey[]): OrderingKey[] {
  const seen = new Map<string, OrderingKey>();
  for (const k of keys) seen.set(`${k.external_system_id}/${k.ordering_key}`, { external_system_id: k.external_system_id, ordering_key: k.ordering_key });
  return [...seen.values()];
}

async function lockEventDeliveries(tx: Tx, eventId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext('lumen.webhook.event'), hashtext(${eventId}))`.execute(tx);
}
