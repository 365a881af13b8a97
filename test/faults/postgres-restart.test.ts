/**
 * PostgreSQL restarted under an intake load, on an embedded server of this test's own
 * (never the shared one). While the database is down the service answers /readyz
 * 503 and fails requests without acknowledging them; when it is back the service
 * recovers by itself (no restart of Lumen): /readyz 200, requests accepted, job
 * workers delivering again. Nothing acknowledged is lost, nothing is duplicated, and
 * every request that failed succeeds when the client retries it with its key.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openEmbeddedDatabase, type EmbeddedDatabase } from '../../src/db/embedded/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { LogSink, testEnv } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { recordReliability } from '../support/reliability.js';
import { emit, subjectFor, waitFor, WEBHOOK_SECRET } from '../events/support.js';
import { intakeBody } from '../intake/support.js';

const SECTION = 'Faults: PostgreSQL restarted under load';
const CLIENTS = 4;

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lumen-pg-restart-'));
let pg: EmbeddedDatabase | null = null;
let rt: Runtime | null = null;
let app: RunningApp | null = null;
let base = '';
const logs = new LogSink();
let receiver: http.Server | null = null;
const webhooks: string[] = [];

const open = () => openEmbeddedDatabase({ dataDir, log: () => {} });

beforeAll(async () => {
  pg = await open();
  receiver = http.createServer((req, res) => {
    webhooks.push(String(req.headers['x-lumen-event-id']));
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
  const config = loadConfig(testEnv(pg.url, { LUMEN_LOG_LEVEL: 'info' }));
  rt = await openRuntime(config, createLogger('info', logs), { migrate: true, work: true, poolSize: 10 });
  app = await startApp(rt);
  base = `http://127.0.0.1:${app.address.port}`;
}, 120_000);

afterAll(async () => {
  await app?.stop().catch(() => {});
  await pg?.stop().catch(() => {});
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

interface Sent {
  protocol: string;
  key: string;
  body: Record<string, unknown>;
  /** HTTP status, or 0 when the request got no answer. */
  status: number;
  answer: unknown;
  at: number;
}

