import { sql } from 'kysely';
import type { Executor } from '../database.js';

/** An event as polling serves it: the exact envelope bytes and its position. */
export interface ServedEvent {
  /** Null when the event is gone (retention) but its position is still there, or when it was not read (`bodies: false`). */
  body: string | null;
  published_at: Date;
  write_seq: number;
}

/** What one events poll answered (lumen_poll_events, migration 0102). */
export type PollOutcome =
  /** An undoable action's window has passed: nothing was done; release, then poll again without the check. */
  | { readonly kind: 'release-due' }
  /** Inside the partner's minimum interval: nothing was confirmed or written. */
  | { readonly kind: 'rate-limited'; readonly retryAfter: number; readonly minIntervalSeconds: number }
  | { readonly kind: 'page'; readonly page: ServedEvent[]; readonly nextSince: Date; readonly hasMore: boolean };

export interface PollArgs {
  readonly externalSystemId: string;
  /** The partner's `since`, null without one. */
  readonly since: Date | null;
  /** Most events in the page (1 to 200). */
  readonly limit: number;
  /** Whether the page carries the envelopes, or only positions them (the envelopes then come from the replica: readBodies). */
  readonly bodies: boolean;
  /** Whether to answer `release-due` when an undoable action's window has passed. */
  readonly releaseCheck: boolean;
}

interface PollRow {
  due: boolean | null;
  retry_after: number | null;
  min_interval: number | null;
  next_since: Date | null;
  has_more: boolean | null;
  event_body: string | null;
  event_published_at: Date | null;
  event_write_seq: number | null;
}

/**
 * One events poll of the partner, in one statement: the function locks the cursor,
 * confirms, reads what is positioned, positions committed events when that is short,
 * and writes the cursor when it moved (see migration 0102 and polling.ts). Its first
 * row says what happened; for a page the page's events follow, in order.
 */
export async function pollPage(db: Executor, a: PollArgs): Promise<PollOutcome> {
  const { rows } = await sql<PollRow>`SELECT * FROM lumen_poll_events(${a.externalSystemId}::uuid, ${a.since}::timestamptz, ${a.limit}::int, ${a.bodies}::boolean, ${a.releaseCheck}::boolean)`.execute(db);
  const head = rows[0]!;
  if (head.due) return { kind: 'release-due' };
  if (head.retry_after !== null) return { kind: 'rate-limited', retryAfter: head.retry_after, minIntervalSeconds: head.min_interval! };
  const page = rows.slice(1).map((r) => ({ body: r.event_body, published_at: r.event_published_at!, write_seq: Number(r.event_write_seq) }));
  return { kind: 'page', page, nextSince: head.next_since!, hasMore: head.has_more! };
}

/**
 * The envelopes of the partner's events `writeSeqs` (positioned by the caller), by
 * write_seq; an event this server does not have (gone, or on a replica not replayed
 * yet) is left out.
 */
export async function readBodies(db: Executor, externalSystemId: string, writeSeqs: readonly number[]): Promise<Map<number, string>> {
  if (writeSeqs.length === 0) return new Map();
  const { rows } = await sql<{ write_seq: number; body: string }>`SELECT write_seq, coalesce(body, payload::text) AS body FROM event
    WHERE external_system_id = ${externalSystemId} AND write_seq = ANY (${writeSeqs as number[]}::bigint[])`.execute(db);
  return new Map(rows.map((r) => [Number(r.write_seq), r.body]));
}
