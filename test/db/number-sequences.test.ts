/**
 * A city's numbers come from a sequence per city, counter and year (migration 0112),
 * created by the city's first number. These tests hold the creation race, the bounds of
 * what a counter may be, and the move from the counter rows of earlier versions.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrator.js';
import { createDatabase, createPool } from '../../src/db/database.js';
import { allocateNumbers } from '../../src/db/repositories/counter.repository.js';
import { createTestDatabase, withDatabaseBefore, type TestDatabase } from '../support/database.js';

let db: TestDatabase;
let pool: pg.Pool;
beforeAll(async () => {
  db = await createTestDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 4 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

async function newTenant(client: pg.Pool | pg.Client, name: string): Promise<string> {
  const { rows } = await client.query<{ id: string }>(`INSERT INTO tenant (name) VALUES ($1) RETURNING id`, [name]);
  return rows[0]!.id;
}

async function take(client: pg.Pool | pg.Client, tenant: string, name = 'alert', year = 0): Promise<number> {
  const { rows } = await client.query<{ n: string }>(`SELECT lumen_take_number($1, $2, $3) AS n`, [tenant, name, year]);
  return Number(rows[0]!.n);
}

async function last(client: pg.Pool | pg.Client, tenant: string, name = 'alert', year = 0): Promise<number> {
  const { rows } = await client.query<{ n: string }>(`SELECT lumen_last_number($1, $2, $3) AS n`, [tenant, name, year]);
  return Number(rows[0]!.n);
}

/** Waits until the backend `pid` is blocked on a lock (polling the server's own view, no sleep as synchronisation). */
async function blockedOnLock(pid: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { rows } = await pool.query<{ wait: string | null }>(`SELECT wait_event_type AS wait FROM pg_stat_activity WHERE pid = $1`, [pid]);
    if (rows[0]?.wait === 'Lock') return;
    if (Date.now() > deadline) expect.fail(`backend ${pid} never waited for a lock`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function connected(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  return c;
}

describe("a city's first number creates its sequence", () => {
  it('a second connection taking the first number while the first has created but not committed waits, then goes on from it', async () => {
    const tenant = await newTenant(pool, `Belém ${randomUUID().slice(0, 8)}`);
    const a = await connected();
    const b = await connected();
    try {
      const bPid = (await b.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await a.query('BEGIN');
      expect(await take(a, tenant)).toBe(1);
      const second = take(b, tenant);
      await blockedOnLock(bPid);
      await a.query('COMMIT');
      expect(await second).toBe(2);
      expect(await take(pool, tenant)).toBe(3);
      expect(await last(pool, tenant)).toBe(3);
    } finally {
      await a.end();
      await b.end();
    }
  });

  it('when the creating transaction rolls back, the waiting connection creates the sequence itself', async () => {
    const tenant = await newTenant(pool, `Porto Alegre ${randomUUID().slice(0, 8)}`);
    const a = await connected();
    const b = await connected();
    try {
      const bPid = (await b.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await a.query('BEGIN');
      expect(await take(a, tenant, 'service_order', 2031)).toBe(1);
      const second = take(b, tenant, 'service_order', 2031);
      await blockedOnLock(bPid);
      await a.query('ROLLBACK');
      expect(await second).toBe(1);
      expect(await last(pool, tenant, 'service_order', 2031)).toBe(1);
    } finally {
      await a.end();
      await b.end();
    }
  });

  it('40 first numbers taken at once on four connections are 1..40, each once', async () => {
    const tenant = await newTenant(pool, `Manaus ${randomUUID().slice(0, 8)}`);
    const numbers = await Promise.all(Array.from({ length: 40 }, () => take(pool, tenant, 'service_order', 2027)));
    expect([...numbers].sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  });

  it("each city, counter and year counts on its own; one city's numbers say nothing of another's", async () => {
    const recife = await newTenant(pool, `Recife ${randomUUID().slice(0, 8)}`);
    const natal = await newTenant(pool, `Natal ${randomUUID().slice(0, 8)}`);
    for (let i = 0; i < 3; i++) await take(pool, recife);
    expect(await take(pool, natal)).toBe(1);
    expect(await take(pool, recife, 'service_order', 2026)).toBe(1);
    expect(await take(pool, recife, 'service_order', 2027)).toBe(1);
    expect(await take(pool, recife)).toBe(4);
    expect(await last(pool, natal, 'service_order', 2026)).toBe(0);
  });

  it('allocateNumbers takes both numbers, the order number formatted, and refuses a transaction', async () => {
    const tenant = await newTenant(pool, `Curitiba ${randomUUID().slice(0, 8)}`);
    const database = createDatabase(createPool({ url: db.url, max: 2 }));
    try {
      const first = await allocateNumbers(database, tenant, { alert: true, serviceOrder: true }, new Date('2030-06-01T00:00:00Z'));
      expect(first).toEqual({ alertNumber: 1, serviceOrderNumber: 'OS-2030-00001' });
      expect(await allocateNumbers(database, tenant, { alert: true, serviceOrder: false })).toEqual({ alertNumber: 2, serviceOrderNumber: null });
      await expect(database.transaction().execute((tx) => allocateNumbers(tx, tenant, { alert: true, serviceOrder: false }))).rejects.toThrow(/own transaction/);
    } finally {
      await database.destroy();
    }
  });

  it('an unknown counter or a year out of range is refused, and creates nothing', async () => {
    const tenant = await newTenant(pool, `Goiânia ${randomUUID().slice(0, 8)}`);
    await expect(take(pool, tenant, 'invoice', 0)).rejects.toThrow(/no number sequence for \(invoice, 0\)/);
    await expect(take(pool, tenant, 'alert', 2026)).rejects.toThrow(/no number sequence/);
    await expect(take(pool, tenant, 'service_order', 0)).rejects.toThrow(/no number sequence/);
    const { rows } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = 'tenant_number' AND c.relname LIKE '%' || replace($1, '-', '') || '%'`,
      [tenant],
    );
    expect(rows[0]!.n).toBe(0);
  });

  it('raising a counter never lowers it', async () => {
    const tenant = await newTenant(pool, `Fortaleza ${randomUUID().slice(0, 8)}`);
    await pool.query(`SELECT lumen_raise_number($1, 'alert', 0, 500)`, [tenant]);
    expect(await take(pool, tenant)).toBe(501);
    await pool.query(`SELECT lumen_raise_number($1, 'alert', 0, 10)`, [tenant]);
    expect(await take(pool, tenant)).toBe(502);
  });
});

describe('the move from counter rows (migration 0112)', () => {
  it("a database of the version before goes on from each city's counters and drops the table", async () => {
    await withDatabaseBefore(112, async (old) => {
      const manaus = await newTenant(old, 'Manaus');
      const poa = await newTenant(old, 'Porto Alegre');
      await old.query(
        `INSERT INTO tenant_counter (tenant_id, name, year, value) VALUES ($1, 'alert', 0, 1234), ($1, 'service_order', 2025, 77), ($1, 'service_order', 2026, 9), ($2, 'alert', 0, 0)`,
        [manaus, poa],
      );
      const { applied } = await migrate(old);
      expect(applied).toContain('0112_number_sequences');
      expect(await take(old, manaus)).toBe(1235);
      expect(await take(old, manaus, 'service_order', 2025)).toBe(78);
      expect(await take(old, manaus, 'service_order', 2026)).toBe(10);
      expect(await take(old, poa)).toBe(1);
      expect((await old.query(`SELECT to_regclass('public.tenant_counter') AS t`)).rows[0]!.t).toBeNull();
    });
  });
});
