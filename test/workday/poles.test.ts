import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makeCityOrder, makeCityPole, makePartner, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, auditOf, cliJson, orderRow, problemOf } from '../operations/support.js';
import { intakeBody, postJson } from '../intake/support.js';
import { duplicateSuggestions, mapPoles, resolveOrder, setOrderPole } from '../../src/services/operations/index.js';
import { PLATFORM_ACCESS } from '../../src/services/operators/index.js';
import { AppError } from '../../src/lib/errors.js';
import { cityAccess, outsiderCaller } from './support.js';

let t: TestApp;
let api: ReturnType<typeof adminFetch>;
let tenantId: string;
let partner: { id: string; code: string; apiKey: string };
let near: { id: string; code: string };
let far: { id: string; code: string };

// 1e-4 degrees of latitude is about 11 m.
const LAT = -23.5573;
const LON = -46.6602;

beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_POLE_MATCH_METERS: '30' } });
  api = adminFetch(t, await adminToken(t, 'map-desk'));
  tenantId = (await makeTenant(t.rt, { intakePolicy: 'manual' })).id;
  partner = (await makePartner(t.rt, { tenantId })) as never;
  near = await makeCityPole(t.rt, { tenantId, latitude: LAT + 0.0001, longitude: LON, device: 'TG-NEAR' });
  far = await makeCityPole(t.rt, { tenantId, latitude: LAT + 0.001, longitude: LON });
  await t.rt.db.updateTable('telegestor').set({ online: false }).where('identifier', '=', 'TG-NEAR').execute();
});
afterAll(async () => {
  await t?.stop();
});

