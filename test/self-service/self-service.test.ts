/**
 * Partners help themselves: /api/external/integration with the scope
 * canManageIntegration, against real loopback receivers. A partner reads its own
 * settings and limits, its delivery log, redelivers one or every dead delivery, sends
 * itself a Test.Ping (verified with the official Standard Webhooks library), rotates
 * its webhook secret with an overlap, and reads its refused polled items and failed
 * photo URLs. Every operation walked with another partner's key (same city, another
 * city) reaches nothing of the first: 404 or only its own rows, and nothing written.
 * Keys rotated with an overlap keep working until then and say so in Lumen-Key-Expires.
 */
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makePartner, makeTenant } from '../support/factories.js';
import { makeQueueRows } from '../support/queues.js';
import { adminFetch, adminToken, cliJson, problemOf } from '../operations/support.js';
import { emit, startReceiver, subjectFor, waitFor, type Received } from '../events/support.js';

let t: TestApp;
let admin: ReturnType<typeof adminFetch>;
let down = true;
let rxA: Awaited<ReturnType<typeof startReceiver>>;
let rxB: Awaited<ReturnType<typeof startReceiver>>;
let belem: string;
let curitiba: string;
type Made = Awaited<ReturnType<typeof makePartner>>;
let a: Made; // webhook partner of Belém, its receiver down at first
let b: Made; // another webhook partner of Belém
let c: Made; // a partner of Curitiba
let poller: Made; // a polling partner of Belém
let reader: Made; // a partner of Belém without canManageIntegration
const MANAGE = ['canCreateAlerts', 'canManageIntegration'];

beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_WEBHOOK_RETRY_SCHEDULE: '50ms,50ms', LUMEN_WEBHOOK_TIMEOUT_MS: '500' } });
  admin = adminFetch(t, await adminToken(t));
  rxA = await startReceiver(() => ({ status: down ? 503 : 204 }));
  rxB = await startReceiver();
  belem = (await makeTenant(t.rt, { name: 'Belém — Iluminação Pública Metropolitana do Pará', ibgeCode: '1501402', intakePolicy: 'manual' })).id;
  curitiba = (await makeTenant(t.rt, { name: 'Curitiba', ibgeCode: '4106902', intakePolicy: 'manual' })).id;
  a = await makePartner(t.rt, { tenantId: belem, code: 'PORTAL-BELEM-156-ATENDIMENTO-AO-CIDADAO', scopes: MANAGE, transport: 'webhook', webhookUrl: rxA.url });
  b = await makePartner(t.rt, { tenantId: belem, code: 'APP-ILUMINA-BELEM', scopes: MANAGE, transport: 'webhook', webhookUrl: rxB.url });
  c = await makePartner(t.rt, { tenantId: curitiba, code: 'PORTAL-CURITIBA-156', scopes: MANAGE, transport: 'webhook', webhookUrl: rxB.url });
  poller = await makePartner(t.rt, { tenantId: belem, code: 'MAPA-BELEM-POLLING', scopes: MANAGE, transport: 'polling', pollingUrl: 'https://mapa.belem.example.gov.br/lumen/requests' });
  reader = await makePartner(t.rt, { tenantId: belem, code: 'LEITOR-BELEM', scopes: ['canReadCityData'], transport: 'polling' });
});
afterAll(async () => {
  await rxA?.close();
  await rxB?.close();
  await t?.stop();
});

const call = (key: string, path: string, init: RequestInit & { json?: unknown } = {}) =>
  t.fetch(`/api/external/integration${path}`, { ...init, apiKey: key, method: init.method ?? (init.json !== undefined ? 'POST' : 'GET') });

async function ok<T = Record<string, any>>(res: Response, status = 200): Promise<T> {
  expect(res.status, await res.clone().text()).toBe(status);
  return (await res.json()) as T;
}

const deliveryCount = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM webhook_delivery`.execute(t.rt.db)).rows[0]!.n);
const auditCount = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM audit_log`.execute(t.rt.db)).rows[0]!.n);

