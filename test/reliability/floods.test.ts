/**
 * Floods against one Lumen process, as an attacker would send them, with the service
 * run as `npm start` runs it (`node --import tsx src/main.ts serve`, like
 * memory-load.test.ts) under an open-files limit of 3000 (prlimit), on this file's own
 * database. Loopback only; every loop is bounded.
 *
 * 1. Idle connections: thousands of connections that send half a request line and
 *    never finish, from one address, then from many. `/livez` and a partner's request
 *    from another address still answer; the flooder's extra connections are closed.
 * 2. Sign-ins: hundreds at once from hundreds of addresses, while a partner posts
 *    requests with a photo; the partner's requests are all answered, and no sign-in is
 *    answered with anything but 401, 429 or 503.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { testEnv } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { freePort } from '../support/free-port.js';
import { recordReliability } from '../support/reliability.js';
import { serveLumen, type ServedLumen } from '../support/serve.js';
import { quantile } from '../../bench/harness/stats.js';

const SECTION = 'Abuse and faults';
const OPEN_FILES = 3000;

let db: TestDatabase;
let rt: Runtime;
let served: ServedLumen | undefined;
let port: number;
let metricsPort: number;
let dataDir: string;
let apiKey: string;

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'lumen-floods-'));
  // The sign-in flood below meets the production hash cost (LUMEN_PASSWORD_COST 15), not the suite's cheaper one.
  const env = testEnv(db.url, { LUMEN_DATA_DIR: dataDir, LUMEN_LOG_LEVEL: 'warn', LUMEN_VALIDATE_RESPONSES: 'false', LUMEN_RATE_LIMIT_PER_MINUTE: '1000000', LUMEN_AUTH_FAILURES_PER_MINUTE: '0', LUMEN_PASSWORD_COST: '15' });
  rt = await openRuntime(loadConfig(env), createLogger('silent'), { migrate: false, work: false, poolSize: 2 });
  const tenant = await makeTenant(rt, { name: 'Curitiba' });
  apiKey = (await makePartner(rt, { tenantId: tenant.id, scopes: ['canCreateServiceOrders', 'canReadCityData'] })).apiKey;
  port = await freePort();
  metricsPort = await freePort();
  served = await serveLumen({ ...env, LUMEN_METRICS_PORT: String(metricsPort) }, port, ['prlimit', `--nofile=${OPEN_FILES}:${OPEN_FILES}`]);
}, 90_000);

afterAll(async () => {
  await served?.stop();
  await rt?.close();
  await db?.drop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** One GET from a given loopback address (to the public port, or another): status and milliseconds. */
function getFrom(localAddress: string, pathAndQuery: string, headers: Record<string, string> = {}, to = port): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: to, path: pathAndQuery, localAddress, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`no answer to ${pathAndQuery} within 30 s`)));
  });
}

/** Opens `count` connections from `localAddress` that send half a request line and stay; resolves once each is open or refused. */
async function idleFlood(localAddress: string, count: number): Promise<{ sockets: net.Socket[]; closedByServer: () => number }> {
  const sockets: net.Socket[] = [];
  let closed = 0;
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((resolve) => {
          const s = net.connect({ host: '127.0.0.1', port, localAddress });
          sockets.push(s);
          s.on('connect', () => {
            s.write('GET /api/external/health HTTP/1.1\r\nHost: lumen\r\n');
            resolve();
          });
          s.on('error', () => resolve());
          s.on('close', () => {
            closed++;
            resolve();
          });
        }),
    ),
  );
  return { sockets, closedByServer: () => closed };
}

