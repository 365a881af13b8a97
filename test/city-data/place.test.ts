import { describe, expect, it } from 'vitest';
import type { PageResult } from '../../src/db/repositories/city-data/page.repository.js';
import type { ReadStart } from '../../src/db/repositories/city-data/read-walk.repository.js';
import { continuesWalk, endRank, placePage } from '../../src/services/city-data/place.js';

/**
 * Placing a page where the snapshot may be older than the one that ranked a position
 * (a replica behind the primary): a rank is used only under a horizon at or above its
 * epoch's, and an unchecked rank is carried on only where reads are never older.
 */

const H = (s: number) => `2026-11-24T12:00:${String(s).padStart(2, '0')}.000000Z`;
const ranked = (horizon: string) => ({ position: { u: H(1), id: '00000000-0000-4000-8000-000000000001' }, rank: { rank: 400, horizon, below: 900 } });
const start = (horizon: string, r: ReturnType<typeof ranked> | null): ReadStart => ({ horizon, total: null, checkpoint: null, ranked: r });

describe('placing a page from a ranked position', () => {
  it('uses a rank only when the page horizon is not below its epoch horizon', () => {
    expect(placePage(5, 100, start(H(30), ranked(H(20))))).toMatchObject({ skip: 0, base: { kind: 'check', rank: 400 } });
    expect(placePage(5, 100, start(H(20), ranked(H(20))))).toMatchObject({ skip: 0, base: { kind: 'check' } });
    // The replica is behind the snapshot that ranked: counted from the start instead.
    expect(placePage(5, 100, start(H(10), ranked(H(20))))).toEqual({ after: null, skip: 400, base: { kind: 'exact', rank: 0 } });
  });

  it('carries an inherited rank on only when asked to (reads on the primary)', () => {
    const page: PageResult = { items: ['{}'], fetched: 101, last: { u: H(5), id: '00000000-0000-4000-8000-000000000002' }, rows: 1000, tailNow: 10, tailRank: null, tailCache: null, mid: null, low: null, horizon: null, start: null };
    const place = { after: { u: H(1), id: '00000000-0000-4000-8000-000000000001' }, skip: 0, base: { kind: 'inherited' as const, rank: 300, epoch: { horizon: H(20), below: 900 } } };
    expect(endRank(place, H(30), page, 100)).toEqual({ rank: 400, horizon: H(20), below: 900 });
    expect(endRank(place, H(30), page, 100, false)).toBeNull();
    // A rank known exactly in this snapshot is kept either way.
    const exact = { after: null, skip: 0, base: { kind: 'exact' as const, rank: 0 } };
    expect(endRank(exact, H(30), page, 100, false)).toEqual({ rank: 100, horizon: H(30), below: 990 });
  });
});

describe('a page that continues the walk', () => {
  const position = { u: H(3), id: '00000000-0000-4000-8000-000000000003' };
  const walked = (page: number, at: typeof position | null): ReadStart => ({ horizon: H(30), total: null, checkpoint: { page, position: at, rank: null }, ranked: null });

  it('is the page right after one whose end the walk remembers, placed right after that end', () => {
    expect(continuesWalk(8, walked(7, position))).toBe(true);
    expect(placePage(8, 100, walked(7, position))).toEqual({ after: position, skip: 0, base: null });
  });

  it('is not a page further on, a page without a checkpoint, or one after an end not known', () => {
    expect(continuesWalk(9, walked(7, position))).toBe(false);
    expect(placePage(9, 100, walked(7, position))).toMatchObject({ after: position, skip: 100 });
    expect(continuesWalk(8, start(H(30), null))).toBe(false);
    expect(continuesWalk(8, walked(7, null))).toBe(false);
  });
});
