/**
 * Incremental sync without re-reading: the last page of a walk carries `resumeCursor`,
 * and the next round from it reads strictly after the last item served. After an import
 * of 10,000 poles in one transaction (one `updatedAt` for all), an unchanged next round
 * reads nothing (with `updatedSince`, inclusive, it read all 10,000 again); three
 * changes are exactly three items; a write committing late is still delivered.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { getPage, settle, type ListPath } from './support.js';

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
interface Round {
  items: Item[];
  requests: number;
  resume: string | null;
}

/** One round of the cursor loop, started from a resume cursor (or from nothing): the items and the next resume cursor. */
async function round(apiKey: string, path: ListPath, resume: string | null, pageSize = 1000): Promise<Round> {
  const items: Item[] = [];
  let requests = 0;
  let query: Record<string, string | number> = resume ? { cursor: resume, pageSize } : { pageSize };
  for (;;) {
    const page = (await getPage<Item>(t, path, apiKey, query)) as unknown as { items: Item[]; nextCursor: string | null; resumeCursor: string | null };
    requests++;
    items.push(...page.items);
    if (page.nextCursor === null) return { items, requests, resume: page.resumeCursor };
    expect(page.resumeCursor).toBeNull();
    query = { cursor: page.nextCursor };
  }
}

async function city(): Promise<{ tenantId: string; apiKey: string }> {
  const tenant = await makeTenant(t.rt, { name: 'Porto Alegre' });
  return { tenantId: tenant.id, apiKey: (await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] })).apiKey };
}

describe('incremental sync from resumeCursor', () => {
  it('after 10,000 poles imported in one transaction: an unchanged round reads nothing, three changes exactly three', async () => {
    const { tenantId, apiKey } = await city();
    await t.rt.pool.query(
      `INSERT INTO pole (tenant_id, code, address, neighborhood, latitude, longitude, active)
       SELECT $1, 'POA-' || lpad(g::text, 5, '0'), 'Avenida Borges de Medeiros, ' || g, 'Centro Histórico', -30.03 + g * 1e-6, -51.23, true
       FROM generate_series(1, 10000) g`,
      [tenantId],
    );
    await settle(t);
    const first = await round(apiKey, '/api/external/poles', null);
    expect(first.items).toHaveLength(10_000);
    expect(new Set(first.items.map((i) => i.updatedAt)).size).toBe(1);
    expect(first.resume).not.toBeNull();

    // Nothing changed: one request, nothing read (updatedSince, inclusive, would read all 10,000 again).
    const idle = await round(apiKey, '/api/external/poles', first.resume);
    expect(idle).toMatchObject({ items: [], requests: 1 });
    const inclusive = await getPage<Item>(t, '/api/external/poles', apiKey, { updatedSince: first.items[0]!.updatedAt, pageSize: 1000 });
    expect(inclusive.total).toBe(10_000);

    // Three changes: exactly those three, in a round that resumes from the idle round's cursor.
    const { rows } = await t.rt.pool.query<{ id: string }>(`UPDATE pole SET address = address || ' (reformado)' WHERE tenant_id = $1 AND code IN ('POA-00007', 'POA-04242', 'POA-09999') RETURNING id`, [tenantId]);
    await settle(t);
    const three = await round(apiKey, '/api/external/poles', idle.resume);
    expect(three.items.map((i) => i.id).sort()).toEqual(rows.map((r) => r.id).sort());
    expect(three.requests).toBe(1);
    expect((await round(apiKey, '/api/external/poles', three.resume)).items).toEqual([]);
  });

  it('still delivers a write that commits after the round that could not see it', async () => {
    const { tenantId, apiKey } = await city();
    await t.rt.pool.query(`INSERT INTO pole (tenant_id, code, address, neighborhood, latitude, longitude, active) SELECT $1, 'LATE-' || g, 'Rua da Praia, ' || g, 'Centro', -30.03, -51.23, true FROM generate_series(1, 3) g`, [tenantId]);
    await settle(t);
    const first = await round(apiKey, '/api/external/poles', null, 2);
    expect(first.items).toHaveLength(3);

    const late = new pg.Client({ connectionString: t.db.url, application_name: 'lumen-test-writer' });
    await late.connect();
    let held: Round;
    try {
      // A change stamped now, committed only after the next round has read.
      await late.query('BEGIN');
      const { rows } = await late.query<{ id: string }>(`UPDATE pole SET address = address || '+' WHERE tenant_id = $1 AND code = 'LATE-1' RETURNING id`, [tenantId]);
      held = await round(apiKey, '/api/external/poles', first.resume, 2);
      expect(held.items).toEqual([]);
      await late.query('COMMIT');
      await settle(t);
      const after = await round(apiKey, '/api/external/poles', held.resume, 2);
      expect(after.items.map((i) => i.id)).toEqual([rows[0]!.id]);
    } finally {
      await late.end();
    }
  });

  it('resumes a service-order walk too, and an empty city has nothing to resume from', async () => {
    const { apiKey } = await city();
    const empty = (await getPage<Item>(t, '/api/external/service-orders', apiKey, {})) as unknown as { resumeCursor: string | null; nextCursor: string | null };
    expect(empty).toMatchObject({ nextCursor: null, resumeCursor: null });
    const since = (await getPage<Item>(t, '/api/external/service-orders', apiKey, { updatedSince: '2026-01-01T00:00:00Z' })) as unknown as { resumeCursor: string | null };
    expect(since.resumeCursor).not.toBeNull();
    expect((await round(apiKey, '/api/external/service-orders', since.resumeCursor)).items).toEqual([]);
  });
});
