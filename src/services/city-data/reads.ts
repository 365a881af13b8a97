import { parseDateTime } from '../../lib/time.js';
import type { PolePage, ServiceOrderPage } from '../../../generated/partner/types.gen.js';
import { readPage, type PageResult } from '../../db/repositories/city-data/page.repository.js';
import { forgetRanks, readHorizon, readStart, saveWalkPage, type Epoch, type ReadStart, type TotalCache, type WalkKey } from '../../db/repositories/city-data/read-walk.repository.js';
import type { CityResource } from '../../db/tables/city-data.js';
import { cursorCodec } from '../../lib/cursor.js';
import { AppError } from '../../lib/errors.js';
import { JsonText } from '../../lib/json-text.js';
import { continuesWalk, endRank, placePage, placementHeld, rankToCheck, type Placement } from './place.js';
import { matchingPlan, pageTotal } from './total.js';
import type { ServiceDeps } from '../deps.js';

/**
 * The two city-data lists (2.2-2.4, 4.3, N5). A page costs three statements: the
 * horizon with what the walk remembers, the page itself (items as JSON text, the
 * counts for `total` and ranks, one snapshot), and one asynchronously committed
 * write of what the walk remembers next; a cursor page only the first two, without
 * anything to remember. Without updatedSince the first two are one: the page
 * statement reads the horizon from its own snapshot (a cursor page), and on a numbered
 * page what the walk remembers too, continuing after the walk's end of the page before
 * (a page out of order takes a second read, placed from what the first found). The first two run on the read replica while it is usable
 * (src/db/read-replica.ts), the write on the primary.
 */

/** 4.3 / N5 limits. */
export const DEFAULT_PAGE_SIZE = 500;
export const MAX_PAGE_SIZE = 1000;
/** Pages beyond this cannot hold items (and are not remembered). */
const MAX_PAGE = 1_000_000_000;

export interface ListRequest {
  readonly page: number;
  /**
   * As requested (cut down to MAX_PAGE_SIZE here); null when the call named none: the
   * default, or on a cursor call the size the walk was served with.
   */
  readonly pageSize: number | null;
  /** ISO 8601 instant, inclusive, or null. */
  readonly updatedSince: string | null;
  readonly cursor: string | null;
}

export interface Reader {
  readonly tenantId: string;
  readonly externalSystemId: string;
}

/** What a cursor carries: the walk's tenant and filter, its position and cached total. */
interface CursorState {
  v: 2;
  /** tenant */
  t: string;
  /** updatedSince (microseconds ISO) or null */
  s: string | null;
  /** position: updated_at (microseconds ISO) and id of the last item served */
  u: string;
  i: string;
  /** number of the page this cursor reads */
  n: number;
  /** page size of the walk, for a cursor call that names none (absent in cursors issued before it was kept) */
  p?: number;
  /** cached total (city-data/total.ts): [matchingBelow, below, horizon] */
  c: [number, number, string] | null;
  /**
   * The horizon (microseconds ISO) of the page that issued the cursor: the next page's
   * horizon is at least this on the primary (page.repository.ts, `floor`), so a walk does
   * not end short of where it already stood (absent in cursors issued before it was kept).
   */
  h?: string;
}

interface ListKind {
  readonly resource: CityResource;
  /** MAC purpose of this list's cursors: a cursor of the other list is refused. */
  readonly purpose: string;
}

/** The instants PostgreSQL's ISO input takes (years 1 to 9999); `updatedSince` outside them is clamped, which keeps its meaning. */
const EARLIEST_MS = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** A client instant as microseconds ISO, truncated to the millisecond (a lower bound stays inclusive). */
function sinceMicros(raw: string): string | null {
  const ms = parseDateTime(raw)?.getTime();
  if (ms === undefined) return null;
  return new Date(Math.min(Math.max(ms, EARLIEST_MS), LATEST_MS)).toISOString().replace('Z', '000Z');
}

const MICROS_ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function invalidCursor(message: string): AppError {
  return new AppError('invalid-cursor', {}, [{ pointer: '/query/cursor', message }]);
}

const count = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) >= 0;