describe('a partner’s own integration', () => {
  let deadIds: string[] = [];
  let bDelivery: string;

  it('reads its settings, limits and what waits for it', async () => {
    const me = await ok(await call(a.apiKey, ''));
    expect(me).toMatchObject({
      externalSystemCode: a.code,
      tenantId: belem,
      enabled: true,
      scopes: MANAGE,
      transport: 'webhook',
      webhook: { url: rxA.url, secretSet: true, previousSecretUntil: null },
      polling: { url: null },
      limits: { requestsPerMinute: 6000, attachmentsPerRequest: 10, attachmentMaxBytes: 5 * 1024 * 1024 },
      key: { keyPrefix: a.keyPrefix, expiresAt: null, previousKey: null },
      attention: { deadDeliveries: 0, openRejectedItems: 0, attachmentFailures: 0 },
    });
    expect(JSON.stringify(me)).not.toMatch(/whsec_|lmn_live_[A-Za-z0-9]{20}/);
  });

  it('sees its delivery log with filters, only its own', async () => {
    const subjectA = await subjectFor(t.rt, { tenantId: belem, partner: a });
    const subjectB = await subjectFor(t.rt, { tenantId: belem, partner: b });
    await emit(t.rt, ['ServiceOrder.Created', subjectA], ['ServiceOrder.StatusChanged', subjectA], ['ServiceOrder.Created', subjectB]);
    // Three attempts each (the first and two retries) at 503: both of A's deliveries die; B's succeeds.
    const log = await waitFor(async () => {
      const page = await ok<{ partnerCode: string; deliveries: { id: string; status: string; attemptLog: unknown[] }[] }>(await call(a.apiKey, '/webhook-deliveries?status=dead'));
      return page.deliveries.length === 2 ? page : null;
    }, 15_000, 'A’s two deliveries to die');
    expect(log.partnerCode).toBe(a.code);
    expect(log.deliveries.map((d) => [d.status, d.attemptLog.length])).toEqual([['dead', 3], ['dead', 3]]);
    deadIds = log.deliveries.map((d) => d.id);
    const mine = await ok<{ deliveries: { partnerCode: string }[] }>(await call(b.apiKey, '/webhook-deliveries'));
    expect(mine.deliveries.map((d) => d.partnerCode)).toEqual([b.code]);
    bDelivery = (mine.deliveries[0] as unknown as { id: string }).id;
    expect((await ok(await call(a.apiKey, '/webhook-deliveries?status=succeeded'))).deliveries).toEqual([]);
    expect((await ok(await call(a.apiKey, `/webhook-deliveries/${deadIds[0]}`))).attemptLog[0]).toMatchObject({ succeeded: false, statusCode: 503 });
    expect((await ok(await call(a.apiKey, ''))).attention.deadDeliveries).toBe(2);
    const bad = await call(a.apiKey, '/webhook-deliveries?status=lost');
    expect(bad.status).toBe(400);
    expect((await problemOf(bad)).errors?.[0]?.pointer).toBe('/query/status');
  });

  it('redelivers every dead delivery once its receiver is back, audited with the partner as the actor', async () => {
    down = false;
    const before = rxA.received.length;
    const queued = await ok<{ count: number; deliveryIds: string[] }>(await call(a.apiKey, '/webhook-deliveries/redeliver-dead', { method: 'POST' }));
    expect(queued.count).toBe(2);
    await waitFor(() => rxA.received.slice(before).filter((r) => r.status === 204).length === 2, 10_000, 'two redeliveries');
    const audit = await t.rt.db.selectFrom('audit_log').selectAll().where('action', '=', 'webhook.redeliver-dead').where('entity_id', '=', a.id).execute();
    expect(audit.map((r) => [r.actor, r.tenant_id])).toEqual([[`partner:${a.code}`, belem]]);
    expect((await ok(await call(a.apiKey, ''))).attention.deadDeliveries).toBe(0);
    // Nothing dead is left: a second call queues nothing.
    expect((await ok(await call(a.apiKey, '/webhook-deliveries/redeliver-dead', { method: 'POST' }))).count).toBe(0);
  });

  it('redelivers one delivery by id, as a new delivery that records the one it repeats', async () => {
    const again = await ok<{ id: string; redeliveryOf: string; requestedBy: string }>(await call(a.apiKey, `/webhook-deliveries/${deadIds[0]}/redeliver`, { method: 'POST' }), 201);
    expect(again).toMatchObject({ redeliveryOf: deadIds[0], requestedBy: `partner:${a.code}` });
    await waitFor(async () => (await ok(await call(a.apiKey, `/webhook-deliveries/${again.id}`))).status === 'succeeded', 10_000, 'the redelivery');
  });

  it('sends itself a Test.Ping signed like every event; a polling partner is told why it cannot', async () => {
    const before = rxA.received.length;
    const sent = await ok<{ eventId: string; deliveryId: string }>(await call(a.apiKey, '/test-event', { method: 'POST' }), 202);
    const got = await waitFor(() => rxA.received.slice(before).find((r) => JSON.parse(r.raw.toString()).eventId === sent.eventId), 10_000, 'the test event');
    const body = new Webhook(a.webhookSecret!).verify(got.raw.toString(), headersOf(got)) as { eventType: string; message: string };
    expect(body).toMatchObject({ eventType: 'Test.Ping' });
    expect(body.message).toMatch(/your integration asked for/);
    const refused = await call(poller.apiKey, '/test-event', { method: 'POST' });
    expect(refused.status).toBe(409);
    expect((await problemOf(refused)).detail).toMatch(/polling mode/);
  });

  it('rotates its own webhook secret: the next delivery verifies with the new one and with the old during the overlap', async () => {
    const rotated = await ok<{ webhookSecret: string; previousSecretUntil: string }>(await call(a.apiKey, '/rotate-webhook-secret', { json: { overlapSeconds: 3600 } }));
    expect(rotated.webhookSecret).toMatch(/^whsec_/);
    expect(Date.parse(rotated.previousSecretUntil) - Date.now()).toBeGreaterThan(3500_000);
    const before = rxA.received.length;
    const sent = await ok<{ eventId: string }>(await call(a.apiKey, '/test-event', { method: 'POST' }), 202);
    const got = await waitFor(() => rxA.received.slice(before).find((r) => JSON.parse(r.raw.toString()).eventId === sent.eventId), 10_000, 'the test event');
    expect(() => new Webhook(rotated.webhookSecret).verify(got.raw.toString(), headersOf(got))).not.toThrow();
    expect(() => new Webhook(a.webhookSecret!).verify(got.raw.toString(), headersOf(got))).not.toThrow();
    expect((await ok(await call(a.apiKey, ''))).webhook.previousSecretUntil).toBe(rotated.previousSecretUntil);
    // Overlap 0: the replaced secret stops signing at once.
    const now = await ok<{ webhookSecret: string; previousSecretUntil: null }>(await call(a.apiKey, '/rotate-webhook-secret', { json: { overlapSeconds: 0 } }));
    expect(now.previousSecretUntil).toBeNull();
    const audit = await t.rt.db.selectFrom('audit_log').select('actor').where('action', '=', 'partner.rotate-secret').where('entity_id', '=', a.id).execute();
    expect(audit.map((r) => r.actor)).toEqual([`partner:${a.code}`, `partner:${a.code}`]);
    const bad = await call(a.apiKey, '/rotate-webhook-secret', { json: { overlapSeconds: 9_000_000 } });
    expect(bad.status).toBe(422);
    expect((await problemOf(bad)).errors?.[0]?.pointer).toBe('/overlapSeconds');
    expect((await call(poller.apiKey, '/rotate-webhook-secret', { method: 'POST' })).status).toBe(409);
  });

  it('reads its refused polled items and failed photo URLs, not another partner’s', async () => {
    const alertP = await makeAlert(t.rt, { tenantId: belem, externalSystemId: poller.id, protocolNumber: 'MAPA-2026-000042' });
    const alertB = await makeAlert(t.rt, { tenantId: belem, externalSystemId: b.id, protocolNumber: 'APP-2026-000007' });
    const own = await makeQueueRows(t.rt, { tenantId: belem, externalSystemId: poller.id, alertId: alertP.id, protocolNumber: 'MAPA-2026-000042' });
    const other = await makeQueueRows(t.rt, { tenantId: belem, externalSystemId: b.id, alertId: alertB.id, protocolNumber: 'APP-2026-000007' });
    const items = await ok<{ items: { id: string; protocolNumber: string }[]; total: number }>(await call(poller.apiKey, '/rejected-items?status=open'));
    expect(items.items.map((i) => i.id)).toEqual([own.itemId]);
    expect(items.total).toBe(1);
    const failures = await ok<{ items: { id: string; protocolNumber: string; url: string }[] }>(await call(poller.apiKey, '/attachment-failures'));
    expect(failures.items.map((f) => f.id)).toEqual([own.failureId]);
    expect((await ok(await call(b.apiKey, '/attachment-failures'))).items.map((f: { id: string }) => f.id)).toEqual([other.failureId]);
    expect((await ok(await call(poller.apiKey, ''))).attention).toEqual({ deadDeliveries: 0, openRejectedItems: 1, attachmentFailures: 1 });
  });

  it('walks every operation with another partner’s key (same city, another city): 0 leaks, nothing written', async () => {
    const deliveries = await deliveryCount();
    const audits = await auditCount();
    const secretBefore = (await t.rt.db.selectFrom('external_system').select('webhook_secret_enc').where('id', '=', a.id).executeTakeFirstOrThrow()).webhook_secret_enc;
    for (const other of [b, c]) {
      for (const [method, path] of [
        ['GET', `/webhook-deliveries/${deadIds[0]}`],
        ['POST', `/webhook-deliveries/${deadIds[0]}/redeliver`],
      ] as const) {
        const res = await call(other.apiKey, path, { method });
        expect(res.status, `${other.code} ${method} ${path}`).toBe(404);
        expect(await res.text()).not.toContain(a.code);
      }
      for (const path of ['', '/webhook-deliveries', '/webhook-deliveries?status=dead', '/rejected-items', '/attachment-failures']) {
        const res = await call(other.apiKey, path);
        expect(res.status, `${other.code} GET ${path}`).toBe(200);
        const text = await res.text();
        expect(text, `${other.code} GET ${path}`).not.toContain(a.code);
        for (const id of deadIds) expect(text).not.toContain(id);
      }
    }
    // C (another city) reads none of Belém's rows at all.
    expect(await (await call(c.apiKey, '/attachment-failures')).text()).not.toMatch(/MAPA-|APP-/);
    expect((await call(c.apiKey, `/webhook-deliveries/${bDelivery}`)).status).toBe(404);
    expect(await deliveryCount()).toBe(deliveries);
    expect(await auditCount()).toBe(audits);
    expect((await t.rt.db.selectFrom('external_system').select('webhook_secret_enc').where('id', '=', a.id).executeTakeFirstOrThrow()).webhook_secret_enc).toBe(secretBefore);
  });

  it('without canManageIntegration every operation is 403 and nothing is written', async () => {
    const deliveries = await deliveryCount();
    const audits = await auditCount();
    for (const [method, path] of [
      ['GET', ''],
      ['GET', '/webhook-deliveries'],
      ['GET', `/webhook-deliveries/${deadIds[0]}`],
      ['POST', `/webhook-deliveries/${deadIds[0]}/redeliver`],
      ['POST', '/webhook-deliveries/redeliver-dead'],
      ['POST', '/test-event'],
      ['POST', '/rotate-webhook-secret'],
      ['GET', '/rejected-items'],
      ['GET', '/attachment-failures'],
    ] as const) {
      const res = await call(reader.apiKey, path, { method });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect((await problemOf(res)).type).toBe('urn:lumen:problem:forbidden');
    }
    expect(await deliveryCount()).toBe(deliveries);
    expect(await auditCount()).toBe(audits);
  });
});

