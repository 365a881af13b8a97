import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOTALS_PER_TENANT, WALKS_PER_PARTNER } from '../../src/db/repositories/city-data/read-walk.repository.js';
import { cityReadCleanupQueue } from '../../src/jobs/city-read-cleanup.job.js';
import { listPoles } from '../../src/services/city-data/index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeCityPole, makePartner, makeTenant } from '../support/factories.js';
import { recordReliability } from '../support/reliability.js';

/**
 * The tables the read path writes (city_read_walk with its checkpoints, city_read_total)
 * stay bounded whatever a partner reads: a new row evicts the least recently used past
 * the bound (per partner for walks, per tenant for totals; 0018_city_read_bounds.sql),
 * and the city-read-cleanup job removes rows unused for a day.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

async function counts(tenantId: string): Promise<{ walks: number; totals: number; checkpoints: number }> {
  const { rows } = await t.rt.pool.query<{ walks: string; totals: string; checkpoints: string }>(
    `SELECT (SELECT count(*) FROM city_read_walk WHERE tenant_id = $1) AS walks,
            (SELECT count(*) FROM city_read_total WHERE tenant_id = $1) AS totals,
            (SELECT count(*) FROM city_read_checkpoint c JOIN city_read_walk w ON w.id = c.walk_id WHERE w.tenant_id = $1) AS checkpoints`,
    [tenantId],
  );
  return { walks: Number(rows[0]!.walks), totals: Number(rows[0]!.totals), checkpoints: Number(rows[0]!.checkpoints) };
}

const sinceOf = (i: number) => new Date(Date.UTC(2020, 0, 1) + i * 1000).toISOString();

describe('the read path bounds what it remembers', () => {
  it('keeps at most 100 walks per partner and 200 totals per tenant over distinct reads, the most recently used', async () => {
    const tenant = await makeTenant(t.rt);
    await makeCityPole(t.rt, { tenantId: tenant.id, code: 'B-1' });
    const a = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] });
    const b = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] });
    const read = (externalSystemId: string, i: number) =>
      listPoles(t.rt, { tenantId: tenant.id, externalSystemId }, { page: 1, pageSize: 1 + (i % 1000), updatedSince: sinceOf(i), cursor: null });
    // 110 distinct (updatedSince, pageSize) by each partner, both at once: 220 walks and 220 totals without the bound.
    for (let i = 0; i < 110; i++) await Promise.all([read(a.id, i), read(b.id, 10_000 + i)]);
    const after = await counts(tenant.id);
    expect(after.walks).toBe(2 * WALKS_PER_PARTNER);
    expect(after.totals).toBe(TOTALS_PER_TENANT);
    expect(after.checkpoints).toBe(2 * WALKS_PER_PARTNER);
    // Least recently used goes first: partner a's latest walk (i = 109) is kept, its first (i = 0) is not.
    const { rows } = await t.rt.pool.query<{ since: Date }>(`SELECT updated_since AS since FROM city_read_walk WHERE external_system_id = $1`, [a.id]);
    const kept = new Set(rows.map((r) => r.since.toISOString()));
    expect(kept.has(sinceOf(109))).toBe(true);
    expect(kept.has(sinceOf(0))).toBe(false);
  });

  it('leaves at most the bound after 100,000 distinct reads', async () => {
    const tenant = await makeTenant(t.rt);
    const partners = [await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] }), await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] })];
    // What 100,000 distinct reads leave, written in statements of 10,000 rows (each
    // statement as the read path's own INSERT would, one row per read); the bound is
    // enforced by the database's triggers, so every writer goes through it.
    const READS = 100_000;
    const BATCH = 10_000;
    for (let from = 0; from < READS; from += BATCH) {
      const partner = partners[(from / BATCH) % 2]!;
      await sql`INSERT INTO city_read_walk (external_system_id, tenant_id, resource, updated_since, page_size)
                SELECT ${partner.id}, ${tenant.id}, 'pole', timestamptz '2020-01-01Z' + g * interval '1 second', 1 + g % 1000
                  FROM generate_series(${from}::int, ${from + BATCH - 1}::int) g`.execute(t.rt.db);
      await sql`INSERT INTO city_read_total (tenant_id, resource, updated_since, matching_below, horizon, below)
                SELECT ${tenant.id}, 'pole', timestamptz '2020-01-01Z' + g * interval '1 second', 0, now(), 0
                  FROM generate_series(${from}::int, ${from + BATCH - 1}::int) g`.execute(t.rt.db);
    }
    const left = await counts(tenant.id);
    expect(left.walks).toBeLessThanOrEqual(partners.length * WALKS_PER_PARTNER);
    expect(left.totals).toBeLessThanOrEqual(TOTALS_PER_TENANT);
    recordReliability('Security and load', {
      item: 'read-path rows left after 100,000 distinct reads (2 partners of one tenant)',
      figure: `${left.walks} walks, ${left.totals} cached totals`,
      detail: `Bound: ${WALKS_PER_PARTNER} walks per partner (least recently used evicted on insert), ${TOTALS_PER_TENANT} cached totals per tenant; before the bound every distinct read left one walk and one total (test/city-data/read-bounds.test.ts).`,
    });
  }, 90_000);

  it('removes walks and totals unused for a day in the hourly cleanup, keeping the rest', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] });
    await sql`INSERT INTO city_read_walk (external_system_id, tenant_id, resource, updated_since, page_size, used_at)
              VALUES (${p.id}, ${tenant.id}, 'pole', '-infinity', 10, now() - interval '25 hours'),
                     (${p.id}, ${tenant.id}, 'pole', '-infinity', 20, now() - interval '23 hours')`.execute(t.rt.db);
    await sql`INSERT INTO city_read_total (tenant_id, resource, updated_since, matching_below, horizon, below, used_at)
              VALUES (${tenant.id}, 'pole', '2024-01-01Z', 0, now(), 0, now() - interval '25 hours'),
                     (${tenant.id}, 'pole', '2024-01-02Z', 0, now(), 0, now())`.execute(t.rt.db);
    await cityReadCleanupQueue.work!.handler(t.rt, []);
    expect(await counts(tenant.id)).toEqual({ walks: 1, totals: 1, checkpoints: 0 });
    const { rows } = await t.rt.pool.query<{ page_size: number }>(`SELECT page_size FROM city_read_walk WHERE tenant_id = $1`, [tenant.id]);
    expect(rows).toEqual([{ page_size: 20 }]);
  });
});
