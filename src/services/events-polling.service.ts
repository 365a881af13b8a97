import { sql } from 'kysely';
import type { Event, EventsPage } from '../../generated/partner/types.gen.js';
import type { Tx } from '../db/database.js';
import { AppError } from '../lib/errors.js';
import type { ServiceDeps } from './deps.js';

/** Most events per call (interface 4.4, 8); larger `limit`s are cut down to it. */
export const MAX_EVENTS_PER_CALL = 200;
/** Most events given a position per call; more are positioned by the following calls. */
const PUBLISH_BATCH = 1000;
/** nextSince before anything was ever confirmed or positioned. */
const ORIGIN = new Date(0);

export interface PollRequest {
  externalSystemId: string;
  /** The partner's `since`: confirms every event positioned at or before it. */
  since?: Date;
  limit?: number;
}

interface CursorState {
  confirmed_at: Date | null;
  last_published_at: Date | null;
  last_poll_at: Date | null;
  last_has_more: boolean;
  min_interval_seconds: number | null;
  now: Date;
}

/**
 * GET /api/external/events, one partner at a time (its cursor row is locked for the
 * call). Gap-free by construction (N6):
 *
 * 1. Events get a position (`published_at`) only here, and only once they are
 *    committed: still-open transactions' events are invisible to this statement and
 *    get a position on a later call.
 * 2. Every new position is strictly greater than every earlier one of the partner
 *    (`max(now, last + 1 ms)`, then +1 ms per event), so events positioned later,
 *    whatever their `occurredAt`, always come after the `nextSince` already handed out.
 * 3. `nextSince` is the position of the last event returned: confirming it confirms
 *    exactly what was returned, also when a limit cuts a group of events written by
 *    one transaction.
 *
 * Confirmation moves forward only, and never past the greatest position handed out,
 * so neither an older nor a made-up later `since` can lose an event.
 */
export async function pollEvents(deps: ServiceDeps, req: PollRequest): Promise<EventsPage> {
  const limit = Math.min(Math.max(1, Math.trunc(req.limit ?? MAX_EVENTS_PER_CALL)), MAX_EVENTS_PER_CALL);
  return deps.db.transaction().execute(async (tx) => {
    const cursor = await lockCursor(tx, req.externalSystemId);
    enforceMinInterval(cursor);

    let confirmed = cursor.confirmed_at;
    if (req.since && cursor.last_published_at) {
      const upTo = req.since < cursor.last_published_at ? req.since : cursor.last_published_at;
      if (!confirmed || upTo > confirmed) confirmed = upTo;
    }

    const published = await publishCommittedEvents(tx, req.externalSystemId, cursor.last_published_at);
    const lastPublished = published ?? cursor.last_published_at;
    const backlog = await tx
      .selectFrom('event')
      .select('id')
      .where('external_system_id', '=', req.externalSystemId)
      .where('published_at', 'is', null)
      .limit(1)
      .executeTakeFirst();

    let read = tx
      .selectFrom('event')
      .select(['body', 'payload', 'published_at'])
      .where('external_system_id', '=', req.externalSystemId)
      .where('published_at', 'is not', null);
    if (confirmed) read = read.where('published_at', '>', confirmed);
    const rows = await read.orderBy('published_at').limit(limit + 1).execute();

    const page = rows.slice(0, limit);
    const hasMore = rows.length > limit || backlog !== undefined;
    const events = page.map((r) => (r.body !== null ? JSON.parse(r.body) : r.payload) as Event);
    const nextSince = page.length > 0 ? page[page.length - 1]!.published_at! : (confirmed ?? ORIGIN);

    await tx
      .updateTable('event_cursor')
      .set({ confirmed_at: confirmed, last_published_at: lastPublished, last_poll_at: cursor.now, last_has_more: hasMore, updated_at: cursor.now })
      .where('external_system_id', '=', req.externalSystemId)
      .execute();
    return { events, nextSince: nextSince.toISOString(), hasMore };
  });
}

async function lockCursor(tx: Tx, externalSystemId: string): Promise<CursorState> {
  await tx.insertInto('event_cursor').values({ external_system_id: externalSystemId }).onConflict((oc) => oc.column('external_system_id').doNothing()).execute();
  return tx
    .selectFrom('event_cursor as c')
    .innerJoin('external_system as x', 'x.id', 'c.external_system_id')
    .select(['c.confirmed_at', 'c.last_published_at', 'c.last_poll_at', 'c.last_has_more', 'x.events_min_interval_seconds as min_interval_seconds', sql<Date>`now()`.as('now')])
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

/**
 * Gives the partner's committed, not yet positioned events their positions, in the
 * order they were written: the first at max(now, last + 1 ms),
 * each next one 1 ms later. Returns the greatest position given, or null for none.
 */
async function publishCommittedEvents(tx: Tx, externalSystemId: string, lastPublished: Date | null): Promise<Date | null> {
  const { rows } = await sql<{ last: Date | null }>`
    WITH todo AS (
      SELECT id, row_number() OVER (ORDER BY write_seq) AS rn
      FROM event
      WHERE external_system_id = ${externalSystemId} AND published_at IS NULL
      ORDER BY write_seq
      LIMIT ${PUBLISH_BATCH}
    ), base AS (
      SELECT greatest(
        date_trunc('milliseconds', clock_timestamp()),
        coalesce(${lastPublished}::timestamptz + interval '1 millisecond', '-infinity'::timestamptz)
      ) AS t
    ), stamped AS (
      UPDATE event e
      SET published_at = base.t + (todo.rn - 1) * interval '1 millisecond'
      FROM todo, base
      WHERE e.id = todo.id
      RETURNING e.published_at
    )
    SELECT max(published_at) AS last FROM stamped`.execute(tx);
  return rows[0]?.last ?? null;
}
