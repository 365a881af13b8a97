import { sql } from 'kysely';
import type { WebhookAttempt, WebhookDelivery } from '../../generated/admin/types.gen.js';
import { parseDateTime } from '../lib/time.js';
import { AppError } from '../lib/errors.js';
import type { DeliveryStatus } from '../db/tables/events.js';
import type { Tx } from '../db/database.js';
import { findExternalSystemByCode, type ExternalSystemRow } from '../db/repositories/external-system.repository.js';
import { attemptsOf, findDelivery, hasOpenDelivery, insertDelivery, listDeliveries, type AttemptRow, type DeliveryRow } from '../db/repositories/webhook-delivery.repository.js';
import { actorLabel, recordAudit, type Actor } from './audit.service.js';
import type { ServiceDeps } from './deps.js';
import { enqueueDelivery } from './events-dispatch.js';
import { isUuid } from './tenant.service.js';

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

async function requirePartner(deps: ServiceDeps, code: string): Promise<ExternalSystemRow> {
  const row = await findExternalSystemByCode(deps.db, code);
  if (!row) throw new AppError('not-found', { resource: `partner ${code}` });
  return row;
}

export interface DeliveryQuery {
  partnerCode: string;
  status?: string;
  /** Deliveries created at or after this ISO instant. */
  since?: string;
  /** Default 50, at most 500. */
  limit?: number;
}

/** The delivery log of a partner, newest first, each with its attempts. */
export async function listWebhookDeliveries(deps: ServiceDeps, q: DeliveryQuery): Promise<{ partnerCode: string; deliveries: WebhookDeliveryView[] }> {
  const errors = [];
  if (q.status !== undefined && !DELIVERY_STATUSES.includes(q.status as DeliveryStatus)) errors.push({ pointer: '/query/status', message: `must be one of ${DELIVERY_STATUSES.join(', ')}` });
  const since = q.since !== undefined ? parseDateTime(q.since) : undefined;
  if (since === null) errors.push({ pointer: '/query/since', message: 'must be an ISO 8601 date-time' });
  const limit = q.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) errors.push({ pointer: '/query/limit', message: 'must be a whole number from 1 to 500' });
  // Query values: 400, as every other query problem.
  if (errors.length > 0) throw new AppError('invalid-parameter', {}, errors);
  const partner = await requirePartner(deps, q.partnerCode);
  const rows = await listDeliveries(deps.db, { externalSystemId: partner.id, status: q.status as DeliveryStatus | undefined, since: since ?? undefined, limit });
  const attempts = await attemptsOf(deps.db, rows.map((r) => r.id));
  return { partnerCode: partner.code, deliveries: rows.map((r) => deliveryView(partner.code, r, attempts)) };
}

/** One delivery with its attempts. */
export async function getWebhookDelivery(deps: ServiceDeps, deliveryId: string): Promise<WebhookDeliveryView> {
  if (!isUuid(deliveryId)) throw new AppError('not-found', { resource: `webhook delivery ${deliveryId}` });
  const found = await findDelivery(deps.db, deliveryId);
  if (!found) throw new AppError('not-found', { resource: `webhook delivery ${deliveryId}` });
  return viewOf(deps, found);
}

async function viewOf(deps: ServiceDeps, d: DeliveryRow): Promise<WebhookDeliveryView> {
  const partner = await deps.db.selectFrom('external_system').select('code').where('id', '=', d.external_system_id).executeTakeFirstOrThrow();
  const rows = await listDeliveries(deps.db, { externalSystemId: d.external_system_id, limit: 1, id: d.id });
  return deliveryView(partner.code, rows[0]!, await attemptsOf(deps.db, [d.id]));
}

function requireWebhookPartner(p: ExternalSystemRow): void {
  const why = !p.enabled ? 'is disabled' : p.transport !== 'webhook' ? 'is in polling mode' : !p.webhook_url ? 'has no webhook URL' : !p.webhook_secret_enc ? 'has no webhook secret' : null;
  if (why) throw new AppError('conflict', { reason: `partner ${p.code} ${why}: nothing can be delivered to it` });
}

