import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePartner, makeTenant } from '../support/factories.js';
import { intakeBody, intakeFootprint, JPEG, listFiles, postJson, startIntakeApp, type IntakeTestApp } from './support.js';

let t: IntakeTestApp;
beforeAll(async () => {
  t = await startIntakeApp();
});
afterAll(async () => {
  await t?.stop();
});

const N = 50;
const photo = { type: 'photo', contentBase64: JPEG.toString('base64'), filename: 'a.jpg', contentType: 'image/jpeg' };

async function counters(tenantId: string): Promise<Record<string, number>> {
  const rows = await t.rt.db.selectFrom('tenant_counter').select(['name', 'value']).where('tenant_id', '=', tenantId).execute();
  return Object.fromEntries(rows.map((r) => [r.name, r.value]));
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
    expect(await counters(tenant.id)).toEqual({ alert: 1, service_order: 1 });
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
    expect(await counters(tenant.id)).toEqual({ alert: 1, service_order: 1 });
    expect(listFiles(t.blobDir, t.blobDir).filter((f) => f.includes(tenant.id))).toHaveLength(1);
  });

  it(`${N} different requests at once get distinct, gap-free numbers`, async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const results = await Promise.all(Array.from({ length: N }, (_, i) => postJson(t, p.apiKey, intakeBody(`RACE-MANY-${i}`))));
    expect(results.every((r) => r.status === 201)).toBe(true);
    const year = new Date().getUTCFullYear();
    expect(results.map((r) => r.body.alert.alertNumber).sort((a, b) => a - b)).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    expect(results.map((r) => r.body.internalProtocol).sort()).toEqual(Array.from({ length: N }, (_, i) => `OS-${year}-${String(i + 1).padStart(5, '0')}`));
  });
});
