import type { Event, EventsPage } from '../../../generated/partner/types.gen.js';
import { pollPage, readBodies, type PollOutcome, type ServedEvent } from '../../db/repositories/event-position.repository.js';
import { AppError } from '../../lib/errors.js';
import type { ServiceDeps } from '../deps.js';
import { releaseDueActions } from './hold.js';

/** Most events per call (interface 4.4, 8); larger `limit`s are cut down to it. */
export const MAX_EVENTS_PER_CALL = 200;

export interface PollRequest {
  externalSystemId: string;
  /** The partner's `since`: confirms every event returned at or before it. */
  since?: Date;
  limit?: number;
}

/**
 * GET /api/external/events, one partner at a time (its cursor row is locked for the
 * call). Gap-free by construction (N6):
 *
 * 1. Events get a position (an event_position row) only here, and only once they
 *    are committed: still-open transactions' events are invisible to the positioning
 *    statement and get a position on a later call (found by their writer's transaction
 *    id, through the cursor's positioning mark: migrations 0011 and 0102).
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
 * All of it is one statement, one round trip after authentication: the PL/pgSQL
 * function lumen_poll_events (migration 0102) locks the cursor row, applies the minimum
 * interval, confirms, reads, positions, and writes the cursor only when it moved (or to
 * time a partner with a minimum interval), in the implicit transaction of its statement.
 * Held events whose undo window has passed go to the outbox first (hold.ts), so a
 * partner polling never waits for the pump's next round to see them: the function
 * reports such an action before it does anything else, and only then (rarely) are they
 * released here and the function called again, without the check (two calls).
 *
 * With a read replica in use (src/db/read-replica.ts), the statement on the primary
 * handles positions only, narrow rows; the envelopes (the bulk of the answer) are
 * then read from the replica, and those it has not replayed yet from the primary, so
 * the call never waits for the replica.
 */
export async function pollEvents(deps: ServiceDeps, req: PollRequest): Promise<EventsPage> {
  const limit = Math.min(Math.max(1, Math.trunc(req.limit ?? MAX_EVENTS_PER_CALL)), MAX_EVENTS_PER_CALL);
  const bodies = deps.reads.status().state !== 'in-use';
  const args = { externalSystemId: req.externalSystemId, since: req.since ?? null, limit, bodies };
  let served: PollOutcome = await pollPage(deps.db, { ...args, releaseCheck: true });
  if (served.kind === 'release-due') {
    await releaseDueActions(deps.db, undefined, { seenDue: true });
    served = await pollPage(deps.db, { ...args, releaseCheck: false });
  }
  if (served.kind === 'release-due') throw new Error('events poll: release check answered though not asked');
  if (served.kind === 'rate-limited') throw rateLimited(served.retryAfter, served.minIntervalSeconds);
  const page = bodies ? served.page : await withBodies(deps, req.externalSystemId, served.page);
  const events = page.flatMap((r) => (r.body === null ? [] : [JSON.parse(r.body) as Event]));
  return { events, nextSince: served.nextSince.toISOString(), hasMore: served.hasMore };
}

/** The envelopes of positioned events: from the replica, and what it lacks from the primary (an event gone from both is left out). */
async function withBodies(deps: ServiceDeps, externalSystemId: string, page: ServedEvent[]): Promise<ServedEvent[]> {
  const seqs = page.map((r) => r.write_seq);
  const found = await deps.reads.run((db) => readBodies(db, externalSystemId, seqs));
  const missing = seqs.filter((s) => !found.has(s));
  if (missing.length > 0) for (const [seq, body] of await readBodies(deps.db, externalSystemId, missing)) found.set(seq, body);
  return page.map((r) => ({ ...r, body: found.get(r.write_seq) ?? null }));
}

/**
 * The partner's optional minimum interval applies only after a call that answered
 * `hasMore: false`; a partner draining a backlog is never held back (lumen_poll_events
 * decides, in whole milliseconds, and confirms nothing for a call it refuses).
 */
function rateLimited(retryAfter: number, minIntervalSeconds: number): AppError {
  return new AppError('rate-limited', { retryAfter }, undefined, {
    'retry-after': String(retryAfter),
    'ratelimit-policy': `"poll-interval";q=1;w=${minIntervalSeconds}`,
    ratelimit: `"poll-interval";r=0;t=${retryAfter}`,
  });
}
