import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { getPage, settle } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

/** Two connections of the pool that write different slots (pg_backend_pid() % 16). */
async function twoSlots(): Promise<{ a: pg.PoolClient; b: pg.PoolClient; release: () => void }> {
  const held: pg.PoolClient[] = [];
  const slotOf = async (c: pg.PoolClient) => Number((await c.query<{ slot: number }>('SELECT pg_backend_pid() % 16 AS slot')).rows[0]!.slot);
  const a = await t.rt.pool.connect();
  held.push(a);
  const slotA = await slotOf(a);
  for (;;) {
    const c = await t.rt.pool.connect();
    held.push(c);
    if ((await slotOf(c)) !== slotA) return { a, b: c, release: () => held.forEach((h) => h.release()) };
    if (held.length >= 8) throw new Error('no two pool connections with different slots');
  }
}

describe('city_data_count slots (migration 0009)', () => {
  it('keeps total and deletions exact when inserts and deletes land on different slots', async () => {
    const tenant = await makeTenant(t.rt);
    const { apiKey } = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] });
    const { a, b, release } = await twoSlots();
    try {
      await a.query(`INSERT INTO pole (tenant_id, code, latitude, longitude) SELECT $1, 'S' || g, -23.5, -46.6 FROM generate_series(1, 3) g`, [tenant.id]);
      await b.query(`DELETE FROM pole WHERE tenant_id = $1 AND code IN ('S1', 'S2')`, [tenant.id]);
      await b.query(`INSERT INTO pole (tenant_id, code, latitude, longitude) VALUES ($1, 'S4', -23.5, -46.6)`, [tenant.id]);
    } finally {
      release();
    }
    const slots = await t.rt.db.selectFrom('city_data_count').select(['slot', 'row_count', 'deleted_count']).where('tenant_id', '=', tenant.id).where('resource', '=', 'pole').orderBy('row_count').execute();
    // The deleting connection's slot went negative; only the sum is the count.
    expect(slots.map((s) => [s.row_count, s.deleted_count])).toEqual([
      [-1, 2],
      [3, 0],
    ]);
    expect(slots.reduce((sum, s) => sum + Number(s.row_count), 0)).toBe(2);
    await settle(t);
    expect((await getPage(t, '/api/external/poles', apiKey)).total).toBe(2);
  });

  it('reads zero for a tenant with no slot yet', async () => {
    const tenant = await makeTenant(t.rt);
    const { apiKey } = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] });
    expect(await t.rt.db.selectFrom('city_data_count').select('slot').where('tenant_id', '=', tenant.id).execute()).toEqual([]);
    await settle(t);
    expect((await getPage(t, '/api/external/service-orders', apiKey)).total).toBe(0);
  });
});
