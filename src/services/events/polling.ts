import { sql } from 'kysely';
import type { Event, EventsPage } from '../../../generated/partner/types.gen.js';
import type { Tx } from '../../db/database.js';
import { positionCommitted, readBodies, readPositioned, type PositionMark, type ServedEvent } from '../../db/repositories/event-position.repository.js';
import { AppError } from '../../lib/errors.js';
import type { ServiceDeps } from '../deps.js';
import { releaseDueActions } from './hold.js';

/** Most events per call (interface 4.4, 8); larger `limit`s are cut down to it. */
export const MAX_EVENTS_PER_CALL = 200;
/** nextSince before anything was ever confirmed or returned. */
const ORIGIN = new Date(0);

export interface PollRequest {
  externalSystemId: string;
  /** The partner's `since`: confirms every event returned at or before it. */
  since?: Date;
  limit?: number;
}

interface CursorState {
  confirmed_at: Date | null;
  last_published_at: Date | null;
  last_returned_at: Date | null;
  positioned_seq: number | null;
  positioned_snapshot: string | null;
  last_poll_at: Date | null;
  last_has_more: boolean;
  min_interval_seconds: number | null;
  now: Date;
}

/**
 * GET /api/external/events, one partner at a time (its cursor row is locked for the
 * call). Gap-free by construction (N6):
 *
 * 1. Events get a position (an event_position row) only here, and only once they
 *    are committed: still-open transactions' events are invisible to this statement
 *    and get a position on a later call (found by their writer's transaction id, see
 *    positionCommitted).
 * 2. Every new position is strictly greater than every earlier one of the partner
 *    (`max(now, last + 1 ms)`, then +1 ms per event), so events positioned later,
 *    whatever their `occurredAt`, always come after the `nextSince` already handed out.
 * 3. `nextSince` is the position of the last event returned: confirming it confirms
 *    exactly what was returned, also when a limit cuts a group of events written by
 *    one transaction.
 *
 * Confirmation moves forward only, and never past the greatest position returned,
 * so neither an older nor a made-up later `since` can lose an event.
 *
 * A call first reads what is positioned and unconfirmed (limit + 1 rows), then
 * positions only what that leaves short of limit + 1, so at most one event is
 * positioned ahead of what a draining partner has been given. `hasMore` is exactly
 * "a (limit + 1)th event was found": no separate probe.
 *
 * With a read replica in use (src/db/read-replica.ts), the transaction on the primary
 * handles positions only, narrow rows; the envelopes (the bulk of the answer) are
 * then read from the replica, and those it has not replayed yet from the primary, so
 * the call never waits for the replica.
 */
export async function pollEvents(deps: ServiceDeps, req: PollRequest): Promise<EventsPage> {
  const limit = Math.min(Math.max(1, Math.trunc(req.limit ?? MAX_EVENTS_PER_CALL)), MAX_EVENTS_PER_CALL);
  const bodies = deps.reads.status().state !== 'in-use';
  // Held events whose undo window has passed go to the outbox first (hold.ts), so a
  // partner polling never waits for the pump's next round to see them.
  await releaseDueActions(deps.db);
  const served = await deps.db.transaction().execute(async (tx) => {
    const cursor = await lockCursor(tx, req.externalSystemId);
    enforceMinInterval(cursor);

    let confirmed = cursor.confirmed_at;
    if (req.since && cursor.last_returned_at) {
      const upTo = req.since < cursor.last_returned_at ? req.since : cursor.last_returned_at;
      if (!confirmed || upTo > confirmed) confirmed = upTo;
    }

    const read = await readPositioned(tx, req.externalSystemId, confirmed, limit + 1, { bodies });
    let rows = read;
    let taken = 0;
    let mark: PositionMark = { seq: cursor.positioned_seq, snapshot: cursor.positioned_snapshot };
    let lastPublished = cursor.last_published_at;
    if (read.length <= limit) {
      const p = await positionCommitted(tx, req.externalSystemId, mark, lastPublished, limit + 1 - read.length, { bodies });
      rows = [...read, ...p.events];
      taken = p.taken;
      // Nothing positioned: the old mark stays (a newer snapshot alone would move the
      // cursor, and write it, on every idle poll). Keeping it is safe: the next call
      // looks again from the same mark, at worst over the same in-progress transactions.
      if (p.taken > 0) mark = p.mark;
      if (p.events.length > 0) lastPublished = p.events[p.events.length - 1]!.published_at;
    }

    const page = rows.slice(0, limit);
    const hasMore = read.length + taken > limit;
    const lastReturned = page.length > 0 ? page[page.length - 1]!.published_at : null;
    const nextSince = lastReturned ?? confirmed ?? ORIGIN;

    const next = {
      confirmed_at: confirmed,
      last_published_at: lastPublished,
      last_returned_at: later(cursor.last_returned_at, lastReturned),
      positioned_seq: mark.seq,
      positioned_snapshot: mark.snapshot,
      last_has_more: hasMore,
    };
    // Written only when the cursor moves, or, for a partner with a minimum interval, to
    // time the next call (at most once per interval: faster calls were refused above).
    // An idle partner polling in a loop writes nothing.
    const moved =
      !sameTime(next.confirmed_at, cursor.confirmed_at) ||
      !sameTime(next.last_published_at, cursor.last_published_at) ||
      !sameTime(next.last_returned_at, cursor.last_returned_at) ||
      next.positioned_seq !== cursor.positioned_seq ||
      next.positioned_snapshot !== cursor.positioned_snapshot ||
      next.last_has_more !== cursor.last_has_more;
    if (moved || cursor.min_interval_seconds) {
      await tx
        .updateTable('event_cursor')
        .set({ ...next, last_poll_at: cursor.now, updated_at: cursor.now })
        .where('external_system_id', '=', req.externalSystemId)
        .execute();
    }
    return { page, nextSince: nextSince.toISOString(), hasMore };
  });
  const page = bodies ? served.page : await withBodies(deps, req.externalSystemId, served.page);
  const events = page.flatMap((r) => (r.body === null ? [] : [JSON.parse(r.body) as Event]));
  return { events, nextSince: served.nextSince, hasMore: served.hasMore };
}

