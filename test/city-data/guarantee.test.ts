import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeCityOrder, makeCityPole, makePartner, makeTenant } from '../support/factories.js';
import { getPage, maxUpdatedAt, settle, walkCursor, walkPages, type ListPath } from './support.js';

/**
 * N5's promise: a partner following rule 2 (updatedSince = largest updatedAt seen,
 * every page of a round) or the cursor never misses a change, when writers commit out
 * of order and when items change while it pages.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

interface Item {
  id: string;
  updatedAt: string;
}

/** A writer on its own connection, named like a Lumen connection unless told otherwise. */
async function writer(applicationName = 'lumen-test-writer'): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: t.db.url, application_name: applicationName });
  await c.connect();
  return c;
}

interface Subject {
  name: string;
  path: ListPath;
  /** Creates n items of a fresh tenant and returns their ids. */
  seed(tenantId: string, n: number): Promise<string[]>;
  /** SQL that changes one item (its trigger stamps updated_at). */
  change: string;
}

const SUBJECTS: Subject[] = [
  {
    name: 'poles',
    path: '/api/external/poles',
    async seed(tenantId, n) {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push((await makeCityPole(t.rt, { tenantId })).id);
      return ids;
    },
    change: `UPDATE pole SET address = address || '+' WHERE id = $1`,
  },
  {
    name: 'service orders',
    path: '/api/external/service-orders',
    async seed(tenantId, n) {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push((await makeCityOrder(t.rt, { tenantId })).id);
      return ids;
    },
    change: `UPDATE service_order SET address = address || '+' WHERE id = $1`,
  },
];

async function reader(): Promise<{ tenantId: string; apiKey: string }> {
  const tenant = await makeTenant(t.rt);
  const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] });
  return { tenantId: tenant.id, apiKey: partner.apiKey };
}

/** The partner's copy: latest version of each item by id. */
function merge(store: Map<string, string>, items: Item[]): void {
  for (const i of items) if (!store.has(i.id) || store.get(i.id)! < i.updatedAt) store.set(i.id, i.updatedAt);
}

async function truth(path: ListPath, tenantId: string): Promise<Map<string, string>> {
  const table = path === '/api/external/poles' ? 'pole' : 'service_order';
  const { rows } = await sql<{ id: string; u: string }>`SELECT id, to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS u FROM ${sql.table(table)} WHERE tenant_id = ${tenantId}`.execute(t.rt.db);
  return new Map(rows.map((r) => [r.id, r.u]));
}

describe.each(SUBJECTS)('$name: late commits', (subject) => {
  for (const walk of ['rule 2 with page numbers', 'cursor'] as const) {
    it(`still delivers a row whose transaction commits after a later one (${walk})`, async () => {
      const { tenantId, apiKey } = await reader();
      const [early, fast] = (await subject.seed(tenantId, 2)) as [string, string];
      await settle(t);
      const pull = (since: string | null) =>
        walk === 'cursor' ? walkCursor<Item>(t, subject.path, apiKey, since, 1) : walkPages<Item>(t, subject.path, apiKey, since, 1);

      const store = new Map<string, string>();
      const round0 = await pull(null);
      merge(store, round0);
      let cursor = maxUpdatedAt(round0, null);
      expect(store.size).toBe(2);

      const a = await writer();
      const b = await writer();
      try {
        // A stamps its row first (its now() is the earlier one) and stays open.
        await a.query('BEGIN');
        await a.query(subject.change, [early]);
        // B stamps later and commits first.
        await b.query('BEGIN');
        await b.query(subject.change, [fast]);
        await b.query('COMMIT');
        const { rows } = await b.query<{ committed: boolean }>(`SELECT true AS committed`);
        expect(rows[0]!.committed).toBe(true);

        // The partner pulls while A is still open: B's row is held back with it, so the
        // partner's cursor cannot jump over A's earlier stamp.
        const during = await pull(cursor);
        merge(store, during);
        cursor = maxUpdatedAt(during, cursor);
        const held = await truth(subject.path, tenantId);
        expect(during.some((i) => i.id === fast && i.updatedAt === held.get(fast))).toBe(false);

        await a.query('COMMIT');
      } finally {
        await a.end();
        await b.end();
      }
      await settle(t);

      // Next round from the partner's own cursor: both changes arrive.
      const after = await pull(cursor);
      merge(store, after);
      const want = await truth(subject.path, tenantId);
      expect(store.get(early)).toBe(want.get(early));
      expect(store.get(fast)).toBe(want.get(fast));
      expect(after.map((i) => i.id)).toContain(early);
    });
  }
});

