/**
 * Prometheus metrics (src/metrics) scraped over HTTP and parsed as the exposition
 * format: the series exist, move with traffic, and carry no tenant data in their
 * labels; and W3C traceparent is taken from requests and sent on outbound calls.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventsPage } from '../../generated/partner/types.gen.js';
import { createDatabase, createPool } from '../../src/db/database.js';
import { Metrics } from '../../src/metrics/index.js';
import { reconcilePartnerPolls } from '../../src/services/partner-poll/service.js';
import { createTelemetryKey } from '../../src/services/city-data/index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeCityPole, makePartner, makeTenant } from '../support/factories.js';
import { parseExposition, type Exposition } from '../support/prometheus.js';
import { emit, makeEventPartner, startReceiver, subjectFor, waitFor } from '../events/support.js';
import { makePollingPartner, startPartnerStub } from '../polling/support.js';

const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

let t: TestApp;
const closers: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_TEST_LOG_LEVEL: 'info' } });
});
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {});
  await t?.stop();
});

async function scrape(base = t.baseUrl): Promise<Exposition> {
  const res = await fetch(`${base}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await res.text());
}

describe('GET /metrics', () => {
  it('counts requests by operationId and status, with latency histograms', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] });
    await makeCityPole(t.rt, { tenantId: tenant.id });
    const before = await scrape();
    const ok = { operation: 'listPoles', status: '200' };
    const denied = { operation: 'listPoles', status: '401' };
    const count = (e: Exposition, l: Record<string, string>) => e.value('lumen_http_requests_total', l) ?? 0;
    for (let i = 0; i < 3; i++) expect((await t.fetch('/api/external/poles', { apiKey: p.apiKey })).status).toBe(200);
    expect((await t.fetch('/api/external/poles')).status).toBe(401);
    const after = await scrape();
    expect(count(after, ok) - count(before, ok)).toBe(3);
    expect(count(after, denied) - count(before, denied)).toBe(1);
    expect((after.value('lumen_http_request_duration_seconds_count', ok) ?? 0) - (before.value('lumen_http_request_duration_seconds_count', ok) ?? 0)).toBe(3);
    expect(after.value('lumen_http_request_duration_seconds_bucket', { ...ok, le: '+Inf' })).toBe(after.value('lumen_http_request_duration_seconds_count', ok));
    expect(after.types.get('lumen_http_request_duration_seconds')).toBe('histogram');
    // Pool: connections and the time waited for one.
    expect(after.value('lumen_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
    expect(after.value('lumen_db_pool_wait_seconds_count')!).toBeGreaterThan(before.value('lumen_db_pool_wait_seconds_count')!);
    expect(after.value('lumen_database_up')).toBe(1);
    // Not on the embedded database here: that gauge is absent.
    expect(after.all('lumen_embedded_postgres_up')).toEqual([]);
    // Labels: operation ids, statuses, states, queues and partner codes only.
    for (const s of after.samples) {
      for (const v of Object.values(s.labels)) {
        expect(v).not.toContain(tenant.id);
        expect(v).not.toContain(p.apiKey);
      }
    }
  });

  it('shows the job queues, webhook outcomes and oldest due delivery, and events waiting per polling partner', async () => {
    // A job for later: the queue's waiting count goes up by one.
    const depth = (e: Exposition) => e.value('lumen_job_queue_jobs', { queue: 'events-cleanup', state: 'created' }) ?? 0;
    const q0 = depth(await scrape());
    await t.rt.jobs.boss.send('events-cleanup', {}, { startAfter: 3600 });
    expect(depth(await scrape()) - q0).toBe(1);

    // Webhooks: a receiver that answers 2xx, one that never answers.
    const good = await startReceiver(() => ({ status: 204 }));
    const stuck = await startReceiver(() => ({ status: 0, hang: true }));
    closers.push(() => good.close(), () => stuck.close());
    const g = await makeEventPartner(t.rt, { webhookUrl: good.url });
    const s = await makeEventPartner(t.rt, { webhookUrl: stuck.url });
    await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, g)], ['ServiceOrder.Created', await subjectFor(t.rt, g)]);
    await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, s)]);
    await waitFor(() => good.received.length === 2 && stuck.received.length === 1, 10_000, 'both receivers called');
    await waitFor(async () => (await scrape()).value('lumen_webhook_deliveries_total', { partner: g.partner.code, outcome: 'succeeded' }) === 2, 10_000, 'two successes counted');
    const first = (await scrape()).value('lumen_webhook_oldest_due_seconds', { partner: s.partner.code })!;
    expect(first).toBeGreaterThan(0);
    await waitFor(async () => (await scrape()).value('lumen_webhook_oldest_due_seconds', { partner: s.partner.code })! > first, 5_000, 'the stuck delivery ages');
    expect((await scrape()).value('lumen_webhook_oldest_due_seconds', { partner: g.partner.code })).toBe(0);

    // Events waiting for a polling partner: written, then read and confirmed.
    const p = await makeEventPartner(t.rt);
    const waiting = async () => (await scrape()).value('lumen_events_waiting', { partner: p.partner.code });
    expect(await waiting()).toBe(0);
    const subject = await subjectFor(t.rt, p);
    await emit(t.rt, ['ServiceOrder.Created', subject], ['ServiceOrder.StatusChanged', subject], ['ServiceOrder.Completed', subject]);
    expect(await waiting()).toBe(3);
    const page = (await (await t.fetch('/api/external/events', { apiKey: p.partner.apiKey })).json()) as EventsPage;
    expect(page.events).toHaveLength(3);
    expect(await waiting()).toBe(3);
    expect((await t.fetch(`/api/external/events?since=${encodeURIComponent(page.nextSince)}`, { apiKey: p.partner.apiKey })).status).toBe(200);
    expect(await waiting()).toBe(0);
  }, 30_000);

  it('counts telemetry reports by outcome, and shows the oldest due job per queue and the lag of each polled partner', async () => {
    const tenant = await makeTenant(t.rt);
    await makeCityPole(t.rt, { tenantId: tenant.id, device: 'TG-MET-1' });
    const key = await createTelemetryKey(t.rt, { tenantId: tenant.id });
    const reports = (e: Exposition, outcome: string) => e.value('lumen_telemetry_reports_total', { outcome }) ?? 0;
    const before = await scrape();
    const now = Date.now();
    const res = await t.fetch('/api/telemetry/reports', {
      method: 'POST',
      apiKey: key.apiKey,
      json: {
        reports: [
          { deviceIdentifier: 'TG-MET-1', online: true, relayOn: true, reportedAt: new Date(now - 1000).toISOString() },
          { deviceIdentifier: 'TG-MET-1', online: false, relayOn: false, reportedAt: new Date(now - 2000).toISOString() },
          { deviceIdentifier: 'TG-MET-404', online: true, relayOn: true, reportedAt: new Date(now).toISOString() },
          { deviceIdentifier: 'TG-MET-1', online: true, relayOn: true, reportedAt: new Date(now + 3_600_000).toISOString() },
        ],
      },
    });
    expect(res.status).toBe(200);
    const after = await scrape();
    expect(['applied', 'stale', 'unknown', 'rejected'].map((o) => reports(after, o) - reports(before, o))).toEqual([1, 1, 1, 1]);

    // A job due now on a queue no worker serves: its age grows.
    await t.rt.jobs.boss.createQueue('metrics-probe');
    await t.rt.jobs.boss.send('metrics-probe', {});
    await waitFor(async () => ((await scrape()).value('lumen_job_queue_oldest_due_seconds', { queue: 'metrics-probe' }) ?? 0) > 0.2, 5_000, 'the job ages');
    expect((await scrape()).value('lumen_job_queue_oldest_due_seconds', { queue: 'events-cleanup' })).toBeDefined();

    // A polled partner: behind since it was registered, caught up after a poll that ended with hasMore false.
    const stub = await startPartnerStub();
    closers.push(() => stub.close());
    const polled = await makePollingPartner(t.rt, stub.url, { interval: 60 });
    const lag = async () => (await scrape()).value('lumen_partner_poll_lag_seconds', { partner: polled.code });
    await waitFor(async () => ((await lag()) ?? 0) > 0.5, 5_000, 'the lag grows');
    await reconcilePartnerPolls(t.rt);
    await waitFor(async () => ((await lag()) ?? 1) < 0.5, 10_000, 'caught up');
  }, 30_000);

  it('reports the embedded PostgreSQL up or down when Lumen runs on it', async () => {
    // The gauge's wiring on this test's database standing in for the embedded one.
    const pool = createPool({ url: t.db.url, max: 1 });
    const metrics = new Metrics({ pool, db: createDatabase(pool), log: t.rt.log, embedded: true });
    try {
      expect(parseExposition((await metrics.scrape()).body).value('lumen_embedded_postgres_up')).toBe(1);
      // The database gone (here: the pool closed), the next scrape says so.
      await pool.end();
      expect(parseExposition((await metrics.scrape()).body).value('lumen_embedded_postgres_up')).toBe(0);
    } finally {
      if (!pool.ending) await pool.end();
    }
  });

  it('is served on a port of its own with LUMEN_METRICS_PORT, and then not on the main one', async () => {
    const other = await startTestApp({ env: { LUMEN_METRICS_PORT: '0' } });
    try {
      expect(other.app.metricsAddress).not.toBeNull();
      const e = await scrape(`http://127.0.0.1:${other.app.metricsAddress!.port}`);
      expect(e.value('lumen_database_up')).toBe(1);
      expect((await other.fetch('/metrics')).status).toBe(404);
    } finally {
      await other.stop();
    }
  });
});

describe('W3C traceparent', () => {
  it('is logged with the request id, and a malformed one is ignored', async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const res = await t.fetch('/livez', { headers: { traceparent, 'x-request-id': 'req-trace-1' } });
    const bad = await t.fetch('/livez', { headers: { traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01', 'x-request-id': 'req-trace-2' } });
    expect([res.status, bad.status]).toEqual([200, 200]);
    const line = (id: string) => t.logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'request' && l.requestId === id);
    expect(line('req-trace-1')).toMatchObject({ requestId: 'req-trace-1', traceparent });
    expect(line('req-trace-2')).not.toHaveProperty('traceparent');
  });

  it('is sent on webhook deliveries (and logged with the attempt) and on partner polls', async () => {
    const rx = await startReceiver(() => ({ status: 204 }));
    closers.push(() => rx.close());
    const p = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    const [event] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, p)]);
    const got = await waitFor(() => rx.received.find((r) => r.headers['x-lumen-event-id'] === event!.eventId), 10_000, 'the delivery');
    const sent = String(got.headers.traceparent);
    expect(sent).toMatch(TRACEPARENT);
    await waitFor(() => t.logs.lines.some((l) => l.includes('"msg":"webhook attempt"') && l.includes(event!.eventId)), 10_000, 'the attempt logged');
    const attempt = t.logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'webhook attempt' && l.eventId === event!.eventId);
    expect(attempt!.traceparent).toBe(sent);

    const stub = await startPartnerStub();
    closers.push(() => stub.close());
    await makePollingPartner(t.rt, stub.url, { interval: 1 });
    await reconcilePartnerPolls(t.rt);
    await waitFor(() => stub.calls.length >= 2, 15_000, 'two partner polls');
    expect(stub.calls[0]!.traceparent).toMatch(TRACEPARENT);
    // A new trace per call.
    expect(stub.calls[0]!.traceparent!.split('-')[1]).not.toBe(stub.calls[1]!.traceparent!.split('-')[1]);
  }, 30_000);
});