function readCursor(deps: ServiceDeps, purpose: string, tenantId: string, token: string): CursorState {
  const value = cursorCodec(deps.config.secretKey).decode(purpose, token) as (Omit<Partial<CursorState>, 'v' | 'c'> & { v?: unknown; c?: unknown }) | null;
  // Version 1 cursors (before 0010) carried a total cache of another form: it is dropped and counted again.
  if (!value || (value.v !== 1 && value.v !== 2)) throw invalidCursor('not a cursor of this list');
  const c = value.v === 2 ? value.c : null;
  const ok =
    typeof value.t === 'string' &&
    (value.s === null || (typeof value.s === 'string' && MICROS_ISO.test(value.s))) &&
    typeof value.u === 'string' &&
    MICROS_ISO.test(value.u) &&
    typeof value.i === 'string' &&
    UUID.test(value.i) &&
    Number.isInteger(value.n) &&
    value.n! >= 1 &&
    value.n! <= MAX_PAGE &&
    (value.p === undefined || (Number.isInteger(value.p) && value.p >= 1 && value.p <= MAX_PAGE_SIZE)) &&
    (c === null || (Array.isArray(c) && c.length === 3 && count(c[0]) && count(c[1]) && typeof c[2] === 'string' && MICROS_ISO.test(c[2]))) &&
    (value.h === undefined || (typeof value.h === 'string' && MICROS_ISO.test(value.h)));
  if (!ok) throw invalidCursor('not a cursor of this list');
  if (value.t !== tenantId) throw invalidCursor('the cursor belongs to another tenant');
  return {
    v: 2,
    t: value.t!,
    s: value.s ?? null,
    u: value.u!,
    i: value.i!,
    n: value.n!,
    ...(value.p === undefined ? {} : { p: value.p }),
    c: c as CursorState['c'],
    ...(value.h === undefined ? {} : { h: value.h }),
  };
}

/** The envelope around the items PostgreSQL wrote, in the order the contract lists its fields. */
function envelope<P>(items: readonly string[], page: number, pageSize: number, total: number, nextCursor: string | null, resumeCursor: string | null = null): JsonText<P> {
  return new JsonText<P>('{"items":[', ...items, `],"page":${page},"pageSize":${pageSize},"total":${total},"nextCursor":${JSON.stringify(nextCursor)},"resumeCursor":${JSON.stringify(resumeCursor)}}`);
}

/** The smallest id: a position before every item of an instant. */
const BEFORE_ANY_ID = '00000000-0000-0000-0000-000000000000';

interface Served {
  readonly page: number;
  readonly since: string | null;
  readonly result: PageResult;
  readonly total: number;
  readonly cache: TotalCache | null;
  /** Where the walk stood before this page (a cursor's item, a page's placement), for a resume cursor when the page is empty. */
  readonly before: { u: string; id: string } | null;
  /** The horizon the page was read at, carried by its next cursor. */
  readonly horizon: string;
}

/**
 * The envelope of a served page: a cursor to the item after it when more follow; at the
 * end of the walk instead, a resume cursor, the position after the last item served (or
 * where the walk stood, when this last page was empty). Sent back as `cursor` in the next
 * round, it reads strictly after that position: nothing of this round comes again
 * (items served were all below the walk's horizon, so a write committing later gets a
 * later position and is read), unlike `updatedSince`, which is inclusive. A round of
 * a city that has nothing yet, without `updatedSince`, has none: the next round
 * starts from the beginning.
 */
function answer<P>(deps: ServiceDeps, kind: ListKind, reader: Reader, pageSize: number, s: Served): JsonText<P> {
  const last = s.result.last;
  const codec = cursorCodec(deps.config.secretKey);
  let nextCursor: string | null = null;
  let resumeCursor: string | null = null;
  if (s.result.fetched > pageSize && last !== null && s.page < MAX_PAGE) {
    const c = s.cache;
    const state: CursorState = { v: 2, t: reader.tenantId, s: s.since, u: last.u, i: last.id, n: s.page + 1, p: pageSize, c: c ? [c.matchingBelow, c.below, c.horizon] : null, h: s.horizon };
    nextCursor = codec.encode(kind.purpose, state);
  } else {
    const at = last ?? s.before ?? (s.since !== null ? { u: s.since, id: BEFORE_ANY_ID } : null);
    // A new round: from the position on (its filter starts there), page 1, its total counted anew.
    if (at !== null) resumeCursor = codec.encode(kind.purpose, { v: 2, t: reader.tenantId, s: at.u, u: at.u, i: at.id, n: 1, p: pageSize, c: null } satisfies CursorState);
  }
  return envelope<P>(s.result.items, s.page, pageSize, s.total, nextCursor, resumeCursor);
}

