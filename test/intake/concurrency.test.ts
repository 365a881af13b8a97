import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePartner, makeTenant } from '../support/factories.js';
import { intakeBody, intakeFootprint, JPEG, lastNumbers, listFiles, postJson, startIntakeApp, type IntakeTestApp } from './support.js';

let t: IntakeTestApp;
beforeAll(async () => {
  t = await startIntakeApp();
});
afterAll(async () => {
  await t?.stop();
});

const N = 50;
const photo = { type: 'photo', contentBase64: JPEG.toString('base64'), filename: 'a.jpg', contentType: 'image/jpeg' };

const counters = (tenantId: string) => lastNumbers(t, tenantId);

/**
 * Requests that lost the race took numbers before they found the winner's alert or key
 * (numbers are taken before the write, without a lock): those stay unused. The one
 * alert and order hold numbers the city's sequences did hand out.
 */
async function expectNumbersTaken(tenantId: string, created: { internalProtocol?: string; alert: { alertNumber: number } }): Promise<void> {
  const c = await counters(tenantId);
  expect(c.alert).toBeGreaterThanOrEqual(created.alert.alertNumber);
  expect(c.alert).toBeLessThanOrEqual(N);
  expect(c.service_order).toBeGreaterThanOrEqual(Number(created.internalProtocol!.split('-')[2]));
  expect(c.service_order).toBeLessThanOrEqual(N);
}

describe('simultaneous identical requests (N1): exactly one alert and one order', () => {
  it(`${N} requests with the same Idempotency-Key`, async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const key = randomUUID();
    const body = intakeBody('RACE-KEY-1', { attachments: [photo] });
    const results = await Promise.all(Array.from({ length: N }, () => postJson(t, p.apiKey, body, { 'idempotency-key': key })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(N - 1);
    const created = results.find((r) => r.status === 201)!;
    // Every caller gets the one result; replays are the stored bytes.
    for (const r of results) expect(r.body.alert.id).toBe(created.body.alert.id);
    expect(await intakeFootprint(t, tenant.id)).toEqual({ alerts: 1, orders: 1, counters: 2, attachments: 1, failures: 0, keys: 1 });
    await expectNumbersTaken(tenant.id, created.body);
    // Blobs written by the requests that lost the race were removed.
    expect(listFiles(t.blobDir, t.blobDir).filter((f) => f.includes(tenant.id))).toEqual([created.body.alert.attachments[0].blobPath]);
  });

  it(`${N} requests with the same protocolNumber and no key`, async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const body = intakeBody('RACE-PROTO-1', { attachments: [photo] });
    const results = await Promise.all(Array.from({ length: N }, () => postJson(t, p.apiKey, body)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(N - 1);
    const ids = new Set(results.map((r) => r.body.id));
    expect(ids.size).toBe(1);
    expect(await intakeFootprint(t, tenant.id)).toEqual({ alerts: 1, orders: 1, counters: 2, attachments: 1, failures: 0, keys: 0 });
    await expectNumbersTaken(tenant.id, results.find((r) => r.status === 201)!.body);
    expect(listFiles(t.blobDir, t.blobDir).filter((f) => f.includes(tenant.id))).toHaveLength(1);
  });

  it(`${N} different requests at once get distinct numbers, none skipped when none fails`, async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const results = await Promise.all(Array.from({ length: N }, (_, i) => postJson(t, p.apiKey, intakeBody(`RACE-MANY-${i}`))));
    expect(results.every((r) => r.status === 201)).toBe(true);
    const year = new Date().getUTCFullYear();
    expect(results.map((r) => r.body.alert.alertNumber).sort((a, b) => a - b)).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    expect(results.map((r) => r.body.internalProtocol).sort()).toEqual(Array.from({ length: N }, (_, i) => `OS-${year}-${String(i + 1).padStart(5, '0')}`));
  });
});

describe('numbers (N2): unique and increasing per tenant, not taken by replays or resends', () => {
  const year = new Date().getUTCFullYear();
  const seq = (internalProtocol: string): number => Number(internalProtocol.split('-')[2]);

  it('stay unique and increase from one wave of simultaneous requests to the next', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const wave = async (name: string) => {
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => postJson(t, p.apiKey, intakeBody(`${name}-${i}`), { 'idempotency-key': randomUUID() })));
      expect(results.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 201));
      return { alerts: results.map((r) => r.body.alert.alertNumber as number), orders: results.map((r) => seq(r.body.internalProtocol)) };
    };
    const first = await wave('WAVE-A');
    const second = await wave('WAVE-B');
    for (const kind of ['alerts', 'orders'] as const) {
      const all = [...first[kind], ...second[kind]];
      expect(new Set(all).size).toBe(all.length);
      // A request that starts after another one answered gets a larger number.
      expect(Math.min(...second[kind])).toBeGreaterThan(Math.max(...first[kind]));
    }
    const stored = await t.rt.db.selectFrom('alert').select('alert_number').where('tenant_id', '=', tenant.id).execute();
    expect(new Set(stored.map((r) => r.alert_number)).size).toBe(40);
  });

  it('a replay, a resend and a reused key take no number', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const key = randomUUID();
    const body = intakeBody('NUM-REPLAY-1');
    const created = await postJson(t, p.apiKey, body, { 'idempotency-key': key });
    expect(created.status).toBe(201);
    const before = await counters(tenant.id);
    expect(before).toEqual({ alert: created.body.alert.alertNumber, service_order: seq(created.body.internalProtocol) });

    const replays = await Promise.all(Array.from({ length: 5 }, () => postJson(t, p.apiKey, body, { 'idempotency-key': key })));
    expect(replays.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    // The stored answer, byte for byte.
    for (const r of replays) expect(r.text).toBe(created.text);
    const resent = await postJson(t, p.apiKey, intakeBody('NUM-REPLAY-1', { requester: { name: 'Outra Pessoa' } }));
    expect(resent.status).toBe(200);
    const reused = await postJson(t, p.apiKey, intakeBody('NUM-REPLAY-2'), { 'idempotency-key': key });
    expect(reused.status).toBe(422);
    expect(await counters(tenant.id)).toEqual(before);

    const next = await postJson(t, p.apiKey, intakeBody('NUM-REPLAY-3'), { 'idempotency-key': randomUUID() });
    expect(next.status).toBe(201);
    expect(next.body.alert.alertNumber).toBe(created.body.alert.alertNumber + 1);
    expect(next.body.internalProtocol).toBe(`OS-${year}-${String(seq(created.body.internalProtocol) + 1).padStart(5, '0')}`);
  });
});