/**
 * Delivers one delivery's event again, as a new delivery (same eventId, attempts from
 * 1, the whole retry schedule), behind any open delivery of the same order. Refused
 * while the event still has an open delivery.
 */
export async function redeliver(deps: ServiceDeps, deliveryId: string, actor: Actor): Promise<WebhookDeliveryView> {
  if (!isUuid(deliveryId)) throw new AppError('not-found', { resource: `webhook delivery ${deliveryId}` });
  const created = await deps.db.transaction().execute(async (tx) => {
    const original = await tx.selectFrom('webhook_delivery').selectAll().where('id', '=', deliveryId).forUpdate().executeTakeFirst();
    if (!original) throw new AppError('not-found', { resource: `webhook delivery ${deliveryId}` });
    const partner = await tx.selectFrom('external_system').selectAll().where('id', '=', original.external_system_id).executeTakeFirstOrThrow();
    requireWebhookPartner(partner);
    await lockEventDeliveries(tx, original.event_id);
    if (await hasOpenDelivery(tx, original.event_id)) throw new AppError('conflict', { reason: `event ${original.event_id} is still being delivered; wait until its delivery succeeds or is dead` });
    const d = await insertDelivery(tx, { event_id: original.event_id, external_system_id: original.external_system_id, ordering_key: original.ordering_key, requested_by: actorLabel(actor), redelivery_of: original.id });
    await enqueueDelivery(tx, d.id);
    await recordAudit(tx, actor, { tenantId: partner.tenant_id, action: 'webhook.redeliver', entityType: 'partner', entityId: partner.id, before: null, after: { deliveryId: d.id, redeliveryOf: original.id, eventId: original.event_id } });
    return d;
  });
  return viewOf(deps, created);
}

/**
 * Delivers again every event of a partner written at or after `since`, oldest first,
 * each as a new delivery (events with an open delivery are skipped: they are on their
 * way). Per-order ordering holds among the new deliveries.
 */
export async function redeliverSince(deps: ServiceDeps, partnerCode: string, since: string, actor: Actor): Promise<{ partnerCode: string; since: string; count: number; deliveryIds: string[] }> {
  const from = parseDateTime(since);
  if (!from) throw new AppError('validation-failed', { count: 1 }, [{ pointer: '/since', message: 'must be an ISO 8601 date-time' }]);
  const partner = await requirePartner(deps, partnerCode);
  requireWebhookPartner(partner);
  const ids = await deps.db.transaction().execute(async (tx) => {
    // Serialises with concurrent redeliveries of this partner.
    await sql`SELECT pg_advisory_xact_lock(hashtext('lumen.webhook.redeliver'), hashtext(${partner.id}))`.execute(tx);
    const { rows } = await sql<{ id: string; ordering_key: string }>`
      INSERT INTO webhook_delivery (event_id, external_system_id, ordering_key, requested_by)
      SELECT e.id, e.external_system_id, coalesce(e.service_order_id, e.alert_id), ${actorLabel(actor)}
      FROM event e
      WHERE e.external_system_id = ${partner.id}
        AND e.created_at >= ${from}
        AND NOT EXISTS (SELECT 1 FROM webhook_delivery o WHERE o.event_id = e.id AND o.status IN ('pending', 'failed'))
      ORDER BY e.write_seq
      RETURNING id, ordering_key`.execute(tx);
    // The first new delivery of each order is enough: each one finishing starts the next.
    const firstOfKey = new Map<string, string>();
    for (const r of rows) if (!firstOfKey.has(r.ordering_key)) firstOfKey.set(r.ordering_key, r.id);
    for (const id of firstOfKey.values()) await enqueueDelivery(tx, id);
    await recordAudit(tx, actor, { tenantId: partner.tenant_id, action: 'webhook.redeliver-since', entityType: 'partner', entityId: partner.id, before: null, after: { since: from.toISOString(), count: rows.length } });
    return rows.map((r) => r.id);
  });
  return { partnerCode: partner.code, since: from.toISOString(), count: ids.length, deliveryIds: ids };
}

async function lockEventDeliveries(tx: Tx, eventId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext('lumen.webhook.event'), hashtext(${eventId}))`.execute(tx);
}