/** A page by cursor: continues after the cursor's item; remembers nothing (the next cursor carries it all). */
async function cursorPage<P>(deps: ServiceDeps, kind: ListKind, reader: Reader, requested: number | null, token: string): Promise<JsonText<P>> {
  const state = readCursor(deps, kind.purpose, reader.tenantId, token);
  // A call without pageSize keeps the walk's size; one with it changes the size from here on.
  const pageSize = requested ?? state.p ?? DEFAULT_PAGE_SIZE;
  const cache = state.c ? { matchingBelow: state.c[0], below: state.c[1], horizon: state.c[2] } : null;
  // Without updatedSince the answer needs nothing measured at the horizon: one
  // statement reads it and the page from its own snapshot (the usual walk, a full sync).
  // The page before's horizon holds on the primary; a replica may not have replayed as far.
  const floor = (onReplica: boolean) => (onReplica ? null : (state.h ?? null));
  if (state.s === null) {
    const result = await deps.reads.run((db, onReplica) =>
      readPage(db, kind.resource, {
        tenantId: reader.tenantId,
        since: null,
        horizon: null,
        floor: floor(onReplica),
        after: { u: state.u, id: state.i },
        skip: 0,
        limit: pageSize,
        rankHorizon: null,
        matching: { kind: 'none' },
      }),
    );
    return answer(deps, kind, reader, pageSize, { page: state.n, since: null, result, total: result.rows, cache: null, before: { u: state.u, id: state.i }, horizon: result.horizon! });
  }
  // On the replica when it is usable: the horizon and the page from the same server.
  const { horizon, matching, result } = await deps.reads.run(async (db, onReplica) => {
    // The horizon first, in its own statement (the count's plan depends on it); the rows are read by a later one.
    const read = await readHorizon(db);
    const least = floor(onReplica);
    const horizon = least !== null && least > read ? least : read;
    const matching = matchingPlan(state.s, horizon, cache);
    const result = await readPage(db, kind.resource, {
      tenantId: reader.tenantId,
      since: state.s,
      horizon,
      after: { u: state.u, id: state.i },
      skip: 0,
      limit: pageSize,
      rankHorizon: null,
      matching,
    });
    return { horizon, matching, result };
  });
  const t = pageTotal(matching, horizon, cache, result);
  return answer(deps, kind, reader, pageSize, { page: state.n, since: state.s, result, ...t, before: { u: state.u, id: state.i }, horizon });
}

