/**
 * The bench's seeds, anchors and drivers against the real schema and the real
 * service: what the bench writes with SQL must be what Lumen itself would serve
 * (responses are validated against the contract here), the SQL anchors must read
 * the same items as the API, and the drivers must do what the rows count on.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDriver } from '../../bench/harness/drivers.js';
import { keysetPageSql, pagePosition, copyAllPolesSql, poleImportFloorScript } from '../../bench/harness/pole-sql.js';
import { benchPool, psqlTimings, psqlWall, runPgbench } from '../../bench/harness/postgres.js';
import { Receiver } from '../../bench/harness/receiver.js';
import { eventBodies, insertPoleCity, seedEvents, seedPendingAlerts } from '../../bench/harness/seed.js';
import { findExecutable, runOk } from '../../bench/harness/tools.js';
import type { AnchorResult } from '../../bench/drivers/webhook-anchor.js';
import type { IntakeLoadResult } from '../../bench/drivers/intake-load.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';

const repo = path.resolve(import.meta.dirname, '../..');
const psql = findExecutable('psql');
const pgbench = findExecutable('pgbench');

let t: TestApp;
let pool: pg.Pool;
beforeAll(async () => {
  if (!psql || !pgbench) throw new Error('the bench tests need psql and pgbench: apt-get install postgresql-client postgresql-contrib');
  t = await startTestApp();
  pool = benchPool(t.db.url, 2);
});
afterAll(async () => {
  await pool?.end();
  await t?.stop();
});

describe("the bench's pool", () => {
  it('outlives an idle connection the server ends (as DROP DATABASE … WITH (FORCE) ends one still closing)', async () => {
    const own = benchPool(t.db.url, 1);
    try {
      const { rows } = await own.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const removed = new Promise<void>((resolve) => own.once('remove', () => resolve()));
      await pool.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      // The pool hears the connection's last words while it is idle, discards it, and
      // (without a listener of its own) would throw them out of the process.
      await removed;
      const again = await own.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      expect(again.rows[0]!.pid).not.toBe(rows[0]!.pid);
    } finally {
      await own.end();
    }
  });
});

describe('the pole city seed and the page anchors', () => {
  it('seeds poles and telegestors the list serves, and the bare keyset SQL reads the same page', async () => {
    const tenant = await makeTenant(t.rt);
    const city = await insertPoleCity(pool, tenant.id, 2500, 0.7);
    expect(city).toMatchObject({ tenantId: tenant.id, poles: 2500, telegestors: 1750 });
    const { rows: stamps } = await pool.query<{ n: number }>('SELECT count(DISTINCT updated_at)::int AS n FROM pole WHERE tenant_id = $1', [tenant.id]);
    expect(stamps[0]!.n).toBe(3); // one change stamp per seeding transaction of 1000 poles

    const reader = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] });
    const page = async (n: number, since: string | null) => {
      const q = new URLSearchParams({ page: String(n), pageSize: '1000', ...(since ? { updatedSince: since } : {}) });
      const res = await t.fetch(`/api/external/poles?${q}`, { apiKey: reader.apiKey });
      expect(res.status).toBe(200);
      return (await res.json()) as { items: { id: string; device: unknown }[]; total: number };
    };
    for (const since of [null, city.minUpdatedAt]) {
      const p1 = await page(1, since);
      const p2 = await page(2, since);
      const p3 = await page(3, since);
      expect(p1.total).toBe(2500);
      expect([p1.items.length, p2.items.length, p3.items.length]).toEqual([1000, 1000, 500]);
      expect([...p1.items, ...p2.items, ...p3.items].filter((i) => i.device !== null)).toHaveLength(1750);

      const after = await pagePosition(pool, tenant.id, since, 2, 1000);
      const { rows } = await pool.query<{ id: string }>(keysetPageSql(tenant.id, since, after, 1000));
      expect(rows.map((r) => r.id)).toEqual(p2.items.map((i) => i.id));
    }

    const timings = await psqlTimings(psql!, t.db.url, keysetPageSql(tenant.id, null, null, 1000), 3);
    expect(timings).toHaveLength(3);
    expect(timings.every((ms) => ms > 0)).toBe(true);
    expect(await psqlWall(psql!, t.db.url, copyAllPolesSql(tenant.id))).toBeGreaterThan(0);
  });
});

describe('the pole import floor', () => {
  it('writes the poles and telegestors `lumen pole import` writes for the same file', async () => {
    const file = path.join(os.tmpdir(), `bench-floor-${randomUUID()}.csv`);
    writeFileSync(
      file,
      ['code,address,neighborhood,latitude,longitude,active,device_identifier', 'F-1,"Rua Augusta, 1",Consolação,-23.55,-46.63,true,TG-F1', 'F-2,"Rua ""Dona"" Veridiana",,-23.56,-46.64,false,', ''].join('\n'),
    );
    const lumen = await makeTenant(t.rt);
    const floor = await makeTenant(t.rt);
    expect((await t.cli('pole', 'import', '--tenant', lumen.id, file)).code).toBe(0);
    await runOk(psql!, ['-X', '-q', t.db.url], { input: poleImportFloorScript(floor.id, file), discardStdout: true });
    const rowsOf = async (tenantId: string) =>
      (
        await pool.query(
          `SELECT p.code, p.address, p.neighborhood, p.latitude, p.longitude, p.active, t.identifier
             FROM pole p LEFT JOIN telegestor t ON t.pole_id = p.id WHERE p.tenant_id = $1 ORDER BY p.code`,
          [tenantId],
        )
      ).rows;
    const written = await rowsOf(floor.id);
    expect(written).toHaveLength(2);
    expect(written).toEqual(await rowsOf(lumen.id));
  });
});

describe('the event seeds', () => {
  it('writes envelopes the events endpoint serves as they are', async () => {
    const tenant = await makeTenant(t.rt, { intakePolicy: 'manual' });
    const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canCreateAlerts'], transport: 'polling' });
    const seeded = await seedEvents(pool, { tenantId: tenant.id, partnerId: partner.id, orders: 30, perOrder: 5, eventType: 'ServiceOrder.StatusChanged' });
    expect(seeded.events).toBe(150);

    const res = await t.fetch('/api/external/events?limit=200', { apiKey: partner.apiKey });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { events: { eventId: string; sequence: number; serviceOrder: { number: string } }[]; hasMore: boolean };
    expect(page.events).toHaveLength(150);
    expect(page.hasMore).toBe(false);
    const bodies = (await eventBodies(pool, partner.id))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { eventId: string; body: string });
    expect(page.events).toEqual(bodies.map((b) => JSON.parse(b.body)));
    expect(page.events.slice(0, 5).map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5]);
  });

  it('writes Pending alerts an operator can triage', async () => {
    const tenant = await makeTenant(t.rt, { intakePolicy: 'manual' });
    const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canCreateAlerts'] });
    const ids = await seedPendingAlerts(pool, { tenantId: tenant.id, partnerId: partner.id, count: 3 });
    expect(ids).toHaveLength(3);
    const r = await t.cli('alert', 'create-order', ids[0]!, '--json');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const { rows } = await pool.query<{ event_type: string }>('SELECT event_type FROM event WHERE alert_id = $1', [ids[0]]);
    expect(rows.map((e) => e.event_type)).toEqual(['ServiceOrder.Created']);
  });
});

describe('the intake anchor and driver', () => {
  it('pgbench writes the rows of an automatic intake, one transaction each', async () => {
    const tenant = await makeTenant(t.rt, { intakePolicy: 'automatic' });
    const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canCreateServiceOrders'] });
    const r = await runPgbench(pgbench!, t.db.url, {
      scriptFile: path.join(repo, 'bench/sql/intake-anchor.pgbench.sql'),
      clients: 2,
      threads: 1,
      seconds: 1,
      vars: { tenant: tenant.id, partner: partner.id, year: String(new Date().getUTCFullYear()) },
      logDir: os.tmpdir(),
    });
    expect(r.failed).toBe(0);
    expect(r.transactions).toBeGreaterThan(0);
    expect(r.latencyP99Ms).toBeGreaterThan(0);
    const { rows } = await pool.query<{ alerts: number; orders: number; keys: number; histories: number; counter: number }>(
      `SELECT (SELECT count(*)::int FROM alert WHERE tenant_id = $1 AND status = 'Linked') AS alerts,
              (SELECT count(*)::int FROM service_order WHERE tenant_id = $1) AS orders,
              (SELECT count(*)::int FROM idempotency_key WHERE external_system_id = $2) AS keys,
              (SELECT count(*)::int FROM service_order_status_history h JOIN service_order so ON so.id = h.service_order_id WHERE so.tenant_id = $1) AS histories,
              lumen_last_number($1, 'service_order', $3)::int AS counter`,
      [tenant.id, partner.id, new Date().getUTCFullYear()],
    );
    expect(rows[0]).toEqual({ alerts: r.transactions, orders: r.transactions, keys: r.transactions, histories: r.transactions, counter: r.transactions });
  });

  it('the load driver registers requests Lumen accepts (201), each a new order', async () => {
    const tenant = await makeTenant(t.rt, { intakePolicy: 'automatic' });
    const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canCreateServiceOrders'] });
    const r = await runDriver<IntakeLoadResult>(repo, 'intake-load.ts', { url: t.baseUrl, apiKey: partner.apiKey, connections: 2, seconds: 1 });
    expect(r.non2xx).toBe(0);
    expect(r.errors).toBe(0);
    expect(r.statusCodes).toEqual({ '201': r.status2xx });
    const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM service_order WHERE tenant_id = $1', [tenant.id]);
    // requests still in flight when the time is up are served but not counted
    expect(rows[0]!.n).toBeGreaterThanOrEqual(r.status2xx);
    expect(rows[0]!.n).toBeLessThanOrEqual(r.status2xx + 2);
  });
});

describe('the webhook receiver and the fan-out anchor', () => {
  it('counts correctly signed deliveries and refuses the others with 401', async () => {
    const secret = 'bench-secret-0123456789abcdef';
    const receiver = await Receiver.start(repo, secret);
    try {
      const events = Array.from({ length: 20 }, () => ({ eventId: randomUUID(), eventType: 'ServiceOrder.Completed', body: JSON.stringify({ eventId: 'x', n: Math.random() }) }));
      const file = path.join(os.tmpdir(), `bench-bodies-${randomUUID()}.ndjson`);
      writeFileSync(file, events.map((e) => JSON.stringify(e)).join('\n') + '\n');

      const ok = await runDriver<AnchorResult>(repo, 'webhook-anchor.ts', { url: receiver.url('/hooks/ok'), secret, concurrency: 4, bodiesFile: file });
      expect(ok).toMatchObject({ sent: 20, failed: 0 });
      const stats = await receiver.stats();
      expect(stats).toMatchObject({ count: 20, duplicates: 0, badSignatures: 0 });
      expect(stats.peakInFlight).toBeGreaterThanOrEqual(1);
      expect(stats.peakInFlight).toBeLessThanOrEqual(4);
      expect([...(await receiver.arrivals()).keys()].sort()).toEqual(events.map((e) => e.eventId).sort());

      await receiver.reset();
      const bad = await runDriver<AnchorResult>(repo, 'webhook-anchor.ts', { url: receiver.url('/hooks/bad'), secret: 'another-secret-entirely', concurrency: 2, bodiesFile: file });
      expect(bad).toMatchObject({ sent: 20, failed: 20 });
      expect(await receiver.stats()).toMatchObject({ count: 0, badSignatures: 20 });
    } finally {
      receiver.stop();
    }
  });
});