describe('a writer that is not Lumen', () => {
  for (const walk of ['rule 2 with page numbers', 'cursor'] as const) {
    it(`holds back a later commit while a psql session holds an earlier change (${walk})`, async () => {
      const { tenantId, apiKey } = await reader();
      const p1 = await makeCityPole(t.rt, { tenantId, code: 'P1' });
      const p2 = await makeCityPole(t.rt, { tenantId, code: 'P2' });
      await settle(t);
      const pull = (since: string | null) =>
        walk === 'cursor' ? walkCursor<Item>(t, '/api/external/poles', apiKey, since, 1) : walkPages<Item>(t, '/api/external/poles', apiKey, since, 1);
      const store = new Map<string, string>();
      const round0 = await pull(null);
      merge(store, round0);
      let cursor = maxUpdatedAt(round0, null);

      const psql = await writer('psql');
      const other = await writer('psql');
      try {
        await psql.query('BEGIN');
        await psql.query(`UPDATE pole SET address = 'Rua Nova, 1' WHERE tenant_id = $1 AND code = 'P1'`, [tenantId]);
        await other.query(`UPDATE pole SET address = 'Rua Nova, 2' WHERE tenant_id = $1 AND code = 'P2'`, [tenantId]);
        // The partner pulls while the psql transaction holds P1: P2's change is held back.
        const during = await pull(cursor);
        merge(store, during);
        cursor = maxUpdatedAt(during, cursor);
        const held = await truth('/api/external/poles', tenantId);
        expect(during.some((i) => i.id === p2.id && i.updatedAt === held.get(p2.id))).toBe(false);
        await psql.query('COMMIT');
      } finally {
        await psql.end();
        await other.end();
      }
      await settle(t);
      const after = await pull(cursor);
      merge(store, after);
      const want = await truth('/api/external/poles', tenantId);
      expect(store.get(p1.id)).toBe(want.get(p1.id));
      expect(store.get(p2.id)).toBe(want.get(p2.id));
      expect(after.map((i) => i.id)).toContain(p1.id);
    });
  }
});

describe('a transaction of another database on the same server', () => {
  it('does not hold back the lists (it cannot write these rows)', async () => {
    const { tenantId, apiKey } = await reader();
    const elsewhere = new pg.Client({ connectionString: inject('pgServerUrl'), application_name: 'lumen-elsewhere' });
    await elsewhere.connect();
    try {
      await elsewhere.query('BEGIN');
      await elsewhere.query('SELECT pg_current_xact_id()');
      const pole = await makeCityPole(t.rt, { tenantId, code: 'ELSEWHERE-1' });
      // Without the other database's transaction left out, the horizon would stay before it until it ends.
      await settle(t);
      const items = await walkPages<Item>(t, '/api/external/poles', apiKey, null, 10);
      expect(items.map((i) => i.id)).toContain(pole.id);
    } finally {
      await elsewhere.query('ROLLBACK').catch(() => {});
      await elsewhere.end();
    }
  });
});

