import type { Pole, ServiceOrder } from '../../generated/partner-client/types.gen.js';
import type { LumenClient } from './client.js';

export type CityList = 'poles' | 'serviceOrders';
type ItemOf<L extends CityList> = L extends 'poles' ? Pole : ServiceOrder;

export interface SyncOptions<L extends CityList> {
  /**
   * The largest `updatedAt` you kept from the previous round; omit (or null) for a
   * full sync. The round returns the value to keep for the next one.
   */
  updatedSince?: string | null;
  /**
   * The previous round's `resumeCursor` (syncByCursor): the round reads strictly after
   * the last item that round served, so nothing comes again; wins over `updatedSince`.
   */
  resumeCursor?: string | null;
  /** Items per page (1–1000). Default 500, Lumen's own default. */
  pageSize?: number;
  /**
   * Called with each page's items, in order, before the next page is asked for. Store
   * items by `id`, keeping the latest `updatedAt`: an item changed during the walk can
   * come again on a later page or in the next round.
   */
  onItems: (items: ItemOf<L>[]) => Promise<void> | void;
}

export interface SyncResult {
  /** Send this as `updatedSince` in the next round (unchanged when nothing came). */
  updatedSince: string | null;
  /** Keep this and send it as `resumeCursor` in the next round of syncByCursor: nothing of this round is read again (null for an empty city). */
  resumeCursor: string | null;
  /** Items received in this round (an item may be counted twice; see onItems). */
  received: number;
  pages: number;
}

interface PageQuery {
  page?: number;
  pageSize?: number;
  updatedSince?: string;
  cursor?: string;
}

interface Page<T> {
  items: T[];
  pageSize: number;
  nextCursor: string | null;
  resumeCursor?: string | null;
}

async function fetchPage<L extends CityList>(client: LumenClient, list: L, query: PageQuery): Promise<Page<ItemOf<L>>> {
  const { body } = list === 'poles' ? await client.call('listPoles', { query }) : await client.call('listServiceOrders', { query });
  return body as unknown as Page<ItemOf<L>>;
}

function later(a: string | null, b: string): string {
  return a === null || Date.parse(b) > Date.parse(a) || (Date.parse(b) === Date.parse(a) && b > a) ? b : a;
}

/**
 * One round of the keyset-cursor loop: `updatedSince` on the first page, then
 * `nextCursor` back as `cursor` until it is null. Never misses a change, also when
 * writes commit late or items change while you walk.
 */
export async function syncByCursor<L extends CityList>(client: LumenClient, list: L, opts: SyncOptions<L>): Promise<SyncResult> {
  let since = opts.updatedSince ?? null;
  // A resume cursor starts the round where the last one ended.
  let cursor: string | null = opts.resumeCursor ?? null;
  let resumeCursor: string | null = null;
  let received = 0;
  let pages = 0;
  do {
    const size: PageQuery = opts.pageSize ? { pageSize: opts.pageSize } : {};
    const body: Page<ItemOf<L>> = await fetchPage(client, list, cursor !== null ? { cursor, ...size } : { ...(since ? { updatedSince: since } : {}), ...size });
    const items = body.items;
    await opts.onItems(items);
    for (const item of items) since = later(since, item.updatedAt);
    received += items.length;
    pages++;
    cursor = body.nextCursor;
    resumeCursor = body.resumeCursor ?? null;
  } while (cursor !== null);
  return { updatedSince: since, resumeCursor, received, pages };
}

/**
 * One round of the date-cursor loop of the interface: `page` 1, 2, … with the same
 * `updatedSince` and `pageSize`, one page at a time, until a short page; the largest
 * `updatedAt` seen is the next round's `updatedSince`.
 */
export async function syncByPages<L extends CityList>(client: LumenClient, list: L, opts: SyncOptions<L>): Promise<SyncResult> {
  const from = opts.updatedSince ?? null;
  let since = from;
  let received = 0;
  for (let page = 1; ; page++) {
    const body = await fetchPage(client, list, { page, ...(from ? { updatedSince: from } : {}), ...(opts.pageSize ? { pageSize: opts.pageSize } : {}) });
    const items = body.items;
    await opts.onItems(items);
    for (const item of items) since = later(since, item.updatedAt);
    received += items.length;
    // The last page's resume cursor also continues a page walk (next round: syncByCursor with it).
    if (items.length < body.pageSize) return { updatedSince: since, resumeCursor: body.resumeCursor ?? null, received, pages: page };
  }
}
