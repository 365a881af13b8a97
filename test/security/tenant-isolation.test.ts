/**
 * Tenant isolation: every partner endpoint called with one tenant's key and another
 * tenant's identifiers (cursors, protocolNumbers, Idempotency-Keys, events positions)
 * serves nothing of the other tenant, not even in `total` or in an error; and the
 * three kinds of credentials (partner keys, admin tokens, telemetry keys) never open
 * another surface.
 */
import adminDocument from '../../generated/openapi/admin.json' with { type: 'json' };
import partnerDocument from '../../generated/openapi/partner.json' with { type: 'json' };
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/services/operators/tokens.js';
import { cliActor } from '../../src/services/audit/log.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeCityOrder, makeCityPole, makePartner, makeTenant } from '../support/factories.js';
import { recordReliability } from '../support/reliability.js';
import { emit } from '../events/support.js';
import { intakeBody, JPEG } from '../intake/support.js';

const SECTION = 'Security: tenant isolation';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

/** Every response a partner of tenant A received, for the leak check. */
const seenByA: string[] = [];
let callsByA = 0;

async function call(apiKey: string, path: string, init: { method?: string; json?: unknown; headers?: Record<string, string> } = {}) {
  const res = await t.fetch(path, { apiKey, ...init });
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

async function asA(apiKey: string, path: string, init: Parameters<typeof call>[2] = {}) {
  const r = await call(apiKey, path, init);
  callsByA++;
  seenByA.push(r.text, JSON.stringify([...r.headers.entries()]));
  return r;
}

const SCOPES = ['canCreateServiceOrders', 'canReadCityData'];

/** A city with poles, orders, requests and events of its own, all named after `tag`. */
async function city(tag: string, counts: { poles: number; orders: number }) {
  const tenant = await makeTenant(t.rt, { name: `Cidade ${tag}` });
  const partner = await makePartner(t.rt, { tenantId: tenant.id, code: `partner-${tag.toLowerCase()}`, scopes: SCOPES, transport: 'polling' });
  const poles = [];
  for (let i = 0; i < counts.poles; i++) poles.push(await makeCityPole(t.rt, { tenantId: tenant.id, code: `POLE-${tag}-${i}`, address: `Rua ${tag} Secreta, ${100 + i}`, device: `TG-${tag}-${i}` }));
  const orders = [];
  for (let i = 0; i < counts.orders; i++) orders.push(await makeCityOrder(t.rt, { tenantId: tenant.id, address: `Avenida ${tag} Reservada, ${i}` }));
  return { tenant, partner, poles, orders };
}

describe('one tenant, another tenant\'s identifiers', () => {
  it('serves nothing of another tenant on any partner endpoint, not even in totals or errors', async () => {
    const a = await city('ALFA', { poles: 3, orders: 2 });
    const b = await city('BETA', { poles: 7, orders: 5 });
    const a2 = await makePartner(t.rt, { tenantId: a.tenant.id, code: 'partner-alfa-2', scopes: SCOPES, transport: 'polling' });

    // Tenant B's requests and events, with keys and protocol numbers A will reuse.
    const bKey = '3f1c1b9e-8d4a-4c1e-9a55-6b2d7f0e4c11';
    const bBody = intakeBody('PROTO-BETA-0001', { requester: { name: 'Beatriz Sigilosa', phone: '+5511900000001' }, attachments: [{ type: 'photo', contentBase64: JPEG.toString('base64'), filename: 'beta.jpg', contentType: 'image/jpeg' }] });
    const bCreated = await call(b.partner.apiKey, '/api/external/service-orders', { method: 'POST', json: bBody, headers: { 'idempotency-key': bKey } });
    expect(bCreated.status).toBe(201);
    const bAlert = await t.rt.db.selectFrom('alert').selectAll().where('id', '=', bCreated.body.alert.id).executeTakeFirstOrThrow();
    await emit(t.rt, ['ServiceOrder.StatusChanged', { alert: { ...bAlert, status: 'Linked' }, serviceOrderId: bAlert.service_order_id }]);
    const bEvents = await call(b.partner.apiKey, '/api/external/events?limit=1');
    expect(bEvents.body.events).toHaveLength(1);
    const bPoles = await call(b.partner.apiKey, '/api/external/poles?pageSize=2');
    const bOrders = await call(b.partner.apiKey, '/api/external/service-orders?pageSize=2');
    expect(bPoles.body.total).toBe(7);
    expect(bOrders.body.total).toBe(6);

    // Health names A's city only.
    const health = await asA(a.partner.apiKey, '/api/external/health');
    expect(health.body).toMatchObject({ tenantId: a.tenant.id, externalSystemCode: a.partner.code });

    // Reads: A's items only, totals counting A's rows only, whatever the filters.
    const aPoleIds = new Set(a.poles.map((p) => p.id));
    const aOrderIds = new Set(a.orders.map((o) => o.id));
    for (const q of ['', '?pageSize=1', '?pageSize=1&page=3', '?page=50', '?updatedSince=2000-01-01T00:00:00.000Z', '?pageSize=1000']) {
      const poles = await asA(a.partner.apiKey, `/api/external/poles${q}`);
      expect(poles.status).toBe(200);
      expect(poles.body.total, q).toBe(3);
      for (const p of poles.body.items) expect(aPoleIds.has(p.id)).toBe(true);
      const orders = await asA(a.partner.apiKey, `/api/external/service-orders${q}`);
      expect(orders.body.total, q).toBe(2);
      for (const o of orders.body.items) expect(aOrderIds.has(o.id)).toBe(true);
    }

    // B's cursors: refused as cursors A was never given, with nothing of B in the error.
    for (const [path, cursor] of [
      ['/api/external/poles', bPoles.body.nextCursor],
      ['/api/external/service-orders', bOrders.body.nextCursor],
    ] as const) {
      expect(cursor).toEqual(expect.any(String));
      const r = await asA(a.partner.apiKey, `${path}?cursor=${encodeURIComponent(cursor)}`);
      expect(r.status).toBe(400);
      expect(r.body.type).toBe('urn:lumen:problem:invalid-cursor');
    }

    // Events: B's position used as A's since shows none of B's events and confirms nothing of B's.
    const aEvents = await asA(a.partner.apiKey, `/api/external/events?since=${encodeURIComponent(bEvents.body.nextSince)}`);
    expect(aEvents.status).toBe(200);
    expect(aEvents.body.events).toEqual([]);
    const bAgain = await call(b.partner.apiKey, '/api/external/events');
    expect(bAgain.body.events.map((e: { eventId: string }) => e.eventId)).toEqual(bEvents.body.events.map((e: { eventId: string }) => e.eventId));

    // Intake: B's protocolNumber and B's Idempotency-Key are A's to use afresh; B's alert is untouched.
    const reused = await asA(a.partner.apiKey, '/api/external/service-orders', { method: 'POST', json: bBody, headers: { 'idempotency-key': bKey } });
    expect(reused.status).toBe(201);
    expect(reused.body.alert.id).not.toBe(bCreated.body.alert.id);
    expect(reused.body.alert.alertNumber).toBe(1);
    expect(reused.body.internalProtocol).toMatch(/-00003$/);
    const replayA = await asA(a.partner.apiKey, '/api/external/service-orders', { method: 'POST', json: bBody, headers: { 'idempotency-key': bKey } });
    expect(replayA.status).toBe(200);
    expect(replayA.body).toEqual(reused.body);
    // A second partner of the same tenant: its own key and protocol namespace too.
    const sibling = await call(a2.apiKey, '/api/external/service-orders', { method: 'POST', json: bBody, headers: { 'idempotency-key': bKey } });
    expect(sibling.status).toBe(201);
    expect(sibling.body.alert.id).not.toBe(reused.body.alert.id);
    // Same key, other body: reused only within the partner that used it.
    const otherBody = await asA(a.partner.apiKey, '/api/external/service-orders', { method: 'POST', json: intakeBody('PROTO-ALFA-0002'), headers: { 'idempotency-key': bKey } });
    expect(otherBody.status).toBe(422);
    const bAfter = await t.rt.db.selectFrom('alert').selectAll().where('id', '=', bAlert.id).executeTakeFirstOrThrow();
    expect(bAfter).toEqual(bAlert);
    const bReplay = await call(b.partner.apiKey, '/api/external/service-orders', { method: 'POST', json: bBody, headers: { 'idempotency-key': bKey } });
    expect(bReplay.status).toBe(200);
    expect(bReplay.body).toEqual(bCreated.body);

    // B's order id as a path: the same 404 as for an id that exists nowhere.
    const bOrderPath = await asA(a.partner.apiKey, `/api/external/service-orders/${b.orders[0]!.id}`);
    const nowherePath = await asA(a.partner.apiKey, '/api/external/service-orders/00000000-0000-4000-8000-000000000000');
    expect(bOrderPath.status).toBe(404);
    expect(bOrderPath.body.detail.replace(b.orders[0]!.id, 'ID')).toBe(nowherePath.body.detail.replace('00000000-0000-4000-8000-000000000000', 'ID'));

    // Nothing A was served names anything of B (the 404 above echoes A's own path: left
    // out; B's requester name is in the body A sent itself, so it is not B's to leak).
    const leakCheck = seenByA.filter((s) => !s.includes(`/api/external/service-orders/${b.orders[0]!.id}`));
    const secretsOfB = [
      b.tenant.id, b.partner.id, b.partner.code, 'Cidade BETA', 'BETA Secreta', 'BETA Reservada', 'TG-BETA',
      bCreated.body.alert.id, bCreated.body.id, ...b.poles.flatMap((p) => [p.id, p.code]), ...b.orders.map((o) => o.id),
      ...bEvents.body.events.map((e: { eventId: string }) => e.eventId),
    ];
    const leaks = secretsOfB.filter((s) => leakCheck.some((text) => text.includes(s)));
    expect(leaks).toEqual([]);
    recordReliability(SECTION, {
      item: "responses to tenant A checked for tenant B's identifiers",
      figure: `${callsByA} responses, ${secretsOfB.length} identifiers, 0 found`,
      detail: "health, poles and service-order reads with every filter, B's cursors, B's events position, B's protocolNumber and Idempotency-Key, B's ids in paths; totals equal A's own counts",
    });
  });
});

describe('credentials open their own surface only', () => {
  it('refuses partner keys on every admin operation and admin tokens on every partner operation, alike', async () => {
    const p = await makePartner(t.rt, { scopes: SCOPES });
    const admin = await createAdminToken(t.rt, cliActor(), 'isolation');
    const fill = (path: string) => path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
    let tried = 0;

    for (const [path, ops] of Object.entries((adminDocument as { paths: Record<string, Record<string, unknown>> }).paths)) {
      // The console's sign-in needs no credentials (x-lumen-role: public): nothing to refuse there.
      for (const method of Object.keys(ops).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m) && (ops[m] as Record<string, unknown>)['x-lumen-role'] !== 'public')) {
        for (const headers of [{ 'x-api-key': p.apiKey }, { authorization: `Bearer ${p.apiKey}` }] as Record<string, string>[]) {
          const res = await t.fetch(fill(path), { method: method.toUpperCase(), headers, ...(method === 'get' ? {} : { json: {} }) });
          expect(res.status, `${method} ${path}`).toBe(401);
          expect(((await res.json()) as { type: string }).type).toBe('urn:lumen:problem:invalid-admin-token');
          tried++;
        }
      }
    }
    for (const [path, ops] of Object.entries((partnerDocument as { paths: Record<string, Record<string, unknown>> }).paths)) {
      for (const method of Object.keys(ops).filter((m) => ['get', 'post'].includes(m))) {
        for (const headers of [{ 'x-api-key': admin.token }, { authorization: `Bearer ${admin.token}` }] as Record<string, string>[]) {
          const res = await t.fetch(path, { method: method.toUpperCase(), headers, ...(method === 'get' ? {} : { json: intakeBody('X-ADMIN') }) });
          expect(res.status, `${method} ${path}`).toBe(401);
          expect(((await res.json()) as { type: string }).type).toBe('urn:lumen:problem:unauthorized');
          tried++;
        }
      }
    }
    const telemetry = await t.fetch('/api/telemetry/reports', { method: 'POST', apiKey: p.apiKey, json: { reports: [] } });
    expect(telemetry.status).toBe(401);
    tried++;
    expect(await t.rt.db.selectFrom('alert').select('id').where('protocol_number', '=', 'X-ADMIN').execute()).toEqual([]);
    recordReliability(SECTION, { item: 'credentials presented on a surface that is not theirs, refused', figure: `${tried} of ${tried}`, detail: 'partner keys on every admin operation (X-Api-Key and Bearer), admin tokens on every partner operation, a partner key on telemetry' });
  });
});