describe.each(SUBJECTS)('$name: changes while paging', (subject) => {
  for (const walk of ['page numbers', 'cursor'] as const) {
    it(`serves every item and every change when items change between pages (${walk})`, async () => {
      const { tenantId, apiKey } = await reader();
      const ids = await subject.seed(tenantId, 10);
      await settle(t);
      const order = (await getPage<Item>(t, subject.path, apiKey, { pageSize: 100 })).items.map((i) => i.id);
      expect(order).toHaveLength(10);
      const c = await writer();
      try {
        const between = async (page: number) => {
          // After page 1: an item already served changes (it moves to the end, and with
          // plain OFFSET the first item of page 2 would slip back onto page 1, unread).
          if (page === 1) await c.query(subject.change, [order[1]]);
          // After page 2: an item not yet served changes, and a new item appears.
          if (page === 2) {
            await c.query(subject.change, [order[7]]);
            await subject.seed(tenantId, 1);
          }
          await settle(t);
        };
        const pageSize = 3;
        const seen =
          walk === 'cursor' ? await walkCursor<Item>(t, subject.path, apiKey, null, pageSize, between) : await walkPages<Item>(t, subject.path, apiKey, null, pageSize, between);
        const store = new Map<string, string>();
        merge(store, seen);
        // Within the walk, items come in strictly increasing (updatedAt, id) order.
        const want = await truth(subject.path, tenantId);
        expect(store.size).toBe(11);
        for (const [id, u] of want) expect(store.get(id), `item ${id}`).toBe(u);
        expect(seen.map((i) => i.id).slice(0, 6)).toEqual([...order.slice(0, 6)]);
        expect(ids.every((id) => store.has(id))).toBe(true);
      } finally {
        await c.end();
      }
    });
  }

  it('continues page N+1 from the checkpoint of page N, not by offset', async () => {
    const { tenantId, apiKey } = await reader();
    await subject.seed(tenantId, 6);
    await settle(t);
    const p1 = await getPage<Item>(t, subject.path, apiKey, { page: 1, pageSize: 2 });
    const p2 = await getPage<Item>(t, subject.path, apiKey, { page: 2, pageSize: 2 });
    // The checkpoint of page 2 is where page 3 starts: an item of page 1 that changes
    // now does not move page 3's first item.
    await t.rt.pool.query(subject.change, [p1.items[0]!.id]);
    await settle(t);
    const p3 = await getPage<Item>(t, subject.path, apiKey, { page: 3, pageSize: 2 });
    const all = [...p1.items, ...p2.items, ...p3.items].map((i) => i.id);
    expect(new Set(all).size).toBe(6);
    const { rows } = await t.rt.pool.query<{ pages: number }>(
      `SELECT count(*)::int AS pages FROM city_read_checkpoint c JOIN city_read_walk w ON w.id = c.walk_id
        JOIN external_system es ON es.id = w.external_system_id WHERE es.tenant_id = $1`,
      [tenantId],
    );
    expect(rows[0]!.pages).toBe(3);
  });
});

describe('pole reappearance by telemetry (4.3 rule 3) during a walk', () => {
  it('serves a pole again when its device reports, even if the pole itself did not change', async () => {
    const { tenantId, apiKey } = await reader();
    const p = await makeCityPole(t.rt, { tenantId, code: 'RE-1', device: 'TG-RE-1' });
    await makeCityPole(t.rt, { tenantId, code: 'RE-2' });
    await settle(t);
    const first = await walkPages<Item>(t, '/api/external/poles', apiKey, null, 10);
    const cursor = maxUpdatedAt(first, null)!;
    await t.rt.pool.query(`UPDATE telegestor SET online = true, relay_on = true, last_communication_at = now() WHERE id = $1`, [p.deviceId]);
    await settle(t);
    const again = await walkPages<Item & { code: string }>(t, '/api/external/poles', apiKey, cursor, 10);
    const re1 = again.find((i) => i.code === 'RE-1');
    expect(re1!.updatedAt > cursor).toBe(true);
    // Anything else is the boundary item (updatedSince is inclusive), unchanged.
    for (const other of again.filter((i) => i.code !== 'RE-1')) expect(other.updatedAt).toBe(cursor);
    const device = (again as unknown as { code: string; device: { online: boolean; relayOn: boolean; lastCommunicationAt: string } }[]).find((i) => i.code === 'RE-1')!.device;
    // The stamp is taken when the report's transaction writes, at or after its now().
    expect(device).toMatchObject({ online: true, relayOn: true });
    expect(device.lastCommunicationAt <= re1!.updatedAt).toBe(true);
  });
});