describe('poles for the map', () => {
  it('lists poles near a point, nearest first, with telegestor state, and inside a box with a limit', async () => {
    const res = await api(`/tenants/${tenantId}/poles?near=${LAT},${LON}&radius=200`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { items: { code: string; distanceMeters: number; telegestorState: string; telegestor: unknown }[]; truncated: boolean };
    expect(body.items.map((p) => p.code)).toEqual([near.code, far.code]);
    expect(body.items[0]!.distanceMeters).toBeGreaterThan(10);
    expect(body.items[0]!.distanceMeters).toBeLessThan(12);
    expect(body.items[0]).toMatchObject({ telegestorState: 'off', telegestor: { identifier: 'TG-NEAR', online: false } });
    expect(body.items[1]).toMatchObject({ telegestorState: 'unknown', telegestor: null });
    const only = (await (await api(`/tenants/${tenantId}/poles?near=${LAT},${LON}&radius=50`)).json()) as { items: unknown[] };
    expect(only.items).toHaveLength(1);

    const box = (await (await api(`/tenants/${tenantId}/poles?bbox=${LAT - 0.01},${LON - 0.01},${LAT + 0.01},${LON + 0.01}&limit=1`)).json()) as { items: unknown[]; truncated: boolean };
    expect(box).toMatchObject({ truncated: true });
    expect(box.items).toHaveLength(1);
    const bad = await api(`/tenants/${tenantId}/poles?near=${LAT},${LON}&bbox=1,2,3,4`);
    expect(bad.status).toBe(400);
    expect((await problemOf(bad)).errors![0]!.pointer).toBe('/query/near');
    expect((await api(`/tenants/${tenantId}/poles?bbox=10,0,0,10`)).status).toBe(400);

    const cli = cliJson(await t.cli('pole', 'near', '--tenant', tenantId, '--at', `${LAT},${LON}`, '--radius', '50', '--json'));
    expect(cli.items.map((p: { code: string }) => p.code)).toEqual([near.code]);
    const outsider = await mapPoles(t.rt, cityAccess((await makeTenant(t.rt)).id), { tenantId, near: `${LAT},${LON}` }).then(() => null, (e: unknown) => e);
    expect((outsider as AppError).code).toBe('not-found');
  });
});

describe('orders carry a pole', () => {
  it('create-order takes the nearest pole within the distance, or the operator pick by code; set-pole changes it (audited)', async () => {
    const alert = await makeAlert(t.rt, { tenantId, externalSystemId: partner.id, latitude: LAT, longitude: LON });
    const order = (await (await api(`/alerts/${alert.alertNumber}/create-order`, { json: {} })).json()) as { id: string; number: string; poleId: string | null };
    expect(order.poleId).toBe(near.id);
    const picked = await makeAlert(t.rt, { tenantId, externalSystemId: partner.id, latitude: LAT, longitude: LON });
    const pickedOrder = (await (await api(`/alerts/${picked.alertNumber}/create-order`, { json: { poleId: far.code } })).json()) as { poleId: string };
    expect(pickedOrder.poleId).toBe(far.id);
    const nowhere = await makeAlert(t.rt, { tenantId, externalSystemId: partner.id, latitude: LAT + 0.01, longitude: LON });
    expect(((await (await api(`/alerts/${nowhere.alertNumber}/create-order`, { json: {} })).json()) as { poleId: string | null }).poleId).toBeNull();
    const badPole = await api(`/alerts/${(await makeAlert(t.rt, { tenantId, externalSystemId: partner.id })).alertNumber}/create-order`, { json: { poleId: 'NO-SUCH-POLE' } });
    expect(badPole.status).toBe(422);

    const moved = await api(`/service-orders/${order.number}/set-pole`, { json: { poleId: far.code } });
    expect(moved.status).toBe(200);
    expect(((await moved.json()) as { poleId: string }).poleId).toBe(far.id);
    expect((await auditOf(t, order.id)).at(-1)).toMatchObject({ action: 'service-order.set-pole', before: { poleId: near.id }, after: { poleId: far.id } });
    const cleared = cliJson(await t.cli('order', 'set-pole', order.number, '--clear', '--json'));
    expect(cleared.poleId).toBeNull();

    const ref = await resolveOrder(t.rt.db, PLATFORM_ACCESS, order.number);
    const before = JSON.stringify(await orderRow(t, order.id));
    const outsider = await setOrderPole(t.rt, outsiderCaller(cityAccess((await makeTenant(t.rt)).id)), ref, near.code).then(() => null, (e: unknown) => e);
    expect((outsider as AppError).code).toBe('not-found');
    const viewer = await setOrderPole(t.rt, outsiderCaller(cityAccess(tenantId, 'viewer')), ref, near.code).then(() => null, (e: unknown) => e);
    expect((viewer as AppError).code).toBe('forbidden');
    expect(JSON.stringify(await orderRow(t, order.id))).toBe(before);
  });

  it('an order made by intake in automatic mode sits on the nearest pole of the request', async () => {
    const auto = (await makeTenant(t.rt, { intakePolicy: 'automatic' })).id;
    const p = (await makePartner(t.rt, { tenantId: auto })) as unknown as { apiKey: string };
    const pole = await makeCityPole(t.rt, { tenantId: auto, latitude: -23.5573, longitude: -46.6602 });
    const res = await postJson(t, p.apiKey, intakeBody('POLE-AUTO-1'));
    expect(res.status).toBe(201);
    const order = await t.rt.db.selectFrom('service_order').select('pole_id').where('number', '=', res.body.internalProtocol).where('tenant_id', '=', auto).executeTakeFirstOrThrow();
    expect(order.pole_id).toBe(pole.id);
  });
});

describe('duplicate suggestions', () => {
  it('suggests open orders on the same pole or within 50 m, not closed or far ones, and links by the suggested number', async () => {
    const city = (await makeTenant(t.rt, { intakePolicy: 'manual' })).id;
    const p = await makePartner(t.rt, { tenantId: city });
    const pole = await makeCityPole(t.rt, { tenantId: city, latitude: LAT, longitude: LON });
    const onPole = await makeCityOrder(t.rt, { tenantId: city, poleId: pole.id, latitude: null, longitude: null });
    const close = await makeCityOrder(t.rt, { tenantId: city, latitude: LAT + 0.0003, longitude: LON });
    await makeCityOrder(t.rt, { tenantId: city, latitude: LAT + 0.001, longitude: LON });
    await makeCityOrder(t.rt, { tenantId: city, status: 'COMPLETED', latitude: LAT, longitude: LON, closedAt: new Date() });
    const alert = await makeAlert(t.rt, { tenantId: city, externalSystemId: p.id, latitude: LAT, longitude: LON });

    const res = await api(`/alerts/${alert.id}/duplicates`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { poleId: string; items: { serviceOrder: { id: string; number: string }; samePole: boolean; distanceMeters: number | null }[] };
    expect(body.poleId).toBe(pole.id);
    expect(body.items.map((i) => [i.serviceOrder.id, i.samePole])).toEqual([
      [onPole.id, true],
      [close.id, false],
    ]);
    expect(body.items[1]!.distanceMeters).toBeGreaterThan(30);
    expect(body.items[1]!.distanceMeters).toBeLessThan(40);

    const linked = await api(`/alerts/${alert.id}/link`, { json: { serviceOrderId: body.items[0]!.serviceOrder.number } });
    expect(linked.status).toBe(200);
    expect(cliJson(await t.cli('alert', 'duplicates', alert.id, '--json')).items).toHaveLength(1);
    const outsider = await duplicateSuggestions(t.rt, cityAccess(tenantId), { id: alert.id, tenantId: city }).then(() => null, (e: unknown) => e);
    expect((outsider as AppError).code).toBe('not-found');
  });
});
