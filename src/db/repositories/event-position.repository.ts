import { sql, type RawBuilder } from 'kysely';
import type { Executor, Tx } from '../database.js';

/** An event as polling serves it: the exact envelope bytes and its position. */
export interface ServedEvent {
  /** Null when the event is gone (retention) but its position is still there, or when it was not read (`bodies: false`). */
  body: string | null;
  published_at: Date;
  write_seq: number;
}

/** Whether a statement reads the events' envelopes, or only positions them (the envelopes then come from the replica: readBodies). */
export interface BodyOption {
  readonly bodies: boolean;
}

const bodyOf = (o: BodyOption) => (o.bodies ? sql`coalesce(body, payload::text)` : sql`NULL::text`);

/**
 * Where the partner's next positioning starts (event_cursor.positioned_seq and
 * positioned_snapshot, migration 0011); both null before anything was positioned.
 * Every committed event without a position has write_seq > seq, or a writer (write_xid)
 * that `snapshot` does not see: one it lists as running, or at or above its xmax.
 */
export interface PositionMark {
  seq: number | null;
  /** pg_snapshot as text (xmin:xmax:running,...). */
  snapshot: string | null;
}

export interface Positioned {
  /** The events just positioned, in position order. */
  events: ServedEvent[];
  /** How many events were chosen; `count` means more may be waiting. */
  taken: number;
  /** The mark for the next call. */
  mark: PositionMark;
}

/**
 * Up to `count` of the partner's positions after `after` (null: from the first), in
 * order, with their events. The positions are cut to `count` before the join, so only
 * the events served are read, whatever plan the statistics choose. A position whose
 * event is gone still counts (a position given in the instant its event was deleted
 * can outlive it: there is no foreign key), so no later position is taken for it.
 * Only the stored envelope text is read: `payload` (jsonb, which the driver would
 * parse) only for an event that has no body.
 */