describe('API key rotation with an overlap', () => {
  it('keeps the previous key working until then, says so in Lumen-Key-Expires, and never keeps more than two', async () => {
    const p = await makePartner(t.rt, { tenantId: curitiba, code: 'CITYMAP-CURITIBA', scopes: ['canReadCityData', 'canManageIntegration'], transport: 'polling' });
    const first = p.apiKey;
    const health = (key: string) => t.fetch('/api/external/health', { apiKey: key });
    expect((await health(first)).headers.get('lumen-key-expires')).toBeNull();

    const rotated = await ok<{ apiKey: string; keyPrefix: string; previousKey: { keyPrefix: string; expiresAt: string } }>(await admin(`/partners/${p.code}/rotate-key`, { json: { overlapSeconds: 3600 } }));
    expect(rotated.previousKey.keyPrefix).toBe(p.keyPrefix);
    const old = await health(first);
    expect(old.status).toBe(200);
    expect(old.headers.get('lumen-key-expires')).toBe(rotated.previousKey.expiresAt);
    expect(Date.parse(rotated.previousKey.expiresAt) - Date.now()).toBeGreaterThan(3500_000);
    const fresh = await health(rotated.apiKey);
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('lumen-key-expires')).toBeNull();
    // The integration says which key this is, and the other one.
    expect((await ok(await call(rotated.apiKey, ''))).key).toEqual({ keyPrefix: rotated.keyPrefix, expiresAt: null, previousKey: rotated.previousKey });
    expect((await ok(await call(first, ''))).key).toMatchObject({ keyPrefix: p.keyPrefix, expiresAt: rotated.previousKey.expiresAt, previousKey: null });
    expect((await ok(await admin(`/partners/${p.code}`))).previousKey).toEqual(rotated.previousKey);

    // A second rotation with an overlap: the key of the first overlap stops at once.
    const second = cliJson(await t.cli('partner', 'rotate-key', p.code, '--overlap', '24h', '--json')) as { apiKey: string; previousKey: { keyPrefix: string; expiresAt: string } };
    expect((await health(first)).status).toBe(401);
    expect(second.previousKey.keyPrefix).toBe(rotated.keyPrefix);
    expect(Math.round((Date.parse(second.previousKey.expiresAt) - Date.now()) / 3_600_000)).toBe(24);
    expect((await health(rotated.apiKey)).status).toBe(200);
    // When the overlap ends the previous key gets 401.
    await sql`UPDATE api_key SET expires_at = now() - interval '1 second' WHERE key_prefix = ${rotated.keyPrefix}`.execute(t.rt.db);
    expect((await health(rotated.apiKey)).status).toBe(401);
    expect((await health(second.apiKey)).status).toBe(200);
    expect((await ok(await admin(`/partners/${p.code}`))).previousKey).toBeNull();

    // Without an overlap, as the interface says: the previous key stops at once.
    const plain = await ok<{ apiKey: string; previousKey: null }>(await admin(`/partners/${p.code}/rotate-key`, { method: 'POST' }));
    expect(plain.previousKey).toBeNull();
    expect((await health(second.apiKey)).status).toBe(401);
    expect((await health(plain.apiKey)).status).toBe(200);

    const bad = await admin(`/partners/${p.code}/rotate-key`, { json: { overlapSeconds: 604_801 } });
    expect(bad.status).toBe(422);
    expect((await health(plain.apiKey)).status).toBe(200);
    const cliBad = await t.cli('partner', 'rotate-key', p.code, '--overlap', 'tomorrow');
    expect(cliBad.code).not.toBe(0);
    expect(cliBad.stderr).toMatch(/--overlap: "tomorrow" is not a duration/);
  });
});

function headersOf(r: Received): Record<string, string> {
  return Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)]));
}
