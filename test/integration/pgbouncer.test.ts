/**
 * `lumen serve` through PgBouncer in transaction pooling mode: two instances whose
 * pools (10 each) share 4 server connections, with session features (migrations,
 * LISTEN wake-ups, the job queue's own connections) on LUMEN_DIRECT_DATABASE_URL.
 * Under intake, reads, event polling, webhook and partner-poll load at once: one
 * alert per idempotent request, every event polled once and in order, one poller per
 * partner, each webhook event delivered once after a 2xx.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { EventsPage } from '../../generated/partner/types.gen.js';
import type { EventSubject } from '../../src/services/events/outbox.js';
import { reconcilePartnerPolls } from '../../src/services/partner-poll/service.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { makeCityPole, makePartner, makeTenant } from '../support/factories.js';
import { startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { emit, makeEventPartner, startReceiver, subjectFor, waitFor } from '../events/support.js';
import { intakeBody, postJson } from '../intake/support.js';
import { makePollingPartner, request, startPartnerStub } from '../polling/support.js';

const SERVER_CONNECTIONS = 4;

let db: TestDatabase;
let bouncer: PgBouncer;
let a: TestApp;
let b: TestApp;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  bouncer = await startPgBouncer(inject('pgServerUrl'), { poolSize: SERVER_CONNECTIONS });
  // Named prepared statements through the pooler when it tracks them (≥ 1.21), else the setting for older ones.
  const env = { DATABASE_URL: bouncer.url(db.name), LUMEN_DIRECT_DATABASE_URL: db.url, LUMEN_TEST_LOG_LEVEL: 'info', LUMEN_DB_PREPARED: bouncer.preparedStatements ? 'on' : 'off' };
  a = await startTestApp({ db, env });
  b = await startTestApp({ db, env });
}, 60_000);

afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {});
  await a?.stop().catch(() => {});
  await b?.stop().catch(() => {});
  await bouncer?.stop().catch(() => {});
  await db?.drop().catch(() => {});
});

const pick = (i: number) => (i % 2 === 0 ? a : b);

async function pollEvents(t: TestApp, apiKey: string, since: string | null): Promise<EventsPage> {
  const qs = new URLSearchParams({ limit: '7', ...(since ? { since } : {}) });
  const res = await t.fetch(`/api/external/events?${qs}`, { apiKey });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as EventsPage;
}

describe('two instances through a transaction-pooling PgBouncer', () => {
  it('keeps LISTEN and the job queue on direct connections, everything else on the pooler', async () => {
    expect(a.rt.databaseUrl).toBe(bouncer.url(db.name));
    expect(a.rt.directDatabaseUrl).toBe(db.url);
    const direct = await a.rt.pool.query<{ pid: number; application_name: string }>(
      `SELECT pid, application_name FROM pg_stat_activity WHERE datname = current_database() AND application_name IN ('lumen-listen', 'lumen-jobs')`,
    );
    // This very query comes through the pooler.
    const me = await a.rt.pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    // Server processes behind the pooler (read after the queries above: it may have opened one for them).
    const pooled = new Set((await bouncer.admin('SHOW SERVERS')).map((r) => Number(r.remote_pid)));
    const listeners = direct.rows.filter((r) => r.application_name === 'lumen-listen');
    // One webhook wake-up listener per instance, each on a session of its own.
    expect(listeners.length).toBeGreaterThanOrEqual(2);
    for (const r of direct.rows) expect(pooled.has(r.pid), `${r.application_name} ${r.pid}`).toBe(false);
    expect(pooled.has(me.rows[0]!.pid)).toBe(true);
  });

  it('keeps every guarantee under intake, reads, event polling, webhooks and partner polls at once', async () => {
    // Intake: 8 requests, each sent 6 times at once (alternating instances) with one key.
    const tenant = await makeTenant(a.rt);
    const intakePartner = await makePartner(a.rt, { tenantId: tenant.id, scopes: ['canCreateServiceOrders', 'canReadCityData'] });
    for (let i = 0; i < 30; i++) await makeCityPole(a.rt, { tenantId: tenant.id, code: `PB-${i}` });
    const intake = async () => {
      const out = [];
      for (let r = 0; r < 8; r++) {
        const key = randomUUID();
        const body = intakeBody(`PGB-${r}`);
        out.push(Promise.all(Array.from({ length: 6 }, (_, i) => postJson(pick(i), intakePartner.apiKey, body, { 'idempotency-key': key }))));
      }
      return Promise.all(out);
    };
    // Reads: page walks of the poles list on both instances.
    const reads = async () => {
      const totals: number[] = [];
      for (let round = 0; round < 6; round++) {
        const pages = await Promise.all([1, 2, 3].map((page) => pick(round + page).fetch(`/api/external/poles?page=${page}&pageSize=10`, { apiKey: intakePartner.apiKey })));
        for (const res of pages) {
          expect(res.status).toBe(200);
          totals.push(((await res.json()) as { total: number }).total);
        }
      }
      return totals;
    };

    // Events: one polling partner and one webhook partner, both written to while read.
    const rx = await startReceiver(() => ({ status: 204 }));
    closers.push(() => rx.close());
    const polled = await makeEventPartner(a.rt);
    const hooked = await makeEventPartner(a.rt, { webhookUrl: rx.url });
    const subjects: [EventSubject, EventSubject][] = [];
    for (let i = 0; i < 10; i++) subjects.push([await subjectFor(a.rt, polled), await subjectFor(a.rt, hooked)]);
    const emitted: string[] = [];
    const hookedIds: string[] = [];
    let emitting = true;
    const writeEvents = async () => {
      for (const type of ['ServiceOrder.Created', 'ServiceOrder.StatusChanged', 'ServiceOrder.Completed'] as const) {
        await Promise.all(
          subjects.map(async ([p, h], i) => {
            const [e1, e2] = await emit(pick(i).rt, [type, p], [type, h]);
            emitted.push(e1!.eventId);
            hookedIds.push(e2!.eventId);
          }),
        );
      }
      emitting = false;
    };
    const seen: string[] = [];
    const pollAll = async () => {
      let since: string | null = null;
      for (let i = 0; ; i++) {
        const stillWriting = emitting;
        const page = await pollEvents(pick(i), polled.partner.apiKey, since);
        seen.push(...page.events.map((e) => e.eventId));
        since = page.nextSince;
        if (!stillWriting && !page.hasMore && page.events.length === 0 && seen.length >= emitted.length) return;
        if (i > 2000) throw new Error('event polling did not finish');
      }
    };

    // Partner polling: a slow partner polled every second, reconciled on both instances.
    let n = 0;
    const stub = await startPartnerStub(() => ({ delayMs: 300, json: { items: [request(`PGB-POLL-${++n}`, new Date(Date.parse('2026-03-14T12:00:00Z') + n * 1000).toISOString())] } }));
    closers.push(() => stub.close());
    const pollingPartner = await makePollingPartner(a.rt, stub.url, { interval: 1 });
    await Promise.all([reconcilePartnerPolls(a.rt), reconcilePartnerPolls(b.rt), reconcilePartnerPolls(a.rt)]);

    const [intakeResults, totals] = await Promise.all([intake(), reads(), writeEvents(), pollAll()]);

    // Idempotency: one 201 per request, every other answer the same alert.
    for (const results of intakeResults) {
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 200, 200, 200, 200, 201]);
      expect(new Set(results.map((r) => r.body.alert.id)).size).toBe(1);
    }
    const alerts = await a.rt.db.selectFrom('alert').select('protocol_number').where('external_system_id', '=', intakePartner.id).execute();
    expect(alerts.map((x) => x.protocol_number).sort()).toEqual(Array.from({ length: 8 }, (_, r) => `PGB-${r}`).sort());
    expect(totals.every((x) => x === 30)).toBe(true);

    // Event polling: every event once, none missing.
    expect(seen).toHaveLength(emitted.length);
    expect(new Set(seen)).toEqual(new Set(emitted));

    // Webhooks: every event delivered once (the receiver always answered 2xx).
    await waitFor(() => hookedIds.every((id) => rx.received.some((r) => r.headers['x-lumen-event-id'] === id)), 30_000, 'every webhook event delivered');
    await waitFor(
      async () => (await a.rt.db.selectFrom('webhook_delivery').select('status').where('external_system_id', '=', hooked.partner.id).execute()).every((d) => d.status === 'succeeded'),
      10_000,
      'deliveries settled',
    );
    const delivered = rx.received.map((r) => String(r.headers['x-lumen-event-id']));
    expect(delivered).toHaveLength(hookedIds.length);
    expect(new Set(delivered)).toEqual(new Set(hookedIds));

    // One poller per partner: never two polls at once, the interval kept.
    await waitFor(() => stub.calls.length >= 4, 30_000, 'four partner polls');
    expect(stub.maxConcurrent).toBe(1);
    for (let i = 1; i < stub.calls.length; i++) expect(stub.calls[i]!.at - stub.calls[i - 1]!.at).toBeGreaterThanOrEqual(900);
    const polledAlerts = await a.rt.db.selectFrom('alert').select('protocol_number').where('external_system_id', '=', pollingPartner.id).execute();
    expect(new Set(polledAlerts.map((x) => x.protocol_number)).size).toBe(polledAlerts.length);

    // The traffic went through the pooler, on no more server connections than it allows.
    const stats = (await bouncer.admin('SHOW STATS')).find((r) => r.database === db.name)!;
    expect(Number(stats.total_xact_count)).toBeGreaterThan(200);
    const pools = (await bouncer.admin('SHOW POOLS')).filter((r) => r.database === db.name);
    const servers = pools.reduce((sum, r) => sum + Number(r.sv_active) + Number(r.sv_idle) + Number(r.sv_used) + Number(r.sv_tested) + Number(r.sv_login), 0);
    expect(servers).toBeLessThanOrEqual(SERVER_CONNECTIONS);
    expect(bouncer.log()).not.toMatch(/prepared statement|unsupported/i);
    for (const t of [a, b]) expect(t.logs.text).not.toMatch(/"level":"(error|fatal)"/);
  }, 120_000);
});