export async function readPositioned(tx: Tx, externalSystemId: string, after: Date | null, count: number, o: BodyOption = { bodies: true }): Promise<ServedEvent[]> {
  let positions = tx.selectFrom('event_position').select(['external_system_id', 'write_seq', 'published_at']).where('external_system_id', '=', externalSystemId);
  if (after) positions = positions.where('published_at', '>', after);
  return tx
    .selectFrom(positions.orderBy('published_at').limit(count).as('p'))
    .leftJoin('event as e', (j) => j.onRef('e.external_system_id', '=', 'p.external_system_id').onRef('e.write_seq', '=', 'p.write_seq'))
    .select([o.bodies ? sql<string | null>`coalesce(e.body, e.payload::text)`.as('body') : sql<string | null>`NULL::text`.as('body'), 'p.published_at', 'p.write_seq'])
    .orderBy('p.published_at')
    .execute();
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

/**
 * Gives up to `count` of the partner's committed events without a position their
 * positions, in write order: the first at max(now, lastPublished + 1 ms), each next one
 * 1 ms later. Events of transactions still open are invisible here and are positioned
 * by a later call.
 *
 * The candidates are the events after `mark.seq` in write order (none of them has a
 * position) and those at or before it without a position whose writer `mark.snapshot`
 * did not see (transactions that committed late), so a call never walks the positioned
 * part of a backlog. The next mark keeps PositionMark's invariant:
 * - seq becomes the greatest write_seq positioned;
 * - the snapshot becomes this statement's: every committed event it sees was a
 *   candidate and got a position, and one it does not see has a writer it does not
 *   see. Except when the call filled its batch with late events alone: some may be
 *   left, so the snapshot stays. A batch that takes any event after the old seq took
 *   every late candidate, all of them being earlier in write order.
 */
export async function positionCommitted(tx: Tx, externalSystemId: string, mark: PositionMark, lastPublished: Date | null, count: number, o: BodyOption = { bodies: true }): Promise<Positioned> {
  const { rows } = await sql<{ snapshot: string; taken: number; max_seq: number | null; body: string | null; published_at: Date | null; write_seq: number | null }>`
    WITH todo AS (
      SELECT write_seq, body, row_number() OVER (ORDER BY write_seq) AS rn
      FROM (${candidates(externalSystemId, mark, count, o)}) c
      ORDER BY write_seq
      LIMIT ${count}
    ), base AS (
      SELECT greatest(
        date_trunc('milliseconds', clock_timestamp()),
        coalesce(${lastPublished}::timestamptz + interval '1 millisecond', '-infinity'::timestamptz)
      ) AS t
    ), placed AS (
      INSERT INTO event_position (external_system_id, published_at, write_seq)
      SELECT ${externalSystemId}, base.t + (todo.rn - 1) * interval '1 millisecond', todo.write_seq
      FROM todo, base
      RETURNING write_seq, published_at
    ), taken AS (
      SELECT count(*)::int AS n, max(write_seq) AS max_seq FROM todo
    )
    SELECT pg_current_snapshot()::text AS snapshot, taken.n AS taken, taken.max_seq, t.body, p.published_at, p.write_seq
    FROM taken LEFT JOIN (placed p JOIN todo t ON t.write_seq = p.write_seq) ON true
    ORDER BY p.published_at`.execute(tx);

  const head = rows[0]!;
  return {
    events: rows.flatMap((r) => (r.published_at !== null && r.write_seq !== null && (r.body !== null || !o.bodies) ? [{ body: r.body, published_at: r.published_at, write_seq: Number(r.write_seq) }] : [])),
    taken: head.taken,
    mark: nextMark(mark, { count, taken: head.taken, maxSeq: head.max_seq, snapshot: head.snapshot }),
  };
}

/**
 * The mark after a positioning that chose `taken` of at most `count` events, the
 * greatest write_seq among them `maxSeq` (null for none), under `snapshot`. See
 * positionCommitted for why this keeps the invariant.
 */
export function nextMark(mark: PositionMark, batch: { count: number; taken: number; maxSeq: number | null; snapshot: string }): PositionMark {
  const seq = batch.maxSeq === null ? mark.seq : Math.max(mark.seq ?? batch.maxSeq, batch.maxSeq);
  if (seq === null) return { seq: null, snapshot: null };
  const lateOnly = batch.taken === batch.count && mark.seq !== null && batch.maxSeq !== null && batch.maxSeq <= mark.seq;
  return { seq, snapshot: lateOnly ? mark.snapshot : batch.snapshot };
}

function candidates(externalSystemId: string, mark: PositionMark, count: number, o: BodyOption): RawBuilder<unknown> {
  const body = bodyOf(o);
  const after = sql`SELECT write_seq, ${body} AS body FROM event
    WHERE external_system_id = ${externalSystemId} AND write_seq > ${mark.seq ?? 0}
    ORDER BY write_seq LIMIT ${count}`;
  if (mark.seq === null || mark.snapshot === null) return after;
  // Writers the snapshot did not see: at or above its xmax (one index range) or on its
  // list of running transactions (one index lookup each). Both come as values, not as
  // expressions of the stored snapshot, so the plan is made for them: estimated
  // blind, events written before 0011 (all with writer 0) made the list's lookup a
  // sequential scan of the whole table. A snapshot beyond every id this one knows came
  // from another cluster (a logical restore): then it is read as seeing nothing.
  // Both lookups are fenced (OFFSET 0): the write_seq bound must not draw the planner
  // into walking the partner's history in write order, and the position check must
  // stay one index lookup per candidate (as an anti-join, with statistics that still
  // showed the partner with few positions, it was planned as a scan of all of them per
  // candidate: 88 s for 30,000 candidates, against 0.24 s).
  const [, xmax, running] = mark.snapshot.split(':');
  const foreign = sql`${xmax}::xid8 > pg_snapshot_xmax(pg_current_snapshot())`;
  return sql`(${after})
    UNION ALL
    (SELECT write_seq, body FROM (
      SELECT write_seq, ${body} AS body FROM event
      WHERE external_system_id = ${externalSystemId} AND write_xid >= CASE WHEN ${foreign} THEN '0'::xid8 ELSE ${xmax}::xid8 END
      UNION ALL
      SELECT write_seq, ${body} AS body FROM event
      WHERE external_system_id = ${externalSystemId} AND write_xid = ANY (${running ? running.split(',') : []}::xid8[]) AND NOT ${foreign}
      OFFSET 0
    ) late
    WHERE write_seq <= ${mark.seq}
      AND NOT EXISTS (SELECT 1 FROM event_position p WHERE p.external_system_id = ${externalSystemId} AND p.write_seq = late.write_seq OFFSET 0)
    ORDER BY write_seq LIMIT ${count})`;
}