describe('floods', { timeout: 180_000 }, () => {
  it('an idle-connection flood from one address, then from many, leaves /livez and another address’s partner request answering', async () => {
    const one = await idleFlood('127.0.0.1', 2500);
    // Give the server a moment to close what is past the per-address cap (event, not a sleep: a request answered from elsewhere).
    const livez = await getFrom('127.0.0.2', '/livez');
    const partner = await getFrom('127.0.0.2', '/api/external/health', { 'x-api-key': apiKey });
    expect(livez.status).toBe(200);
    expect(partner.status).toBe(200);
    // Past the per-address cap the flooder's connections were closed at once.
    await expect.poll(() => one.closedByServer(), { timeout: 10_000 }).toBeGreaterThan(2000);
    const heldFromOne = 2500 - one.closedByServer();

    // Many addresses, past the total: the public port closes what is past its reserve, and
    // the probes answer on the metrics port (LUMEN_METRICS_PORT), outside the caps.
    const many = await Promise.all(Array.from({ length: 12 }, (_, i) => idleFlood(`127.0.3.${i + 1}`, 240)));
    const livezUnderTotal = await getFrom('127.0.0.4', '/livez', {}, metricsPort);
    expect(livezUnderTotal.status).toBe(200);
    expect((await getFrom('127.0.0.4', '/readyz', {}, metricsPort)).status).toBe(200);
    const held = heldFromOne + many.reduce((n, f) => n + f.sockets.length - f.closedByServer(), 0);
    for (const f of [one, ...many]) for (const s of f.sockets) s.destroy();
    // Once the flood is gone, a partner request is served normally again.
    await expect.poll(async () => (await getFrom('127.0.0.5', '/api/external/health', { 'x-api-key': apiKey })).status, { timeout: 10_000 }).toBe(200);
    recordReliability(SECTION, {
      item: 'idle-connection flood (half request lines, never finished), open-files limit 3000',
      figure: `2,500 from one address: ${heldFromOne} held (the per-address cap), the rest closed at once; /livez ${livez.ms.toFixed(0)} ms and a partner's request ${partner.ms.toFixed(0)} ms from another address. Then 2,880 more from 12 addresses (${held} held in all, the rest closed): /livez on the metrics port ${livezUnderTotal.ms.toFixed(0)} ms`,
      detail: 'test/reliability/floods.test.ts; caps from the open-files limit (LUMEN_MAX_CONNECTIONS, _PER_ADDRESS), a reserve for health checks',
    });
  });

  it('a sign-in flood from 600 addresses never holds a partner’s intake back, and is answered 401, 429 or 503', async () => {
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
    const signIn = (i: number): Promise<{ status: number; ms: number }> => {
      const started = performance.now();
      const body = JSON.stringify({ email: `someone-${i}@curitiba.example`, password: `wrong-password-${i}` });
      return new Promise((resolve) => {
        const req = http.request(
          { host: '127.0.0.1', port, path: '/api/admin/session', method: 'POST', localAddress: `127.0.${10 + Math.floor(i / 250)}.${(i % 250) + 1}`, agent: false, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
          },
        );
        req.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
        req.end(body);
      });
    };
    const intake = async (n: number): Promise<{ status: number; ms: number }> => {
      const body = JSON.stringify({
        protocolNumber: `FLOOD-${n}-${randomUUID().slice(0, 8)}`,
        assetType: 'POLE',
        requestedAt: new Date(Date.now() - 60_000).toISOString(),
        requester: { name: 'Maria Aparecida dos Santos' },
        address: { street: 'Rua XV de Novembro', number: '100', latitude: -25.4284, longitude: -49.2733 },
        problem: { description: 'Lâmpada apagada.' },
        attachments: [{ type: 'photo', contentType: 'image/png', filename: 'p.png', contentBase64: png.toString('base64') }],
      });
      const started = performance.now();
      const res = await fetch(`http://127.0.0.1:${port}/api/external/service-orders`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey }, body });
      await res.arrayBuffer();
      return { status: res.status, ms: performance.now() - started };
    };
    const flood = Promise.all(Array.from({ length: 600 }, (_, i) => signIn(i)));
    const intakes: { status: number; ms: number }[] = [];
    for (let i = 0; i < 30; i++) intakes.push(await intake(i));
    const signIns = await flood;
    expect(intakes.map((r) => r.status)).toEqual(Array(30).fill(201));
    const statuses = new Set(signIns.map((r) => r.status));
    expect([...statuses].every((s) => [401, 429, 503].includes(s)), `sign-in statuses ${[...statuses].join(', ')}`).toBe(true);
    const intakeMs = intakes.map((r) => r.ms);
    const signInMs = signIns.map((r) => r.ms);
    const count = (s: number) => signIns.filter((r) => r.status === s).length;
    recordReliability(SECTION, {
      item: 'sign-in flood (600 at once from 600 addresses) beside a partner posting requests with a photo',
      figure: `partner intake p50 ${quantile(intakeMs, 0.5).toFixed(0)} ms, p99 ${quantile(intakeMs, 0.99).toFixed(0)} ms (30 of 30 created); sign-ins p50 ${quantile(signInMs, 0.5).toFixed(0)} ms, p99 ${quantile(signInMs, 0.99).toFixed(0)} ms: ${count(401)} × 401, ${count(503)} × 503 (hash threads busy past the wait), ${count(429)} × 429`,
      detail: 'test/reliability/floods.test.ts; scrypt on LUMEN_PASSWORD_HASHES (2) threads of its own with a 2 s wait, then 503 + Retry-After',
    });
  });
});