async function numberedPage<P>(deps: ServiceDeps, kind: ListKind, reader: Reader, pageSize: number, page: number, since: string | null): Promise<JsonText<P>> {
  if (page > MAX_PAGE) {
    const { horizon, matching, result } = await deps.reads.run(async (db) => {
      const horizon = await readHorizon(db);
      const matching = matchingPlan(since, horizon, null);
      const result = await readPage(db, kind.resource, { tenantId: reader.tenantId, since, horizon, after: null, skip: 0, limit: 0, rankHorizon: null, matching });
      return { horizon, matching, result };
    });
    return envelope<P>([], page, pageSize, pageTotal(matching, horizon, null, result).total, null);
  }

  const key: WalkKey = { externalSystemId: reader.externalSystemId, tenantId: reader.tenantId, resource: kind.resource, since, pageSize };
  // The reads on the replica when it is usable (the walk's memory as far as it has
  // replayed it: an older checkpoint only places the page by counting from further
  // back), what the page leaves behind on the primary, without waiting for the replica.
  const { start, matching, place, result, broken, onReplica } = await deps.reads.run(async (db, onReplica) => {
    // Without updatedSince, the page statement reads the horizon (and on a page > 1 the
    // walk's start) itself: nothing of the answer depends on the horizon but the ranks
    // the walk keeps, which the argument of total.ts allows from the page's own snapshot.
    // In order (page 1, or the page after one whose end the walk remembers, as a sync
    // loop reads) that one statement is the page; out of order it read no item, and
    // the page is placed from the start it read, as below.
    let first: PageResult | null = null;
    const target = (page - 1) * pageSize;
    if (since === null) {
      first = await readPage(db, kind.resource, {
        tenantId: reader.tenantId,
        since: null,
        horizon: null,
        after: page === 1 ? null : { walk: key, page, target },
        skip: 0,
        limit: pageSize,
        rankHorizon: null,
        matching: { kind: 'none' },
      });
      const start: ReadStart = first.start ?? { horizon: first.horizon!, total: null, checkpoint: null, ranked: null };
      const place = placePage(page, pageSize, start);
      if (page === 1 || continuesWalk(page, start)) {
        return { start, matching: { kind: 'none' } as const, place, result: first, broken: null, onReplica };
      }
    }
    // The horizon first, in its own statement (with what the walk remembers), unless the
    // first read gave them; the rows are read by a later statement.
    const start = first?.start ?? (await readStart(db, key, page, target));
    const matching = matchingPlan(since, start.horizon, start.total);
    const read = (place: Placement) =>
      readPage(db, kind.resource, { tenantId: reader.tenantId, since, horizon: start.horizon, after: place.after, skip: place.skip, limit: pageSize, rankHorizon: rankToCheck(place), matching });
    let place = placePage(page, pageSize, start);
    let result = await read(place);
    let broken: Epoch | null = null;
    if (!placementHeld(place, result) && place.base?.kind === 'check') {
      // A row before the ranked position changed since it was ranked: forget that rank, place the page otherwise.
      broken = place.base.epoch;
      place = placePage(page, pageSize, start, false);
      result = await read(place);
    }
    return { start, matching, place, result, broken, onReplica };
  });
  const t = pageTotal(matching, start.horizon, start.total, result);

  // Where the page ended (its start when empty; nothing when placed beyond the end), and the total, for the next page.
  const keep = result.last !== null || place.skip === 0;
  const position = result.last ?? place.after;
  const freshTotal = t.cache !== null && (page === 1 || start.total === null || result.mid !== null || result.low !== null || (result.tailCache ?? 0) > result.tailNow);
  await Promise.all([
    broken ? forgetRanks(deps.db, reader.tenantId, kind.resource, broken) : null,
    saveWalkPage(deps.db, key, {
      page,
      restart: page === 1,
      checkpoint: keep ? { position, rank: endRank(place, start.horizon, result, pageSize, !onReplica), horizon: start.horizon } : null,
      total: freshTotal ? t.cache : null,
    }),
  ]);
  return answer(deps, kind, reader, pageSize, { page, since, result, ...t, before: place.after, horizon: start.horizon });
}

async function readList<P>(deps: ServiceDeps, kind: ListKind, reader: Reader, req: ListRequest): Promise<JsonText<P>> {
  const pageSize = req.pageSize === null ? null : Math.min(req.pageSize, MAX_PAGE_SIZE);
  if (req.cursor !== null) return cursorPage<P>(deps, kind, reader, pageSize, req.cursor);
  const since = req.updatedSince === null ? null : sinceMicros(req.updatedSince);
  if (req.updatedSince !== null && since === null) {
    throw new AppError('invalid-parameter', {}, [{ pointer: '/query/updatedSince', message: 'must be an ISO 8601 date-time' }]);
  }
  return numberedPage<P>(deps, kind, reader, pageSize ?? DEFAULT_PAGE_SIZE, req.page, since);
}

const POLES: ListKind = { resource: 'pole', purpose: 'poles' };
const SERVICE_ORDERS: ListKind = { resource: 'service_order', purpose: 'service-orders' };

/** GET /api/external/poles (2.2, 2.4, 4.3, N5). */
export async function listPoles(deps: ServiceDeps, reader: Reader, req: ListRequest): Promise<JsonText<PolePage>> {
  return readList<PolePage>(deps, POLES, reader, req);
}

/** GET /api/external/service-orders (2.3, 2.4, 4.3, N5). */
export async function listServiceOrders(deps: ServiceDeps, reader: Reader, req: ListRequest): Promise<JsonText<ServiceOrderPage>> {
  return readList<ServiceOrderPage>(deps, SERVICE_ORDERS, reader, req);
}
