import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Executor, Tx } from '../database.js';
import type { DeliveryStatus, WebhookAttemptTable, WebhookDeliveryTable } from '../tables/events.js';
import type { WebhookSignatureScheme } from '../tables/foundation.js';

export type DeliveryRow = Selectable<WebhookDeliveryTable>;
export type AttemptRow = Selectable<WebhookAttemptTable>;

const OPEN: DeliveryStatus[] = ['pending', 'failed'];

/** The event type of a test event (0031): sent when an operator asks, never in events polling. */
export const TEST_PING = 'Test.Ping';

/**
 * The ordering rule, written once (migration 0012 explains it). A new delivery is written
 * blocked when its ordering key (partner, order) has a delivery that failed and waits for
 * a retry; a blocked delivery may go once no earlier delivery of its key is open.
 */
export function behindFailedDelivery(partner: RawBuilder<unknown>, orderingKey: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`EXISTS (SELECT 1 FROM webhook_delivery k
    WHERE k.external_system_id = ${partner} AND k.ordering_key = ${orderingKey} AND k.status = 'failed')`;
}

/**
 * True when no earlier delivery of the same ordering key as `alias` is open (pending or
 * failed). OFFSET 0 keeps it a probe of webhook_delivery_open_key_idx per row: as an
 * anti-join the planner may walk every open delivery for each row, as it did after an
 * ANALYZE of a quiet queue (see recheckStatement).
 */
function firstOpenOfKey(alias: string): RawBuilder<boolean> {
  const d = (col: string) => sql.ref(`${alias}.${col}`);
  return sql<boolean>`NOT EXISTS (SELECT 1 FROM webhook_delivery p
                        WHERE p.external_system_id = ${d('external_system_id')} AND p.ordering_key = ${d('ordering_key')}
                          AND p.position < ${d('position')} AND p.status IN ('pending', 'failed')
                        OFFSET 0)`;
}

/** An ordering key: the partner, and the service order (or the alert when there is none; a test event's own id for its delivery). */
export interface OrderingKey {
  external_system_id: string;
  ordering_key: string;
}

/**
 * Writes a delivery; blocked (see migration 0012) when its ordering key has a delivery
 * that failed and waits for a retry. The caller wakes the delivery workers
 * (wakeDeliveries), naming the key of a blocked delivery so that it is checked again
 * once this transaction has committed.
 */
