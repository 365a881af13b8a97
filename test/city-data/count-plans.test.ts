import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/database.js';
import { pageStatement, type PageStatement } from '../../src/db/repositories/city-data/page.repository.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeTenant } from '../support/factories.js';

/**
 * The counts of a page statement read the sync index whatever the table's state
 * (issue 26, telemetry row). A fleet's telemetry restamps every pole with a device
 * several times before a vacuum has looked at the table: its visibility map, and the
 * all-visible count the planner reads from pg_class, fall far behind the table. The
 * count of the rows stamped at or after the page's horizon (none or few) was then
 * planned as a sequential scan of the whole table: 1-2 s for a page of 1000 poles on a
 * city of a million. Here the same state on a smaller city: vacuumed once, then every
 * pole restamped twice with no vacuum after.
 */

let t: TestApp;
let tenantId: string;

beforeAll(async () => {
  t = await startTestApp();
  tenantId = (await makeTenant(t.rt, { name: 'Resistencia, telegestión' })).id;
  await sql`INSERT INTO pole (tenant_id, code, address, latitude, longitude)
            SELECT ${tenantId}, 'RES-' || lpad(g::text, 6, '0'), 'Avenida Sarmiento ' || g, -27.45 - (g % 150) * 0.0002, -58.98 - (g / 150) * 0.0002
              FROM generate_series(1, 20000) g`.execute(t.rt.db);
  await sql`VACUUM (ANALYZE) pole`.execute(t.rt.db);
  // As a fleet's reports do through the telegestor trigger: every pole stamped anew, twice.
  for (let i = 0; i < 2; i++) await sql`UPDATE pole SET active = active WHERE tenant_id = ${tenantId}`.execute(t.rt.db);
}, 60_000);

afterAll(async () => {
  await t?.stop();
});

/** The plan PostgreSQL keeps for the statement on a connection of the app's pool: its generic plan. */
async function genericPlan(q: PageStatement): Promise<string> {
  const compiled = pageStatement('pole', q).compile(t.rt.db);
  const pool = createPool({ url: t.db.url, max: 1 });
  const client = await pool.connect();
  try {
    await client.query('SET plan_cache_mode = force_generic_plan');
    await client.query(`PREPARE count_plan AS ${compiled.sql}`);
    const values = compiled.parameters.map((v) => (v === null ? 'NULL' : typeof v === 'number' ? String(v) : client.escapeLiteral(String(v))));
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE count_plan(${values.join(', ')})`);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  } finally {
    client.release();
    await pool.end();
  }
}

const first: PageStatement = { tenantId: '', since: null, horizon: null, after: null, skip: 0, limit: 1000, rankHorizon: null, matching: { kind: 'none' } };

describe('the counts of a page read the sync index, however far behind vacuum is', () => {
  it('page 1 without updatedSince: its horizon read by the statement, the rows stamped at or after it counted from the index', async () => {
    const plan = await genericPlan({ ...first, tenantId });
    expect(plan).not.toMatch(/Seq Scan on pole/);
    expect(plan).toMatch(/Index Only Scan using pole_sync_idx on pole[\s\S]*updated_at <= 'infinity'/);
  });

  it('a cursor page with updatedSince and a cached total: both of its tails counted from the index', async () => {
    const plan = await genericPlan({
      ...first,
      tenantId,
      since: '2026-03-14T12:00:00.000000Z',
      horizon: '2026-03-14T12:05:00.000000Z',
      after: { u: '2026-03-14T12:01:00.123456Z', id: '00000000-0000-0000-0000-000000000000' },
      matching: { kind: 'count', side: 'low', unless: { cacheHorizon: '2026-03-14T12:04:00.000000Z', cacheBelow: 41 } },
    });
    // The tails (now, the cached total's): each a range closed by 'infinity', read from the index alone.
    const tails = plan.split(/\n(?=\s*->)/).filter((node) => /updated_at <= 'infinity'/.test(node));
    expect(tails).toHaveLength(2);
    for (const node of tails) expect(node).toMatch(/Index Only Scan using pole_sync_idx on pole/);
  });
});
