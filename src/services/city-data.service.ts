import { parseDateTime } from '../lib/time.js';
import type { Pole, PolePage, ServiceOrder, ServiceOrderPage } from '../../generated/partner/types.gen.js';
import type { Executor } from '../db/database.js';
import {
  polePageQuery,
  readHorizon,
  serviceOrderPageQuery,
  type PageQuery,
  type PoleListRow,
  type Position,
  type ServiceOrderListRow,
} from '../db/repositories/city-data.repository.js';
import { deleteStaleWalks, findAnchor, openWalk, saveCheckpoint, saveTotalCache, type TotalCache } from '../db/repositories/city-read-walk.repository.js';
import type { CityResource } from '../db/tables/city-data.js';
import { cursorCodec } from '../lib/cursor.js';
import { AppError } from '../lib/errors.js';
import { exactTotal } from './city-data-total.js';
import type { ServiceDeps } from './deps.js';
import { serviceOrderView } from './service-order.view.js';

/** 4.3 / N5 limits. */
export const DEFAULT_PAGE_SIZE = 500;
export const MAX_PAGE_SIZE = 1000;
/** Walks unused this long are forgotten (the next page 1 of the same partner cleans up). */
const WALK_TTL_MS = 24 * 60 * 60 * 1000;
/** Pages beyond this cannot hold items (and are not remembered). */
const MAX_PAGE = 1_000_000_000;

export interface ListRequest {
  readonly page: number;
  /** As requested (cut down to MAX_PAGE_SIZE here). */
  readonly pageSize: number;
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
  v: 1;
  /** tenant */
  t: string;
  /** updatedSince (microseconds ISO) or null */
  s: string | null;
  /** position: updated_at (microseconds ISO) and id of the last item served */
  u: string;
  i: string;
  /** number of the page this cursor reads */
  n: number;
  /** cached total: [matching, rows, deleted, horizon] */
  c: [number, number, number, string] | null;
}

interface ListKind<Row, Item> {
  readonly resource: CityResource;
  /** MAC purpose of this list's cursors: a cursor of the other list is refused. */
  readonly purpose: string;
  readonly query: (db: Executor, q: PageQuery) => { execute(): Promise<Row[]> };
  readonly position: (row: Row) => Position;
  readonly item: (row: Row) => Item;
}

