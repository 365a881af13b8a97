import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { walkPageStatement } from '../../src/db/repositories/city-data/read-walk.repository.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeCityPole, makePartner, makeTenant } from '../support/factories.js';
import { getPage, settle, type Page, type PoleItem } from './support.js';

/**
 * Page placement and `total` (src/services/city-data/place.ts, city-data/total.ts):
 * a page requested out of order starts from a ranked position of any walk of the
 * tenant with the same filter, or is counted from the start once a change broke
 * that rank; a cached total outlives walks and partners and stays exact.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

const POLES = '/api/external/poles';

async function partner(tenantId: string): Promise<{ id: string; apiKey: string }> {
  const p = await makePartner(t.rt, { tenantId, scopes: ['canReadCityData'] });
  return { id: p.id, apiKey: p.apiKey };
}

/** n poles, in statements of `batch` (each statement stamps one updated_at; id breaks ties). */
async function insertPoles(tenantId: string, n: number, batch = n, prefix = 'R'): Promise<void> {
  for (let from = 1; from <= n; from += batch) {
    const to = Math.min(n, from + batch - 1);
    await sql`INSERT INTO pole (tenant_id, code, latitude, longitude)
              SELECT ${tenantId}, ${prefix} || lpad(g::text, 6, '0'), -23.5, -46.6 FROM generate_series(${from}::int, ${to}::int) g`.execute(t.rt.db);
  }
}

/** Every item in list order, read as one page. */
async function everything(apiKey: string, since?: string): Promise<PoleItem[]> {
  return (await getPage<PoleItem>(t, POLES, apiKey, { pageSize: 1000, ...(since ? { updatedSince: since } : {}) })).items;
}

async function walk(apiKey: string, pages: number, pageSize: number, since?: string): Promise<Page<PoleItem>[]> {
  const out: Page<PoleItem>[] = [];
  for (let page = 1; page <= pages; page++) out.push(await getPage<PoleItem>(t, POLES, apiKey, { page, pageSize, ...(since ? { updatedSince: since } : {}) }));
  return out;
}

/** The checkpoints of a partner's walks: page, rank and the horizon of the rank's epoch. */
async function checkpoints(externalSystemId: string): Promise<{ page: number; rank: number | null; h: string | null }[]> {
  const { rows } = await t.rt.pool.query<{ page: number; rank: string | null; h: string | null }>(
    `SELECT c.page, c.rank, c.rank_horizon::text AS h FROM city_read_checkpoint c JOIN city_read_walk w ON w.id = c.walk_id
      WHERE w.external_system_id = $1 ORDER BY c.page`,
    [externalSystemId],
  );
  return rows.map((r) => ({ page: r.page, rank: r.rank === null ? null : Number(r.rank), h: r.h }));
}

const ids = (items: { id: string }[]) => items.map((i) => i.id);

