/**
 * Every statement a hot path sends is a named prepared statement (issue 26): intake,
 * the key check, pages by number and by cursor (with the horizon), the events page,
 * the webhook claim and settle, a telemetry batch. The pg client's query calls are
 * observed on the app's own pool; a statement sent without a name fails the test. The
 * console's grouped inbox writes the same texts on every request, so its statements too
 * are prepared once per connection.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createPool, statementName } from '../../src/db/database.js';
import { createTelemetryKey } from '../../src/services/city-data/telemetry.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makeCityPole, makePartner, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken } from '../operations/support.js';
import { emit, makeEventPartner, startReceiver, subjectFor, waitFor } from '../events/support.js';
import { intakeBody, postJson } from '../intake/support.js';
import { BACKGROUND, statementObserver, type SentStatement } from '../support/statements.js';

let t: TestApp;
const observer = statementObserver();

beforeAll(async () => {
  observer.install();
  t = await startTestApp();
}, 60_000);

afterAll(async () => {
  observer.restore();
  await t?.stop();
});

/**
 * Transaction control goes by the simple protocol: nothing to parse or plan; so does the
 * one setting a connection opens with (SessionClient: `SET jit = off`), once per connection,
 * never per request.
 */
const CONTROL = /^\s*(begin|commit|rollback|start transaction|savepoint|release savepoint|rollback to savepoint|set jit = off$)\b/i;

async function unnamedDuring(work: () => Promise<void>): Promise<{ sent: SentStatement[]; unnamed: string[] }> {
  const sent = await observer.during(work);
  return { sent, unnamed: sent.filter((s) => s.name === undefined && !CONTROL.test(s.text)).map((s) => s.text.replace(/\s+/g, ' ').slice(0, 160)) };
}