export async function insertDelivery(
  tx: Tx,
  values: { external_system_id: string; ordering_key: string; requested_by?: string; redelivery_of?: string | null } & ({ event_id: string } | { test_event_id: string }),
): Promise<DeliveryRow> {
  const blocked = behindFailedDelivery(sql`${values.external_system_id}::uuid`, sql`${values.ordering_key}::uuid`);
  return tx
    .insertInto('webhook_delivery')
    .values({ ...values, blocked })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** One delivery leased for one attempt, with everything the attempt sends. */
export interface ClaimedDelivery {
  id: string;
  external_system_id: string;
  ordering_key: string;
  /** Attempts made before this one. */
  attempts: number;
  /** The event's id, or the test event's (webhook-id and X-Lumen-Event-Id either way). */
  event_id: string;
  /** The event's type; `Test.Ping` for a test event. */
  event_type: string;
  /** The stored envelope bytes. */
  body: string;
  partner_code: string;
  enabled: boolean;
  transport: string;
  webhook_url: string | null;
  webhook_secret_enc: string | null;
  webhook_signature: WebhookSignatureScheme;
  /** The secret a rotation replaced, only while it still signs (its overlap not over). */
  webhook_previous_secret_enc: string | null;
}

/**
 * `synchronous_commit = off` for the one statement it is joined into (set_config with
 * is_local: SET LOCAL of the statement's own transaction), so a claim or a settle is a
 * single round trip. Why that is safe: see the callers.
 */
const ASYNC_COMMIT = sql`async_commit AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true))`;

/**
 * Leases up to `limit` deliveries for one attempt each, in one statement: open, due, not
 * blocked or leased, and first among the open deliveries of their ordering key (so the
 * events of one order go out one at a time, in order), oldest due first, and no more
 * than `perPartner` leased per partner by the calling process, counting the leases it
 * already `held` (waiting to go, on the wire or being recorded; the pump puts fewer on
 * the wire at once, so a receiver that never answers holds that many of its attempt
 * slots, not the pump). A partner the caller holds at that limit is left out, so its
 * backlog cannot fill the claim. The count is the caller's own, not read from the table:
 * an index over leases would make every lease update a non-HOT update (a new entry in
 * each of the table's indexes per claim and per record; a 10,000-event fan-out ran at
 * a sixth of its rate with one). Rows another worker is claiming at that moment are
 * skipped, not waited for. Returns the event
 * bodies and the partner's current webhook settings with them. A delivery carries an
 * event or a test event (0031): both are joined by primary key, and the one present
 * gives the id, type and body (a test event's type is `Test.Ping`).
 *
 * Committed without waiting for the WAL flush: a lease lost in a crash of PostgreSQL
 * only lets another attempt start, which at-least-once delivery allows.
 *
 *   WITH async_commit AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true)),
 *   picked AS MATERIALIZED (
 *     SELECT c.id, c.event_id, c.test_event_id FROM webhook_delivery c
 *     WHERE c.status IN ('pending', 'failed') AND NOT c.blocked AND c.next_attempt_at <= now()
 *       AND (c.lease_until IS NULL OR c.lease_until < now())
 *       AND NOT EXISTS (SELECT 1 FROM webhook_delivery p
 *                       WHERE p.external_system_id = c.external_system_id AND p.ordering_key = c.ordering_key
 *                         AND p.position < c.position AND p.status IN ('pending', 'failed'))
 *     ORDER BY c.next_attempt_at LIMIT $limit
 *     FOR UPDATE OF c SKIP LOCKED)
 *   UPDATE webhook_delivery d SET lease_until = now() + $lease * interval '1 millisecond'
 *   FROM picked LEFT JOIN event e ON e.id = picked.event_id LEFT JOIN test_event t ON t.id = picked.test_event_id,
 *     external_system x, async_commit
 *   WHERE d.id = picked.id AND (e.id IS NOT NULL OR t.id IS NOT NULL) AND x.id = d.external_system_id
 *   RETURNING d.id, ..., coalesce(e.id, t.id) AS event_id, coalesce(e.event_type, 'Test.Ping') AS event_type,
 *     coalesce(e.body, e.payload::text, t.body) AS body, x.code, x.webhook_url, ...
 *
 * (the joins cannot name d, the row being updated, in their ON clauses: picked carries
 * the two ids; the partners held at their limit and the slots per partner, in the
 * statement below, are left out of this sketch)
 * (the function walks each partner's range of webhook_delivery_ready_partner_idx in
 * order, which holds open unblocked deliveries only: besides the due ones, just those
 * leased by attempts in flight; it finds the partners by one probe each, skips those
 * held at their limit without reading their rows, and takes at most each partner's
 * remaining slots before keeping the oldest `limit`; the NOT EXISTS probe walks
 * webhook_delivery_open_key_idx). The statement is the function
 * lumen_claim_webhook_deliveries (migrations 0099, 0103, 0104, 0109), which turns bitmap
 * and sequential scans off: with a burst of new deliveries beyond the statistics, the
 * planner would otherwise read every due row, probe each and sort them to keep the
 * oldest batch, and a plan made on an empty table would scan it. With those off, every
 * plan left is the index walk above, so the function keeps one plan per connection
 * (planning the statement cost more than running it).
 */
export async function claimDueDeliveries(
  db: Executor,
  limit: number,
  leaseMs: number,
  perPartner: number,
  held: ReadonlyMap<string, number> = new Map(),
): Promise<ClaimedDelivery[]> {
  const heldIds = [...held.keys()];
  const heldCounts = heldIds.map((id) => held.get(id)!);
  const { rows } = await sql<ClaimedDelivery>`
    SELECT * FROM lumen_claim_webhook_deliveries(${limit}::int, ${leaseMs}::int, ${perPartner}::int, ${heldIds}::uuid[], ${heldCounts}::int[], ${TEST_PING}::text)`.execute(db);
  return rows;
}

/** Gives back leases taken for attempts that were not started (a worker stopping): those deliveries may go at once. */
export async function releaseLeases(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('webhook_delivery').set({ lease_until: null }).where('id', 'in', ids).execute();
}

/** The outcome of one attempt, as the delivery log records it. */
export interface SettledAttempt {
  deliveryId: string;
  attempt: number;
  startedAt: Date;
  latencyMs: number;
  succeeded: boolean;
  statusCode: number | null;
  error: string | null;
  /** The delivery's status after this attempt. */
  status: DeliveryStatus;
  /** When the next attempt is due; null when the delivery ended (succeeded or dead). */
  nextAttemptAt: Date | null;
}

/**
 * Records the outcomes of attempts in one statement: one webhook_attempt row each, the
 * delivery's status, next attempt or end, with its lease released. For each ordering
 * key whose delivery ended, unblocks the delivery that may go out next, and returns it;
 * for each whose delivery failed and waits for a retry, blocks the open deliveries
 * behind it (see migration 0012). An outcome whose delivery already records this
 * attempt (another worker made it after this one's lease ran out) changes nothing.
 *
 * Committed without waiting for the WAL flush: a settle lost in a crash of PostgreSQL
 * leaves its deliveries open and leased, so their attempts are made again when the
 * leases run out, and nothing behind them was unblocked by it. WAL is replayed in
 * order: any later commit that survived, such as the claim of a delivery this settle
 * unblocked, implies that the settle survived too.
 *
 *   WITH async_commit AS (...), o AS (SELECT * FROM async_commit, jsonb_to_recordset($outcomes) AS o(...)),
 *   settled AS (UPDATE webhook_delivery d SET status = o.status, attempts = o.attempt, ...,
 *               lease_until = NULL, finished_at = CASE WHEN o.next_attempt_at IS NULL THEN now() END
 *               FROM o WHERE d.id = o.id AND d.id = ANY($ids) AND d.attempts < o.attempt
 *               RETURNING d.id, d.external_system_id, d.ordering_key, d.position, o.next_attempt_at IS NULL AS ended),
 *   logged AS (INSERT INTO webhook_attempt (...) SELECT ... FROM o JOIN settled USING (id)
 *              ON CONFLICT (delivery_id, attempt) DO NOTHING),
 *   held AS (UPDATE webhook_delivery f SET blocked = true
 *            WHERE f.id IN (SELECT b.id FROM settled s CROSS JOIN LATERAL
 *                             (same partner and key, later position, open OFFSET 0) b
 *                           WHERE NOT s.ended AND NOT b.blocked)),
 *   next AS (SELECT DISTINCT ON (s.external_system_id, s.ordering_key) n.id
 *            FROM settled s CROSS JOIN LATERAL
 *              (same partner and key, later position, open ORDER BY position LIMIT 1) n
 *            WHERE s.ended ORDER BY s.external_system_id, s.ordering_key, n.position)
 *   UPDATE webhook_delivery r SET blocked = false FROM next WHERE r.id = next.id
 *   RETURNING r.id, r.next_attempt_at
 *
 * (settled finds its rows by the primary key: `= ANY($ids)` gives the planner their
 * number, which it cannot guess from the recordset; held and next read the state before
 * this statement, in which the settled delivery itself is still open: hence position >.
 * A delivery written while this runs is not seen: see recheckKeys.)
 *
 * held and next probe webhook_delivery_open_key_idx once per settled delivery, by its
 * key: a lateral subquery (kept one by OFFSET 0 or LIMIT) runs for each row before it,
 * with that row's partner, key and position as its index condition (not blocked is
 * tested outside held's, where it cannot steer the probe to
 * webhook_delivery_ready_partner_idx, whose condition it is: that index is ordered by
 * partner and due time, not by key). Written as joins, they were planned from the
 * table's statistics, and statistics taken while no delivery was open (autovacuum's
 * ANALYZE of a quiet queue) made the planner walk every open delivery for each settled
 * one: a fan-out of 10,000 events to one partner then spent 1.8 ms of PostgreSQL per
 * event instead of 0.3 (bench/FINDINGS.md, "The settle after an ANALYZE";
 * test/events/settle.test.ts).
 */
export function settleStatement(outcomes: readonly SettledAttempt[]) {
  const json = JSON.stringify(
    outcomes.map((o) => ({
      id: o.deliveryId,
      attempt: o.attempt,
      started_at: o.startedAt.toISOString(),
      latency_ms: o.latencyMs,
      succeeded: o.succeeded,
      status_code: o.statusCode,
      error: o.error,
      status: o.status,
      next_attempt_at: o.nextAttemptAt?.toISOString() ?? null,
    })),
  );
  return sql<ReleasedDelivery>`
    WITH ${ASYNC_COMMIT},
    o AS (
      SELECT o.* FROM async_commit, jsonb_to_recordset(${json}::jsonb) AS o(id uuid, attempt integer, started_at timestamptz,
        latency_ms integer, succeeded boolean, status_code integer, error text, status text, next_attempt_at timestamptz)
    ), settled AS (
      UPDATE webhook_delivery d SET
        status = o.status, attempts = o.attempt, next_attempt_at = coalesce(o.next_attempt_at, d.next_attempt_at),
        last_attempt_at = o.started_at, last_status_code = o.status_code, last_error = o.error,
        lease_until = NULL, finished_at = CASE WHEN o.next_attempt_at IS NULL THEN now() END
      FROM o WHERE d.id = o.id AND d.id = ANY(${outcomes.map((o) => o.deliveryId)}::uuid[]) AND d.attempts < o.attempt
      RETURNING d.id, d.external_system_id, d.ordering_key, d.position, o.next_attempt_at IS NULL AS ended
    ), logged AS (
      INSERT INTO webhook_attempt (delivery_id, attempt, started_at, latency_ms, succeeded, status_code, error, next_attempt_at)
      SELECT o.id, o.attempt, o.started_at, o.latency_ms, o.succeeded, o.status_code, o.error, o.next_attempt_at
      FROM o JOIN settled s ON s.id = o.id
      ON CONFLICT (delivery_id, attempt) DO NOTHING
    ), held AS (
      UPDATE webhook_delivery f SET blocked = true
      WHERE f.id IN (
        SELECT b.id FROM settled s CROSS JOIN LATERAL (
          SELECT x.id, x.blocked FROM webhook_delivery x
          WHERE x.external_system_id = s.external_system_id AND x.ordering_key = s.ordering_key
            AND x.position > s.position AND x.status IN ('pending', 'failed')
          OFFSET 0) b
        WHERE NOT s.ended AND NOT b.blocked)
    ), next AS (
      SELECT DISTINCT ON (s.external_system_id, s.ordering_key) n.id
      FROM settled s CROSS JOIN LATERAL (
        SELECT x.id, x.position FROM webhook_delivery x
        WHERE x.external_system_id = s.external_system_id AND x.ordering_key = s.ordering_key
          AND x.position > s.position AND x.status IN ('pending', 'failed')
        ORDER BY x.position LIMIT 1) n
      WHERE s.ended
      ORDER BY s.external_system_id, s.ordering_key, n.position
    )
    UPDATE webhook_delivery r SET blocked = false FROM next WHERE r.id = next.id
    RETURNING r.id, r.next_attempt_at`;
}

export async function settleAttempts(db: Executor, outcomes: readonly SettledAttempt[]): Promise<ReleasedDelivery[]> {
  if (outcomes.length === 0) return [];
  const { rows } = await settleStatement(outcomes).execute(db);
  return rows;
}

/** A delivery unblocked: it may go out from next_attempt_at. */
export type ReleasedDelivery = Pick<DeliveryRow, 'id' | 'next_attempt_at'>;

/**
 * Unblocks the blocked deliveries of these ordering keys that no earlier open delivery
 * holds back any more, and returns them. Run after a settle that ended deliveries of
 * those keys which had failed before (a delivery is written blocked only behind a failed
 * one) has committed, and after a transaction that wrote a blocked delivery has: a
 * delivery written while the settle ahead of it ran is seen by one of the two (the later
 * of the two statements reads a state that includes both commits). Committed without waiting for the
 * WAL flush: a lost one leaves the delivery to the minute sweep (unblockOrphans).
 *
 *   WITH async_commit AS (...), k AS (SELECT * FROM async_commit, jsonb_to_recordset($keys) AS k(p uuid, k uuid))
 *   UPDATE webhook_delivery d SET blocked = false
 *   FROM (SELECT x.id FROM k CROSS JOIN LATERAL
 *           (the key's blocked open deliveries, AND NOT EXISTS (an earlier open delivery of the key) OFFSET 0) x) u
 *   WHERE d.id = u.id
 *   RETURNING d.id, d.next_attempt_at
 *
 * (one probe of webhook_delivery_open_key_idx per key, and one per blocked delivery
 * found, whatever the statistics say: written as a join with an anti-join, after an
 * ANALYZE of a quiet queue the planner walked the partner's open deliveries for the
 * keys and every open delivery for the anti-join; see settleStatement)
 */
export function recheckStatement(keys: readonly OrderingKey[]) {
  const json = JSON.stringify(keys.map((k) => ({ p: k.external_system_id, k: k.ordering_key })));
  return sql<ReleasedDelivery>`
    WITH ${ASYNC_COMMIT},
    k AS (SELECT k.* FROM async_commit, jsonb_to_recordset(${json}::jsonb) AS k(p uuid, k uuid))
    UPDATE webhook_delivery d SET blocked = false
    FROM (
      SELECT x.id FROM k CROSS JOIN LATERAL (
        SELECT x.id FROM webhook_delivery x
        WHERE x.external_system_id = k.p AND x.ordering_key = k.k AND x.blocked AND x.status IN ('pending', 'failed')
          AND ${firstOpenOfKey('x')}
        OFFSET 0) x) u
    WHERE d.id = u.id
    RETURNING d.id, d.next_attempt_at`;
}

export async function recheckKeys(db: Executor, keys: readonly OrderingKey[]): Promise<ReleasedDelivery[]> {
  if (keys.length === 0) return [];
  const { rows } = await recheckStatement(keys).execute(db);
  return rows;
}

/**
 * Unblocks every blocked delivery that no earlier open delivery holds back any more, and
 * returns them: those a lost recheck left (a process that died, a notification nobody
 * heard). The minute sweep's repair; it reads every blocked delivery.
 */
export async function unblockOrphans(db: Executor): Promise<ReleasedDelivery[]> {
  return db
    .updateTable('webhook_delivery as d')
    .set({ blocked: false })
    .where('d.blocked', '=', true)
    .where('d.status', 'in', OPEN)
    .where(firstOpenOfKey('d'))
    .returning(['d.id', 'd.next_attempt_at'])
    .execute();
}

/**
 * Open deliveries that may go out and have been due since before `dueBefore` without
 * being attempted: no serving process has been able to take them (none runs, or the
 * ones that do are behind). Unblocked, not leased.
 */
export async function overdueDeliveries(db: Executor, dueBefore: Date, limit: number): Promise<Pick<DeliveryRow, 'id'>[]> {
  return db
    .selectFrom('webhook_delivery as d')
    .select('d.id')
    .where('d.status', 'in', OPEN)
    .where('d.blocked', '=', false)
    .where('d.next_attempt_at', '<', dueBefore)
    .where((eb) => eb.or([eb('d.lease_until', 'is', null), eb('d.lease_until', '<', sql<Date>`now()`)]))
    .orderBy('d.next_attempt_at')
    .limit(limit)
    .execute();
}

export interface DeliveryFilter {
  externalSystemId: string;
  /** Just this delivery. */
  id?: string;
  status?: DeliveryStatus;
  /** Deliveries created at or after this instant. */
  since?: Date;
  /** Deliveries of this service order's events (event_service_order_idx, 0111). */
  serviceOrderId?: string;
  limit: number;
}

/**
 * A partner's deliveries, newest first, with their event or test event (a test event:
 * type `Test.Ping`, occurred when it was sent, no alert or order).
 */
export async function listDeliveries(db: Executor, f: DeliveryFilter) {
  let q = db
    .selectFrom('webhook_delivery as d')
    .leftJoin('event as e', 'e.id', 'd.event_id')
    .leftJoin('test_event as t', 't.id', 'd.test_event_id')
    .select([
      'd.id',
      sql<string>`coalesce(d.event_id, d.test_event_id)`.as('event_id'),
      sql<string>`coalesce(e.event_type, ${TEST_PING})`.as('event_type'),
      sql<Date>`coalesce(e.occurred_at, t.created_at)`.as('occurred_at'),
      'e.service_order_id',
      'e.alert_id',
      'd.status',
      'd.attempts',
      'd.next_attempt_at',
      'd.last_attempt_at',
      'd.last_status_code',
      'd.last_error',
      'd.redelivery_of',
      'd.requested_by',
      'd.created_at',
      'd.finished_at',
    ])
    .where('d.external_system_id', '=', f.externalSystemId);
  if (f.id) q = q.where('d.id', '=', f.id);
  if (f.status) q = q.where('d.status', '=', f.status);
  if (f.since) q = q.where('d.created_at', '>=', f.since);
  if (f.serviceOrderId) q = q.where('e.service_order_id', '=', f.serviceOrderId);
  return q.orderBy('d.position', 'desc').limit(f.limit).execute();
}

export async function attemptsOf(db: Executor, deliveryIds: readonly string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  return db.selectFrom('webhook_attempt').selectAll().where('delivery_id', 'in', deliveryIds).orderBy('delivery_id').orderBy('attempt').execute();
}

export async function findDelivery(db: Executor, id: string): Promise<DeliveryRow | undefined> {
  return db.selectFrom('webhook_delivery').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Whether an event (or test event) already has a delivery to this partner that is still open. */
export async function hasOpenDelivery(db: Executor, of: { event_id: string | null; test_event_id: string | null }): Promise<boolean> {
  const q = db.selectFrom('webhook_delivery').select('id').where('status', 'in', OPEN);
  const row = await (of.event_id !== null ? q.where('event_id', '=', of.event_id) : q.where('test_event_id', '=', of.test_event_id)).limit(1).executeTakeFirst();
  return row !== undefined;
}