describe('a page requested out of order', () => {
  it('equals the page a walk served, starting from that walk\'s ranked position, whatever the page size', async () => {
    const tenant = await makeTenant(t.rt);
    const walker = await partner(tenant.id);
    await insertPoles(tenant.id, 60, 7);
    await settle(t);
    const walked = await walk(walker.apiKey, 12, 5);
    const ranks = await checkpoints(walker.id);
    expect(ranks.map((c) => c.rank)).toEqual([5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60]);
    // One epoch for the whole walk: every page inherited page 1's.
    expect(new Set(ranks.map((c) => c.h)).size).toBe(1);

    const jumper = await partner(tenant.id);
    const direct = await getPage<PoleItem>(t, POLES, jumper.apiKey, { page: 9, pageSize: 5 });
    expect(ids(direct.items)).toEqual(ids(walked[8]!.items));
    expect(direct.total).toBe(60);
    // It continued from the walker's page 8 (same epoch), not from a count from the start (a fresh epoch).
    expect(await checkpoints(jumper.id)).toEqual([{ page: 9, rank: 45, h: ranks[0]!.h }]);

    const wide = await partner(tenant.id);
    const page5 = await getPage<PoleItem>(t, POLES, wide.apiKey, { page: 5, pageSize: 10 });
    expect(ids(page5.items)).toEqual([...ids(walked[8]!.items), ...ids(walked[9]!.items)]);
    expect(await checkpoints(wide.id)).toEqual([{ page: 5, rank: 50, h: ranks[0]!.h }]);
  });

  it('is counted from the start once an item before the ranked position changed, and the broken ranks are forgotten', async () => {
    const tenant = await makeTenant(t.rt);
    const walker = await partner(tenant.id);
    await insertPoles(tenant.id, 40, 6);
    await settle(t);
    const walked = await walk(walker.apiKey, 8, 5);
    // An item of page 1 changes: it moves to the end, every later item moves up by one.
    await t.rt.pool.query(`UPDATE pole SET address = 'Rua Nova, 1' WHERE id = $1`, [walked[0]!.items[2]!.id]);
    await settle(t);

    const jumper = await partner(tenant.id);
    const direct = await getPage<PoleItem>(t, POLES, jumper.apiKey, { page: 7, pageSize: 5 });
    const now = await everything((await partner(tenant.id)).apiKey);
    expect(ids(direct.items)).toEqual(ids(now.slice(30, 35)));
    expect(ids(direct.items)).not.toEqual(ids(walked[6]!.items));
    expect((await checkpoints(walker.id)).every((c) => c.rank === null)).toBe(true);
    // The jumper's own page is ranked again, in a new epoch, and serves the next jump.
    const [mine] = await checkpoints(jumper.id);
    expect(mine).toMatchObject({ page: 7, rank: 35 });
    const other = await partner(tenant.id);
    const page8 = await getPage<PoleItem>(t, POLES, other.apiKey, { page: 8, pageSize: 5 });
    expect(ids(page8.items)).toEqual(ids(now.slice(35, 40)));
    expect(await checkpoints(other.id)).toEqual([{ page: 8, rank: 40, h: mine!.h }]);
  });

  it('uses only the ranks of walks with the same updatedSince', async () => {
    const tenant = await makeTenant(t.rt);
    await insertPoles(tenant.id, 5, 5, 'OLD');
    await settle(t);
    await insertPoles(tenant.id, 30, 6, 'NEW');
    await settle(t);
    const all = await everything((await partner(tenant.id)).apiKey);
    const since = all[5]!.updatedAt;
    const filtered = await partner(tenant.id);
    const walked = await walk(filtered.apiKey, 6, 5, since);
    expect(walked.map((p) => p.items.length)).toEqual([5, 5, 5, 5, 5, 5]);

    const sameFilter = await partner(tenant.id);
    const a = await getPage<PoleItem>(t, POLES, sameFilter.apiKey, { page: 5, pageSize: 5, updatedSince: since });
    expect(ids(a.items)).toEqual(ids(walked[4]!.items));
    expect((await checkpoints(sameFilter.id))[0]!.h).toBe((await checkpoints(filtered.id))[0]!.h);

    const noFilter = await partner(tenant.id);
    const b = await getPage<PoleItem>(t, POLES, noFilter.apiKey, { page: 5, pageSize: 5 });
    expect(ids(b.items)).toEqual(ids(all.slice(20, 25)));
    expect((await checkpoints(noFilter.id))[0]!.h).not.toBe((await checkpoints(filtered.id))[0]!.h);
  });
});