describe('named prepared statements on the hot paths', () => {
  it('names statements by their text, and leaves multi-statement texts unnamed', () => {
    const a = statementName('SELECT 1 AS prepared_test_a', 0);
    expect(a).toMatch(/^lumen_[0-9a-f]{24}$/);
    expect(statementName('SELECT 1 AS prepared_test_a', 0)).toBe(a);
    expect(statementName('SELECT 2 AS prepared_test_b', 0)).not.toBe(a);
    expect(statementName('SELECT $1::int AS prepared_test_c', 1)).toMatch(/^lumen_/);
    expect(statementName('SET LOCAL statement_timeout = 1000', 0)).toBeUndefined();
    expect(statementName('UPDATE a SET x = 1; DELETE FROM b', 0)).toBeUndefined();
  });

  it('prepares a statement afresh after a migration changed its result type (one execution fails, not every one)', async () => {
    const pool = createPool({ url: t.db.url, max: 1 });
    try {
      await pool.query('CREATE TABLE prepared_stale_check (id int PRIMARY KEY, city text)');
      await pool.query("INSERT INTO prepared_stale_check VALUES (1, 'Porto Alegre')");
      const select = 'SELECT * FROM prepared_stale_check WHERE id = $1';
      expect((await pool.query(select, [1])).rows).toEqual([{ id: 1, city: 'Porto Alegre' }]);
      await pool.query('ALTER TABLE prepared_stale_check ADD COLUMN state text DEFAULT \'RS\'');
      await expect(pool.query(select, [1])).rejects.toThrow(/cached plan must not change result type/);
      expect((await pool.query(select, [1])).rows).toEqual([{ id: 1, city: 'Porto Alegre', state: 'RS' }]);
      expect((await pool.query(select, [1])).rows).toHaveLength(1);
    } finally {
      await pool.query('DROP TABLE IF EXISTS prepared_stale_check').catch(() => {});
      await pool.end();
    }
  });

  it('the hot paths keep their generic plans: a statement is planned five times per connection, not on every request', async () => {
    // A city large enough that a plan costed without the values (an unknown LIMIT, a
    // partial index it cannot prove) loses to the plans made for each execution.
    const tenant = await makeTenant(t.rt, { name: 'Ushuaia, alumbrado público de la ciudad más austral del mundo', intakePolicy: 'automatic' });
    await sql`INSERT INTO pole (tenant_id, code, address, latitude, longitude)
              SELECT ${tenant.id}, 'USH-' || lpad(g::text, 6, '0'), 'Avenida San Martín ' || g, -23.55 - (g % 150) * 0.0002, -46.65 - (g / 150) * 0.0002
                FROM generate_series(1, 20000) g`.execute(t.rt.db);
    await sql`ANALYZE pole`.execute(t.rt.db);
    const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canCreateServiceOrders', 'canReadCityData'] });
    const polled = await makeEventPartner(t.rt);
    const subject = await subjectFor(t.rt, polled);
    for (let i = 0; i < 12; i++) await emit(t.rt, ['ServiceOrder.Created', subject]);
    expect((await postJson(t, partner.apiKey, intakeBody('USH-GP-0'), { 'idempotency-key': randomUUID() })).status).toBe(201);

    const sent = await observer.during(async () => {
      for (let i = 1; i <= 2; i++) expect((await postJson(t, partner.apiKey, intakeBody(`USH-GP-${i}`), { 'idempotency-key': randomUUID() })).status).toBe(201);
      let cursor: string | null = null;
      for (let page = 1; page <= 3; page++) {
        const res = await t.fetch(`/api/external/poles?page=${page}&pageSize=10`, { apiKey: partner.apiKey });
        expect(res.status).toBe(200);
        cursor = ((await res.json()) as { nextCursor: string | null }).nextCursor;
      }
      const next = await t.fetch(`/api/external/poles?cursor=${encodeURIComponent(cursor!)}`, { apiKey: partner.apiKey });
      expect(next.status).toBe(200);
      expect((await t.fetch('/api/external/events?limit=10', { apiKey: polled.partner.apiKey })).status).toBe(200);
    });
    const texts = new Map<string, readonly unknown[]>();
    for (const s of sent) if (s.name !== undefined && !BACKGROUND.test(s.text)) texts.set(s.text, s.values);
    expect([...texts.keys()].some((x) => /new_order AS/.test(x))).toBe(true);
    expect([...texts.keys()].some((x) => /page AS MATERIALIZED/.test(x))).toBe(true);

    // Each text run seven times on one connection, as the app's pool runs it (in a
    // transaction rolled back, so the writes can be repeated).
    const pool = createPool({ url: t.db.url, max: 1 });
    const client = await pool.connect();
    try {
      for (const [text, values] of texts) {
        for (let i = 0; i < 7; i++) {
          await client.query('BEGIN');
          await client.query(text, values as unknown[]).catch(() => {});
          await client.query('ROLLBACK');
        }
      }
      const { rows } = await client.query<{ statement: string; generic_plans: string }>(`SELECT statement, generic_plans FROM pg_prepared_statements`);
      const custom = rows.filter((r) => texts.has(r.statement) && Number(r.generic_plans) === 0).map((r) => r.statement.replace(/\s+/g, ' ').slice(0, 160));
      expect(custom).toEqual([]);
    } finally {
      client.release();
      await pool.end();
    }
  }, 60_000);

  it("the console's grouped inbox sends the same statement texts on every request, whether its city changed or not", async () => {
    const tenant = await makeTenant(t.rt, { name: 'Tromsø kommune, vei- og gatelysavdelingen (nordlige driftsområde)', intakePolicy: 'manual' });
    const partner = await makePartner(t.rt, { tenantId: tenant.id });
    const api = adminFetch(t, await adminToken(t, 'prepared-inbox'));
    const near = (i: number) => ({ latitude: 69.6492 + i * 0.00003, longitude: 18.9553 });
    await makeAlert(t.rt, { tenantId: tenant.id, externalSystemId: partner.id, ...near(0), street: 'Storgata' });
    /** One grouped inbox page, after a new alert 3 m from the others when `change` (the groups are then computed again). */
    const round = async (i: number, change: boolean): Promise<Set<string>> => {
      if (change) await makeAlert(t.rt, { tenantId: tenant.id, externalSystemId: partner.id, ...near(i), street: 'Storgata' });
      const sent = await observer.during(async () => {
        const res = await api(`/alerts?tenantId=${tenant.id}&status=Pending&grouped=true&sort=priority&pageSize=50`);
        expect(res.status).toBe(200);
        const body = (await res.json()) as { items: unknown[]; groups: { others: number }[] };
        expect(body.items).toHaveLength(1);
        expect(body.groups).toEqual([expect.objectContaining({ others: i })]);
      });
      expect(sent.filter((s) => s.name === undefined && !CONTROL.test(s.text))).toEqual([]);
      // Without session control: a connection the pool opens during one round sends its `SET jit = off` there only.
      return new Set(sent.filter((s) => !BACKGROUND.test(s.text) && !CONTROL.test(s.text)).map((s) => s.text));
    };
    await round(1, true);
    const changed = await round(2, true);
    expect([...(await round(3, true))].filter((x) => !changed.has(x))).toEqual([]);
    const unchanged = await round(3, false);
    expect([...unchanged].filter((x) => !changed.has(x))).toEqual([]);
    expect(unchanged.size).toBeLessThan(changed.size);
  });

  it('intake, key check, pages, cursor pages, events page, telemetry batch, webhook claim and settle send only named statements', async () => {
    const tenant = await makeTenant(t.rt, { name: 'Manaus' });
    const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canCreateServiceOrders', 'canReadCityData'] });
    for (let i = 0; i < 12; i++) await makeCityPole(t.rt, { tenantId: tenant.id, code: `MAO-PREP-${i}` });
    const telemetry = await createTelemetryKey(t.rt, { tenantId: tenant.id, name: 'rede de telegestão de Manaus' });
    const polled = await makeEventPartner(t.rt);
    const rx = await startReceiver(() => ({ status: 204 }));
    const hooked = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    const subjects = [await subjectFor(t.rt, polled), await subjectFor(t.rt, hooked)];
    try {
      // Twice each: the second run finds the statements prepared on the connection already.
      for (let round = 0; round < 2; round++) {
        const { sent, unnamed } = await unnamedDuring(async () => {
          const created = await postJson(t, partner.apiKey, intakeBody(`MAO-PREP-${round}`), { 'idempotency-key': randomUUID() });
          expect(created.status, created.text).toBe(201);
          const first = await t.fetch('/api/external/poles?page=1&pageSize=5', { apiKey: partner.apiKey });
          expect(first.status).toBe(200);
          const walk = await t.fetch('/api/external/poles?pageSize=5', { apiKey: partner.apiKey });
          expect(walk.status).toBe(200);
          const cursor = ((await walk.json()) as { nextCursor?: string | null }).nextCursor;
          expect(cursor).toBeTruthy();
          const next = await t.fetch(`/api/external/poles?cursor=${encodeURIComponent(cursor!)}`, { apiKey: partner.apiKey });
          expect(next.status).toBe(200);
          const events = await t.fetch('/api/external/events?limit=10', { apiKey: polled.partner.apiKey });
          expect(events.status).toBe(200);
          const report = await t.fetch('/api/telemetry/reports', {
            method: 'POST',
            apiKey: telemetry.apiKey,
            json: { reports: [{ deviceIdentifier: `MAO-TG-${round}`, online: true, relayOn: false, reportedAt: new Date().toISOString() }] },
          });
          expect(report.status).toBeLessThan(300);
        });
        expect(sent.length).toBeGreaterThan(8);
        expect(unnamed).toEqual([]);
      }
      // Webhook claim and settle: the delivery worker's statements while an event goes out and is recorded.
      const { sent, unnamed } = await unnamedDuring(async () => {
        const [event] = await emit(t.rt, ['ServiceOrder.Created', subjects[1]!]);
        await waitFor(() => rx.received.some((r) => r.headers['x-lumen-event-id'] === event!.eventId), 10_000, 'the webhook delivered');
        await waitFor(
          async () => (await t.rt.db.selectFrom('webhook_delivery').select('status').where('event_id', '=', event!.eventId).executeTakeFirst())?.status === 'succeeded',
          10_000,
          'the delivery recorded',
        );
      });
      expect(sent.some((s) => /webhook_delivery/.test(s.text) && /update/i.test(s.text))).toBe(true);
      expect(unnamed).toEqual([]);
    } finally {
      await rx.close();
    }
  }, 60_000);
});
