import { describe, expect, it } from 'vitest';
import { nextMark } from '../../src/db/repositories/event-position.repository.js';

/**
 * The positioning mark (migration 0011): every committed event without a position has
 * write_seq > seq, or a writer the snapshot does not see. Which transactions are open
 * when a test polls depends on the whole cluster, so the rule is pinned here, without one.
 */
describe('nextMark', () => {
  const mark = { seq: 100, snapshot: '5000:5010:5003' };
  const now = '5100:5120:5100,5111';

  it('takes the new snapshot once every candidate seen was taken', () => {
    expect(nextMark(mark, { count: 201, taken: 7, maxSeq: 107, snapshot: now })).toEqual({ seq: 107, snapshot: now });
    expect(nextMark(mark, { count: 201, taken: 0, maxSeq: null, snapshot: now })).toEqual({ seq: 100, snapshot: now });
  });

  it('takes it also when a full batch reached past the old seq: every late event came before', () => {
    expect(nextMark(mark, { count: 3, taken: 3, maxSeq: 101, snapshot: now })).toEqual({ seq: 101, snapshot: now });
  });

  it('keeps the old one when a full batch held late events only: more of them may be left', () => {
    expect(nextMark(mark, { count: 3, taken: 3, maxSeq: 60, snapshot: now })).toEqual({ seq: 100, snapshot: mark.snapshot });
  });

  it('stays empty until something is positioned, then starts from the first batch', () => {
    const empty = { seq: null, snapshot: null };
    expect(nextMark(empty, { count: 201, taken: 0, maxSeq: null, snapshot: now })).toEqual(empty);
    expect(nextMark(empty, { count: 3, taken: 3, maxSeq: 3, snapshot: now })).toEqual({ seq: 3, snapshot: now });
  });
});