async function post(apiKey: string, s: Pick<Sent, 'key' | 'body'>): Promise<{ status: number; answer: unknown }> {
  try {
    const res = await fetch(`${base}/api/external/service-orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'idempotency-key': s.key },
      body: JSON.stringify(s.body),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await res.text();
    return { status: res.status, answer: text ? JSON.parse(text) : null };
  } catch {
    return { status: 0, answer: null };
  }
}

async function readyz(): Promise<number> {
  try {
    return (await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5000) })).status;
  } catch {
    return 0;
  }
}

describe('PostgreSQL restarted under load', () => {
  it('reports not ready while the database is down, recovers by itself, and loses nothing acknowledged', async () => {
    const tenant = await makeTenant(rt!);
    const p = await makePartner(rt!, { tenantId: tenant.id });
    const sent: Sent[] = [];
    let n = 0;
    let running = true;
    const client = async () => {
      while (running) {
        const protocol = `PG-${String(++n).padStart(4, '0')}`;
        const s = { protocol, key: randomUUID(), body: intakeBody(protocol) };
        const { status, answer } = await post(p.apiKey, s);
        sent.push({ ...s, status, answer, at: Date.now() });
        // While the database is down, a client backs off a little.
        if (status !== 201) await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const clients = Array.from({ length: CLIENTS }, client);
    const acked = () => sent.filter((s) => s.status === 201).length;

    await waitFor(() => acked() >= 40, 30_000, '40 acknowledged requests');
    expect(await readyz()).toBe(200);

    // Down.
    const downAt = Date.now();
    await pg!.stop();
    const notReadyAfterMs = (await waitFor(async () => ((await readyz()) === 503 ? Date.now() : 0), 10_000, '/readyz 503')) - downAt;
    const ackedAtDown = acked();
    // The load goes on against the dead database for a while.
    await waitFor(() => sent.filter((s) => s.at > downAt + notReadyAfterMs && s.status !== 201).length >= 8, 15_000, 'requests failing during the outage');
    const readyDuringOutage = await readyz();

    // Back, on the same data and port; Lumen is not restarted.
    const upAt = Date.now();
    pg = await open();
    const startedMs = Date.now() - upAt;
    const readyAfterMs = (await waitFor(async () => ((await readyz()) === 200 ? Date.now() : 0), 30_000, '/readyz 200 again')) - upAt;
    const ackedBeforeUp = acked();
    await waitFor(() => acked() >= ackedBeforeUp + 40, 30_000, 'requests accepted again');
    running = false;
    await Promise.all(clients);

    // Job workers recovered too: an event written now is delivered.
    const hooks = await makePartner(rt!, { tenantId: tenant.id, scopes: [], webhookUrl: `http://127.0.0.1:${(receiver!.address() as AddressInfo).port}/hooks`, webhookSecret: WEBHOOK_SECRET });
    const subject = await subjectFor(rt!, { tenantId: tenant.id, partner: hooks });
    const [ev] = await emit(rt!, ['ServiceOrder.Created', subject]);
    await waitFor(() => webhooks.includes(ev!.eventId), 30_000, 'a webhook delivered after the restart');

    // Outcome of the load.
    const failed = sent.filter((s) => s.status !== 201);
    expect(readyDuringOutage).toBe(503);
    expect(failed.length).toBeGreaterThan(0);
    // A failure is never a 4xx for a valid request: 5xx (database unreachable) or no answer.
    expect(failed.every((s) => s.status === 0 || s.status >= 500)).toBe(true);

    // The clients retry every failed request with its key: each is now taken once.
    for (const s of failed) {
      const again = await post(p.apiKey, s);
      expect([200, 201], `${s.protocol}: ${JSON.stringify(again.answer)}`).toContain(again.status);
    }
    // Every acknowledged request is there once, and its key replays the acknowledged answer.
    for (const s of sent.filter((x) => x.status === 201)) {
      const replay = await post(p.apiKey, s);
      expect(replay.status).toBe(200);
      expect(replay.answer).toEqual(s.answer);
    }
    const alerts = await rt!.db.selectFrom('alert').select(['protocol_number', 'service_order_id']).where('tenant_id', '=', tenant.id).where('protocol_number', 'like', 'PG-%').execute();
    const protocols = alerts.map((a) => a.protocol_number);
    expect(new Set(protocols).size).toBe(protocols.length);
    expect(protocols.sort()).toEqual(sent.map((s) => s.protocol).sort());
    // Automatic mode: one order per alert, none shared, none without its alert.
    expect(alerts.every((a) => a.service_order_id !== null)).toBe(true);
    expect(new Set(alerts.map((a) => a.service_order_id)).size).toBe(alerts.length);
    const orders = await rt!.db.selectFrom('service_order').select('id').where('tenant_id', '=', tenant.id).where('id', '!=', subject.serviceOrderId!).execute();
    expect(orders.map((o) => o.id).sort()).toEqual(alerts.map((a) => a.service_order_id).sort());
    // An outage, answered 503 with Retry-After, not an unhandled error.
    expect(logs.text).toContain('database unavailable: answered 503');

    const ackedTotal = sent.filter((s) => s.status === 201).length;
    recordReliability(SECTION, { item: 'intake requests sent by 4 clients around the restart', figure: `${sent.length} (${ackedTotal} acknowledged, ${failed.length} failed while the database was away)` });
    recordReliability(SECTION, { item: 'acknowledged requests lost or duplicated', figure: '0', detail: `${ackedTotal} acknowledged, all found once; ${ackedAtDown} were acknowledged before the stop` });
    recordReliability(SECTION, { item: 'failed requests retried with their Idempotency-Key, taken exactly once', figure: `${failed.length} of ${failed.length}` });
    recordReliability(SECTION, { item: '/readyz 503 after the database stopped', figure: `${notReadyAfterMs} ms` });
    recordReliability(SECTION, { item: 'recovery: database started again → /readyz 200 (Lumen not restarted)', figure: `${readyAfterMs} ms`, detail: `the embedded PostgreSQL took ${startedMs} ms to start; job workers delivered a webhook afterwards` });
  }, 120_000);
});