/** 2026-03-14T12:41:07.532123Z -> 2026-03-14T12:41:07.532Z (truncated, never rounded up). */
export function millisIso(micros: string): string {
  return `${micros.slice(0, 23)}Z`;
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

function readCursor(deps: ServiceDeps, purpose: string, tenantId: string, token: string): CursorState {
  const value = cursorCodec(deps.config.secretKey).decode(purpose, token) as Partial<CursorState> | null;
  if (!value || value.v !== 1) throw invalidCursor('not a cursor of this list');
  const ok =
    typeof value.t === 'string' &&
    (value.s === null || (typeof value.s === 'string' && MICROS_ISO.test(value.s))) &&
    typeof value.u === 'string' &&
    MICROS_ISO.test(value.u) &&
    typeof value.i === 'string' &&
    UUID.test(value.i) &&
    Number.isInteger(value.n) &&
    value.n! >= 2 &&
    value.n! <= MAX_PAGE &&
    (value.c === null || (Array.isArray(value.c) && value.c.length === 4));
  if (!ok) throw invalidCursor('not a cursor of this list');
  if (value.t !== tenantId) throw invalidCursor('the cursor belongs to another tenant');
  return value as CursorState;
}

async function readList<Row, Item>(deps: ServiceDeps, kind: ListKind<Row, Item>, reader: Reader, req: ListRequest): Promise<{ items: Item[]; page: number; pageSize: number; total: number; nextCursor: string | null }> {
  const { db } = deps;
  const pageSize = Math.min(req.pageSize, MAX_PAGE_SIZE);
  const codec = cursorCodec(deps.config.secretKey);

  let page: number;
  let since: string | null;
  let anchor: Position | null;
  let skip = 0;
  let cache: TotalCache | null;
  let walkId: string | null = null;

  // The horizon first, in its own statement; the rows are read by a later one.
  const horizon = await readHorizon(db);

  if (req.cursor !== null) {
    const state = readCursor(deps, kind.purpose, reader.tenantId, req.cursor);
    page = state.n;
    since = state.s;
    anchor = { u: state.u, id: state.i };
    cache = state.c ? { matching: state.c[0], rows: state.c[1], deleted: state.c[2], horizon: state.c[3] } : null;
  } else {
    page = req.page;
    since = req.updatedSince === null ? null : sinceMicros(req.updatedSince);
    if (req.updatedSince !== null && since === null) {
      throw new AppError('invalid-parameter', {}, [{ pointer: '/query/updatedSince', message: 'must be an ISO 8601 date-time' }]);
    }
    if (page > MAX_PAGE) {
      const { total } = await exactTotal(db, reader.tenantId, kind.resource, since, horizon, null);
      return { items: [], page, pageSize, total, nextCursor: null };
    }
    const key = { externalSystemId: reader.externalSystemId, resource: kind.resource, since, pageSize };
    const walk = await db.transaction().execute(async (tx) => {
      if (page === 1) await deleteStaleWalks(tx, reader.externalSystemId, new Date(Date.now() - WALK_TTL_MS));
      const w = await openWalk(tx, key, page === 1);
      const a = page === 1 ? { page: 0, position: null } : await findAnchor(tx, w.id, page);
      return { ...w, anchor: a };
    });
    walkId = walk.id;
    cache = walk.total;
    anchor = walk.anchor.position;
    skip = (page - 1 - walk.anchor.page) * pageSize;
  }

  const rows = await kind.query(db, { tenantId: reader.tenantId, since, horizon, after: anchor, skip, limit: pageSize + 1 }).execute();
  const hasMore = rows.length > pageSize;
  const pageRows = hasMore ? rows.slice(0, pageSize) : rows;
  const last = pageRows.length > 0 ? kind.position(pageRows[pageRows.length - 1]!) : null;

  if (walkId !== null && (last !== null || skip === 0)) {
    const id = walkId;
    await db.transaction().execute((tx) => saveCheckpoint(tx, id, page, last ?? anchor));
  }

  const totalResult = await exactTotal(db, reader.tenantId, kind.resource, since, horizon, cache);
  if (walkId !== null && totalResult.counted && totalResult.cache) await saveTotalCache(db, walkId, totalResult.cache);

  let nextCursor: string | null = null;
  if (hasMore && last !== null && page < MAX_PAGE) {
    const c = totalResult.cache;
    const state: CursorState = { v: 1, t: reader.tenantId, s: since, u: last.u, i: last.id, n: page + 1, c: c ? [c.matching, c.rows, c.deleted, c.horizon] : null };
    nextCursor = codec.encode(kind.purpose, state);
  }

  return { items: pageRows.map(kind.item), page, pageSize, total: totalResult.total, nextCursor };
}

function poleItem(row: PoleListRow): Pole {
  return {
    id: row.id,
    code: row.code,
    address: row.address,
    neighborhood: row.neighborhood,
    latitude: row.latitude,
    longitude: row.longitude,
    active: row.active,
    updatedAt: millisIso(row.updated_us),
    device:
      row.device_id === null
        ? null
        : {
            id: row.device_id,
            identifier: row.device_identifier!,
            online: row.device_online,
            relayOn: row.device_relay_on,
            lastCommunicationAt: row.device_last_communication_at ? row.device_last_communication_at.toISOString() : null,
          },
  };
}

const POLES: ListKind<PoleListRow, Pole> = {
  resource: 'pole',
  purpose: 'poles',
  query: polePageQuery,
  position: (row) => ({ u: row.updated_us, id: row.id }),
  item: poleItem,
};

const SERVICE_ORDERS: ListKind<ServiceOrderListRow, ServiceOrder> = {
  resource: 'service_order',
  purpose: 'service-orders',
  query: serviceOrderPageQuery,
  position: (row) => ({ u: row.updated_us, id: row.id }),
  item: (row) => ({ ...serviceOrderView(row), updatedAt: millisIso(row.updated_us) }),
};

/** GET /api/external/poles (2.2, 2.4, 4.3, N5). */
export async function listPoles(deps: ServiceDeps, reader: Reader, req: ListRequest): Promise<PolePage> {
  return readList(deps, POLES, reader, req);
}

/** GET /api/external/service-orders (2.3, 2.4, 4.3, N5). */
export async function listServiceOrders(deps: ServiceDeps, reader: Reader, req: ListRequest): Promise<ServiceOrderPage> {
  return readList(deps, SERVICE_ORDERS, reader, req);
}
