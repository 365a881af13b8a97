import { describe, expect, it } from 'vitest';
import { databaseWithClient } from '../support/database-client.js';

/**
 * The positioning mark (migration 0011): every committed event without a position has
 * write_seq > seq, or a writer the snapshot does not see. Which transactions are open
 * when a test polls depends on the whole cluster, so the rule is pinned here, without one:
 * lumen_position_mark (migration 0102), which lumen_poll_events applies after a
 * positioning that took any event, called with made-up snapshots.
 */
const t = databaseWithClient();

interface Mark {
  seq: number | null;
  snapshot: string | null;
}

async function nextMark(mark: Mark, batch: { count: number; taken: number; maxSeq: number | null; snapshot: string }): Promise<Mark> {
  const { rows } = await t.client.query<{ seq: string | null; snapshot: string | null }>(
    'SELECT next_seq::text AS seq, next_snapshot::text AS snapshot FROM lumen_position_mark($1::bigint, $2::pg_snapshot, $3::int, $4::int, $5::bigint, $6::pg_snapshot)',
    [mark.seq, mark.snapshot, batch.count, batch.taken, batch.maxSeq, batch.snapshot],
  );
  const r = rows[0]!;
  return { seq: r.seq === null ? null : Number(r.seq), snapshot: r.snapshot };
}

describe('lumen_position_mark', () => {
  const mark = { seq: 100, snapshot: '5000:5010:5003' };
  const now = '5100:5120:5100,5111';

  it('takes the new snapshot once every candidate seen was taken', async () => {
    expect(await nextMark(mark, { count: 201, taken: 7, maxSeq: 107, snapshot: now })).toEqual({ seq: 107, snapshot: now });
    expect(await nextMark(mark, { count: 201, taken: 0, maxSeq: null, snapshot: now })).toEqual({ seq: 100, snapshot: now });
  });

  it('takes it also when a full batch reached past the old seq: every late event came before', async () => {
    expect(await nextMark(mark, { count: 3, taken: 3, maxSeq: 101, snapshot: now })).toEqual({ seq: 101, snapshot: now });
  });

  it('keeps the old one when a full batch held late events only: more of them may be left', async () => {
    expect(await nextMark(mark, { count: 3, taken: 3, maxSeq: 60, snapshot: now })).toEqual({ seq: 100, snapshot: mark.snapshot });
  });

  it('stays empty until something is positioned, then starts from the first batch', async () => {
    const empty = { seq: null, snapshot: null };
    expect(await nextMark(empty, { count: 201, taken: 0, maxSeq: null, snapshot: now })).toEqual(empty);
    expect(await nextMark(empty, { count: 3, taken: 3, maxSeq: 3, snapshot: now })).toEqual({ seq: 3, snapshot: now });
  });
});