describe('total with updatedSince', () => {
  it('counts an item updated from below updatedSince into the filter, on every kind of page', async () => {
    const tenant = await makeTenant(t.rt);
    const reader = await partner(tenant.id);
    const early = await makeCityPole(t.rt, { tenantId: tenant.id, code: 'EARLY' });
    await settle(t);
    await insertPoles(tenant.id, 4);
    await settle(t);
    const since = (await everything(reader.apiKey))[1]!.updatedAt;
    const p1 = await getPage<PoleItem>(t, POLES, reader.apiKey, { updatedSince: since, pageSize: 2 });
    expect(p1.total).toBe(4);

    await t.rt.pool.query(`UPDATE pole SET address = 'Rua Nova, 2' WHERE id = $1`, [early.id]);
    await settle(t);
    expect((await getPage<PoleItem>(t, POLES, reader.apiKey, { updatedSince: since, pageSize: 2, page: 2 })).total).toBe(5);
    expect((await getPage<PoleItem>(t, POLES, reader.apiKey, { cursor: p1.nextCursor!, pageSize: 2 })).total).toBe(5);
    expect((await getPage<PoleItem>(t, POLES, reader.apiKey, { updatedSince: since, pageSize: 2 })).total).toBe(5);
    expect((await getPage<PoleItem>(t, POLES, (await partner(tenant.id)).apiKey, { updatedSince: since })).total).toBe(5);
  });

  it('is exact for old, middle, recent and future updatedSince, counted, cached and after inserts and deletes', async () => {
    const tenant = await makeTenant(t.rt);
    const reader = await partner(tenant.id);
    await insertPoles(tenant.id, 24, 4);
    await settle(t);
    const all = await everything(reader.apiKey);
    const sinces = ['2001-01-01T00:00:00.000Z', all[4]!.updatedAt, all[12]!.updatedAt, all[22]!.updatedAt, '2999-01-01T00:00:00.000Z'];
    const truth = async (since: string) =>
      Number((await t.rt.pool.query<{ n: string }>(`SELECT count(*) AS n FROM pole WHERE tenant_id = $1 AND updated_at >= $2`, [tenant.id, since])).rows[0]!.n);
    const check = async () => {
      for (const since of sinces) {
        for (const page of [1, 2]) {
          expect((await getPage<PoleItem>(t, POLES, reader.apiKey, { updatedSince: since, pageSize: 3, page })).total, `since ${since}, page ${page}`).toBe(await truth(since));
        }
      }
    };
    await check(); // counted
    await check(); // cached
    await insertPoles(tenant.id, 3, 3, 'ADD');
    await settle(t);
    await check(); // cached, carried over the inserts
    await t.rt.pool.query(`DELETE FROM pole WHERE tenant_id = $1 AND code IN ('R000002', 'R000014', 'ADD000001')`, [tenant.id]);
    await settle(t);
    await check(); // counted again
  });

  it('is cached per tenant and filter: a new walk or another partner does not count again', async () => {
    const tenant = await makeTenant(t.rt);
    await insertPoles(tenant.id, 8, 2);
    await settle(t);
    const first = await partner(tenant.id);
    const all = await everything(first.apiKey);
    const since = all[2]!.updatedAt;
    // Batches written within one millisecond share it: what matches is what the list shows at or after `since`.
    const matching = all.filter((i) => Date.parse(i.updatedAt) >= Date.parse(since)).length;
    expect(matching).toBeGreaterThanOrEqual(6);
    expect((await getPage<PoleItem>(t, POLES, first.apiKey, { updatedSince: since })).total).toBe(matching);
    // Mark the cached count: an answer that shows the mark came from the cache, not from a count.
    const marked = await t.rt.pool.query(`UPDATE city_read_total SET matching_below = matching_below + 100 WHERE tenant_id = $1`, [tenant.id]);
    expect(marked.rowCount).toBe(1);
    expect((await getPage<PoleItem>(t, POLES, first.apiKey, { updatedSince: since, pageSize: 3 })).total).toBe(matching + 100);
    expect((await getPage<PoleItem>(t, POLES, (await partner(tenant.id)).apiKey, { updatedSince: since })).total).toBe(matching + 100);
    // A deleted row below the cache's horizon breaks it: counted again, exact.
    await t.rt.pool.query(`DELETE FROM pole WHERE tenant_id = $1 AND code = 'R000001'`, [tenant.id]);
    await settle(t);
    const deletedMatched = Date.parse(all.find((i) => i.code === 'R000001')!.updatedAt) >= Date.parse(since) ? 1 : 0;
    expect((await getPage<PoleItem>(t, POLES, first.apiKey, { updatedSince: since })).total).toBe(matching - deletedMatched);
  });
});

describe('page writes', () => {
  it('commit asynchronously inside their own statement and leave the connection committing synchronously', async () => {
    const tenant = await makeTenant(t.rt);
    const reader = await partner(tenant.id);
    const key = { externalSystemId: reader.id, tenantId: tenant.id, resource: 'pole' as const, since: null, pageSize: 5 };
    const q = walkPageStatement(key, { page: 1, restart: true, checkpoint: { position: null, rank: null, horizon: '2026-03-14T12:00:00.000000Z' }, total: null }).compile(t.rt.db);
    const c = await t.rt.pool.connect();
    try {
      const r = await c.query<{ async_commit: string }>(q.sql, q.parameters as unknown[]);
      expect(r.rows[0]!.async_commit).toBe('off');
      expect((await c.query<{ s: string }>(`SELECT current_setting('synchronous_commit') AS s`)).rows[0]!.s).toBe('on');
    } finally {
      c.release();
    }
    expect(await checkpoints(reader.id)).toEqual([{ page: 1, rank: null, h: null }]);
  });
});
