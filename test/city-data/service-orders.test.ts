import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeCityOrder, makeCityPole, makeCityTeam, makePartner, makeTenant } from '../support/factories.js';
import { getPage, maxUpdatedAt, settle, walkCursor, walkPages, type OrderItem, type PoleItem } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

const PATH = '/api/external/service-orders';
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function city() {
  const tenant = await makeTenant(t.rt);
  const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] });
  return { tenantId: tenant.id, apiKey: partner.apiKey };
}

describe('GET /api/external/service-orders (2.3, 2.4, 4.3)', () => {
  it('answers every field: team and pole null or set, open and closed orders, not geolocated', async () => {
    const c = await city();
    const team = await makeCityTeam(t.rt, { tenantId: c.tenantId, name: 'Equipe Centro 03' });
    const pole = await makeCityPole(t.rt, { tenantId: c.tenantId, code: 'OS-POLE' });
    const open = await makeCityOrder(t.rt, { tenantId: c.tenantId, address: 'Travessa Sem Nome, S/N', neighborhood: null, latitude: null, longitude: null });
    const assigned = await makeCityOrder(t.rt, { tenantId: c.tenantId, status: 'ASSIGNED', priority: 'High', teamId: team.id, poleId: pole.id });
    const closedAt = new Date('2026-03-14T11:48:30.007Z');
    const done = await makeCityOrder(t.rt, { tenantId: c.tenantId, status: 'COMPLETED', priority: 'Low', teamId: team.id, closedAt });
    await settle(t);

    const page = await getPage<OrderItem>(t, PATH, c.apiKey);
    expect(page).toMatchObject({ page: 1, pageSize: 500, total: 3, nextCursor: null });
    const byId = new Map(page.items.map((o) => [o.id, o]));
    expect(byId.get(open.id)).toEqual({
      id: open.id,
      number: open.number,
      status: 'OPEN',
      priority: 'Medium',
      type: 'EXTERNAL_OTHER',
      address: 'Travessa Sem Nome, S/N',
      neighborhood: null,
      latitude: null,
      longitude: null,
      poleId: null,
      team: null,
      openedAt: expect.stringMatching(ISO_MS),
      updatedAt: expect.stringMatching(ISO_MS),
      closedAt: null,
    });
    expect(open.number).toMatch(/^OS-\d{4}-\d{5,}$/);
    expect(byId.get(assigned.id)).toMatchObject({ status: 'ASSIGNED', priority: 'High', poleId: pole.id, team: { id: team.id, name: 'Equipe Centro 03' }, latitude: -23.5573, longitude: -46.6602, neighborhood: 'Consolação' });
    expect(byId.get(done.id)).toMatchObject({ status: 'COMPLETED', priority: 'Low', closedAt: '2026-03-14T11:48:30.007Z' });
    expect(page.items.map((o) => o.id)).toEqual([open.id, assigned.id, done.id]);
  });

  it('limits reads to the key tenant and keeps total exact', async () => {
    const a = await city();
    const b = await city();
    for (let i = 0; i < 3; i++) await makeCityOrder(t.rt, { tenantId: a.tenantId });
    await makeCityOrder(t.rt, { tenantId: b.tenantId });
    await settle(t);
    const pa = await getPage<OrderItem>(t, PATH, a.apiKey, { pageSize: 2 });
    const pb = await getPage<OrderItem>(t, PATH, b.apiKey);
    expect(pa.total).toBe(3);
    expect(pb.total).toBe(1);
    const ids = new Set((await walkCursor<OrderItem>(t, PATH, a.apiKey, null, 2)).map((o) => o.id));
    expect(ids.size).toBe(3);
    expect(ids.has(pb.items[0]!.id)).toBe(false);
    // Numbers are per tenant: each city starts its own sequence.
    expect(pb.items[0]!.number.endsWith('-00001')).toBe(true);
    const since = await getPage<OrderItem>(t, PATH, a.apiKey, { updatedSince: pa.items[1]!.updatedAt, pageSize: 2 });
    expect(since.total).toBe(2);
    expect((await walkPages<OrderItem>(t, PATH, a.apiKey, pa.items[1]!.updatedAt, 1)).length).toBe(2);
  });

  it('brings an order back when it changes or when its team is renamed', async () => {
    const c = await city();
    const team = await makeCityTeam(t.rt, { tenantId: c.tenantId, name: 'Equipe Norte' });
    const order = await makeCityOrder(t.rt, { tenantId: c.tenantId, status: 'ASSIGNED', teamId: team.id });
    await makeCityOrder(t.rt, { tenantId: c.tenantId });
    await settle(t);
    const round1 = await walkPages<OrderItem>(t, PATH, c.apiKey, null, 10);
    let cursor = maxUpdatedAt(round1, null)!;

    await t.rt.db.updateTable('team').set({ name: 'Equipe Norte 2' }).where('id', '=', team.id).execute();
    await settle(t);
    const round2 = await walkPages<OrderItem>(t, PATH, c.apiKey, cursor, 10);
    const renamed = round2.find((o) => o.id === order.id)!;
    expect(renamed.team).toEqual({ id: team.id, name: 'Equipe Norte 2' });
    expect(renamed.updatedAt > cursor).toBe(true);
    cursor = maxUpdatedAt(round2, cursor)!;

    await t.rt.db.updateTable('service_order').set({ status: 'IN_PROGRESS' }).where('id', '=', order.id).execute();
    await settle(t);
    const round3 = await walkPages<OrderItem>(t, PATH, c.apiKey, cursor, 10);
    expect(round3.find((o) => o.id === order.id)!.status).toBe('IN_PROGRESS');
  });
});

describe('lumen demo seed', () => {
  it('creates a demo city a partner can read at once', async () => {
    const out = await t.cli('demo', 'seed', '--code', 'demo-city-data', '--json');
    expect(out.code).toBe(0);
    const demo = JSON.parse(out.stdout) as { partner: { apiKey: string }; city: { poles: number; telegestors: number; reporting: number; teams: unknown[]; serviceOrders: { status: string }[] } };
    expect(demo.city.poles).toBe(300);
    expect(demo.city.telegestors).toBeGreaterThan(200);
    expect(demo.city.reporting).toBeGreaterThan(150);
    expect(demo.city.teams).toHaveLength(2);
    expect(demo.city.serviceOrders.map((o) => o.status)).toEqual(['OPEN', 'ASSIGNED', 'IN_PROGRESS', 'COMPLETED']);
    await settle(t);
    const poles = await walkCursor<PoleItem>(t, '/api/external/poles', demo.partner.apiKey, null, 1000);
    expect(poles).toHaveLength(300);
    expect(poles.some((p) => p.device?.online === true && p.device.lastCommunicationAt !== null)).toBe(true);
    expect(poles.some((p) => p.device !== null && p.device.lastCommunicationAt === null)).toBe(true);
    expect(poles.some((p) => p.device === null)).toBe(true);
    for (const p of poles) {
      expect(Math.abs(p.latitude + 23.5505)).toBeLessThan(0.03);
      expect(Math.abs(p.longitude + 46.6333)).toBeLessThan(0.03);
    }
    const orders = await getPage<OrderItem>(t, PATH, demo.partner.apiKey);
    expect(orders.total).toBe(4);
    expect(orders.items.filter((o) => o.team !== null)).toHaveLength(3);
    expect(orders.items.every((o) => o.poleId !== null)).toBe(true);
  });
});