/** The envelopes of positioned events: from the replica, and what it lacks from the primary (an event gone from both is left out). */
async function withBodies(deps: ServiceDeps, externalSystemId: string, page: ServedEvent[]): Promise<ServedEvent[]> {
  const seqs = page.map((r) => r.write_seq);
  const found = await deps.reads.run((db) => readBodies(db, externalSystemId, seqs));
  const missing = seqs.filter((s) => !found.has(s));
  if (missing.length > 0) for (const [seq, body] of await readBodies(deps.db, externalSystemId, missing)) found.set(seq, body);
  return page.map((r) => ({ ...r, body: found.get(r.write_seq) ?? null }));
}

function sameTime(a: Date | null, b: Date | null): boolean {
  return a === null || b === null ? a === b : a.getTime() === b.getTime();
}

function later(a: Date | null, b: Date | null): Date | null {
  return a && b ? (a > b ? a : b) : (a ?? b);
}

async function lockCursor(tx: Tx, externalSystemId: string): Promise<CursorState> {
  await tx.insertInto('event_cursor').values({ external_system_id: externalSystemId }).onConflict((oc) => oc.column('external_system_id').doNothing()).execute();
  return tx
    .selectFrom('event_cursor as c')
    .innerJoin('external_system as x', 'x.id', 'c.external_system_id')
    .select([
      'c.confirmed_at',
      'c.last_published_at',
      'c.last_returned_at',
      'c.positioned_seq',
      sql<string | null>`c.positioned_snapshot::text`.as('positioned_snapshot'),
      'c.last_poll_at',
      'c.last_has_more',
      'x.events_min_interval_seconds as min_interval_seconds',
      sql<Date>`now()`.as('now'),
    ])
    .where('c.external_system_id', '=', externalSystemId)
    .forUpdate('c')
    .executeTakeFirstOrThrow();
}

/**
 * The partner's optional minimum interval applies only after a call that answered
 * `hasMore: false`; a partner draining a backlog is never held back. Throwing rolls
 * the call back: nothing is confirmed.
 */
function enforceMinInterval(c: CursorState): void {
  if (!c.min_interval_seconds || !c.last_poll_at || c.last_has_more) return;
  const elapsedMs = c.now.getTime() - c.last_poll_at.getTime();
  const waitMs = c.min_interval_seconds * 1000 - elapsedMs;
  if (waitMs <= 0) return;
  const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
  throw new AppError('rate-limited', { retryAfter }, undefined, {
    'retry-after': String(retryAfter),
    'ratelimit-policy': `"poll-interval";q=1;w=${c.min_interval_seconds}`,
    ratelimit: `"poll-interval";r=0;t=${retryAfter}`,
  });
}
