/**
 * The database gone under a running service: every surface answers 503
 * `service-unavailable` with Retry-After (problem+json; GeoReport's error list on
 * Open311), never a 500 that reads as a bug; /readyz says the database is unreachable
 * while /livez stays 200 (the process is fine). When the database is back, the same
 * requests succeed without a restart. The outage is a loopback TCP relay between Lumen
 * and PostgreSQL that the test closes (every connection cut, new ones refused) and opens
 * again on the same port.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { freePort } from '../support/free-port.js';
import { recordReliability } from '../support/reliability.js';

let db: TestDatabase;
let t: TestApp;
let relayPort: number;
let relay: net.Server | null = null;
const open = new Set<net.Socket>();
let apiKey: string;

function startRelay(target: URL): Promise<void> {
  relay = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    open.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream).pipe(client);
  });
  return new Promise((resolve) => relay!.listen(relayPort, '127.0.0.1', () => resolve()));
}

async function stopRelay(): Promise<void> {
  const server = relay;
  relay = null;
  for (const s of open) s.destroy();
  open.clear();
  await new Promise<void>((resolve) => server?.close(() => resolve()) ?? resolve());
}

beforeAll(async () => {
  db = await createTestDatabase();
  relayPort = await freePort();
  const target = new URL(db.url);
  await startRelay(target);
  const viaRelay = new URL(db.url);
  viaRelay.hostname = '127.0.0.1';
  viaRelay.port = String(relayPort);
  t = await startTestApp({ db, env: { DATABASE_URL: viaRelay.toString(), PGCONNECT_TIMEOUT: '2' } });
  const tenant = await makeTenant(t.rt, { name: 'Manaus' });
  apiKey = (await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canCreateServiceOrders', 'canReadCityData'] })).apiKey;
});
afterAll(async () => {
  await t?.stop().catch(() => {});
  await stopRelay();
  await db?.drop();
});

describe('the database away', () => {
  it('answers 503 with Retry-After on every surface while it is away, and serves again once it is back', async () => {
    expect((await t.fetch('/api/external/health', { apiKey })).status).toBe(200);
    await stopRelay();

    const partner = await t.fetch('/api/external/poles', { apiKey, headers: { 'accept-language': 'en' } });
    expect(partner.status).toBe(503);
    expect(partner.headers.get('retry-after')).toBe('5');
    expect(await partner.json()).toMatchObject({ type: 'urn:lumen:problem:service-unavailable', status: 503 });
    const intake = await t.fetch('/api/external/service-orders', { method: 'POST', apiKey, json: { protocolNumber: 'OUT-1' } });
    expect(intake.status).toBe(503);
    const admin = await t.fetch('/api/admin/tenants', { headers: { authorization: `Bearer lmn_adm_${'0'.repeat(40)}` } });
    expect(admin.status).toBe(503);
    const open311 = await t.fetch(`/open311/v2/services.json?api_key=${apiKey}`);
    expect(open311.status).toBe(503);
    expect(open311.headers.get('retry-after')).toBe('5');
    expect(await open311.json()).toEqual([{ code: 503, description: expect.any(String) }]);
    expect((await t.fetch('/readyz')).status).toBe(503);
    expect((await t.fetch('/livez')).status).toBe(200);

    await startRelay(new URL(db.url));
    await expect.poll(async () => (await t.fetch('/api/external/poles', { apiKey })).status, { timeout: 15_000 }).toBe(200);
    expect((await t.fetch('/readyz')).status).toBe(200);
    recordReliability('Abuse and faults', {
      item: 'the database unreachable under a running service',
      figure: 'partner, intake, admin and Open311 requests answered 503 service-unavailable with Retry-After: 5 (Open311 as its error list), /readyz 503, /livez 200; served again without a restart once it was back',
      detail: 'test/faults/database-outage.test.ts (a loopback relay to PostgreSQL cut and restored)',
    });
  });
});
