/**
 * The operators' pole page (GET /api/admin/tenants/{tenantId}/poles/{poleCode}): one
 * pole by its code in Porto Alegre, with its telegestor's changes of state, and its
 * orders and alerts open first; Manaus beside it, whose poles (one with the same code)
 * Porto Alegre's operators never see, and whose operators never see Porto Alegre's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/audit/index.js';
import { ingestReports } from '../../src/services/city-data/index.js';
import { cancelServiceOrder, createOrderFromAlert } from '../../src/services/operations/index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makeCityOrder, makeCityPole, makePartner, makeReason, makeTenant } from '../support/factories.js';
import { makeToken, tokenFetch } from '../operators/support.js';

let t: TestApp;
let portoAlegre: string;
let manaus: string;
let viewer: ReturnType<typeof tokenFetch>;
let manausAdmin: ReturnType<typeof tokenFetch>;
let platform: ReturnType<typeof tokenFetch>;
const ids: Record<string, string> = {};
const HOUR = 3600_000;

beforeAll(async () => {
  t = await startTestApp();
  portoAlegre = (await makeTenant(t.rt, { name: 'Porto Alegre', ibgeCode: '4314902', intakePolicy: 'manual' })).id;
  manaus = (await makeTenant(t.rt, { name: 'Manaus', ibgeCode: '1302603', intakePolicy: 'manual' })).id;
  await makeReason(t.rt, { tenantId: portoAlegre, code: 'LAMP_OUT', namePt: 'Lâmpada apagada', nameEn: 'Lamp out', slaHours: 24 });
  viewer = tokenFetch(t, (await makeToken(t.rt, { service: true, grants: [{ tenantId: portoAlegre, role: 'viewer' }] })).token);
  manausAdmin = tokenFetch(t, (await makeToken(t.rt, { service: true, grants: [{ tenantId: manaus, role: 'city-admin' }] })).token);
  platform = tokenFetch(t, (await makeToken(t.rt, { service: true, platformAdmin: true })).token);

  const pole = await makeCityPole(t.rt, { tenantId: portoAlegre, code: 'POA-004217', address: 'Rua dos Andradas, 1234', neighborhood: 'Centro Histórico', latitude: -30.0302, longitude: -51.2302, device: 'TG-POA-004217' });
  ids.pole = pole.id;
  await makeCityPole(t.rt, { tenantId: portoAlegre, code: 'POA-004218', latitude: -30.0303, longitude: -51.2303 });
  // Manaus has a pole of the same code and one of its own.
  await makeCityPole(t.rt, { tenantId: manaus, code: 'POA-004217', address: 'Avenida Eduardo Ribeiro, 520', neighborhood: 'Centro', latitude: -3.1303, longitude: -60.0233, device: 'TG-MAO-1' });
  await makeCityPole(t.rt, { tenantId: manaus, code: 'MAO-000001', latitude: -3.1304, longitude: -60.0234 });

  // Reports: on, on again (no change), relay off at night, device offline; an older report arriving late changes nothing.
  const now = Date.now();
  const report = (hoursAgo: number, online: boolean, relayOn: boolean | null) => ({ deviceIdentifier: 'TG-POA-004217', online, relayOn, reportedAt: new Date(now - hoursAgo * HOUR).toISOString() });
  for (const r of [report(30, true, true), report(29, true, true), report(20, true, false), report(2, false, null), report(25, true, false)]) await ingestReports(t.rt, portoAlegre, [r]);

  // Orders on the pole: one completed long ago, one cancelled, one open; alerts linked to them.
  const partner = await makePartner(t.rt, { tenantId: portoAlegre, code: 'PORTAL-POA-156' });
  const old = await makeCityOrder(t.rt, { tenantId: portoAlegre, poleId: pole.id, status: 'COMPLETED', closedAt: new Date(now - 100 * HOUR) });
  await t.rt.pool.query('UPDATE service_order SET opened_at = $2 WHERE id = $1', [old.id, new Date(now - 120 * HOUR)]);
  ids.old = old.number;
  const a1 = await makeAlert(t.rt, { tenantId: portoAlegre, externalSystemId: partner.id, reasonCode: 'LAMP_OUT' });
  const open = await createOrderFromAlert(t.rt, cliActor(), a1.id, { poleId: 'POA-004217' });
  ids.open = open.number;
  ids.a1 = a1.id;
  const a2 = await makeAlert(t.rt, { tenantId: portoAlegre, externalSystemId: partner.id, reasonCode: 'LAMP_OUT' });
  const cancelled = await createOrderFromAlert(t.rt, cliActor(), a2.id, { poleId: pole.id });
  await cancelServiceOrder(t.rt, cliActor(), cancelled.id, 'Duplicada.');
  ids.cancelled = cancelled.number;
  ids.a2 = a2.id;
  // The telemetry alert raised for the pole's lamp, Pending (as detection leaves it).
  const a3 = await makeAlert(t.rt, { tenantId: portoAlegre, externalSystemId: partner.id, reasonCode: 'LAMP_OUT' });
  await t.rt.pool.query('UPDATE alert SET requested_at = $2 WHERE id = $1', [a3.id, new Date(now - 5 * HOUR)]);
  await t.rt.db.insertInto('telemetry_lamp_out').values({ pole_id: pole.id, tenant_id: portoAlegre, alert_id: a3.id, out_since: new Date(now - 20 * HOUR) }).execute();
  ids.a3 = a3.id;
  // An order and an alert elsewhere in the city, not on the pole.
  await makeAlert(t.rt, { tenantId: portoAlegre, externalSystemId: partner.id, status: 'Linked' });
});
afterAll(async () => {
  await t?.stop();
});

describe('a pole by its code', () => {
  it('answers the pole, its telegestor and its changes of state, newest first', async () => {
    const res = await viewer(`/tenants/${portoAlegre}/poles/POA-004217`);
    expect(res.status).toBe(200);
    const p = (await res.json()) as Record<string, any>;
    expect(p).toMatchObject({ id: ids.pole, tenantId: portoAlegre, code: 'POA-004217', address: 'Rua dos Andradas, 1234', neighborhood: 'Centro Histórico', latitude: -30.0302, longitude: -51.2302, active: true });
    expect(p.telegestor).toMatchObject({ identifier: 'TG-POA-004217', online: false, relayOn: null });
    expect(p.telegestor.offlineSince).toBe(p.telegestor.lastCommunicationAt);
    // Four reports changed the state; the repeat and the late older report did not.
    expect(p.states.map((s: any) => [s.online, s.relayOn])).toEqual([
      [false, null],
      [true, false],
      [true, true],
    ]);
    expect(p.states[0].reportedAt).toBe(p.telegestor.lastCommunicationAt);
    const limited = (await (await viewer(`/tenants/${portoAlegre}/poles/POA-004217?states=1`)).json()) as Record<string, any>;
    expect(limited.states).toHaveLength(1);
  });

  it('lists its orders and alerts open first, with reason names in the asked language', async () => {
    const p = (await (await viewer(`/tenants/${portoAlegre}/poles/POA-004217`, { headers: { 'accept-language': 'en' } })).json()) as Record<string, any>;
    expect(p.serviceOrders.map((o: any) => [o.number, o.status])).toEqual([
      [ids.open, 'OPEN'],
      [ids.cancelled, 'CANCELLED'],
      [ids.old, 'COMPLETED'],
    ]);
    // The cancelled order's alert went back to Pending, off any order: it is no longer on the pole.
    expect(p.alerts.map((a: any) => a.id)).toEqual([ids.a1, ids.a3]);
    expect(p.alerts[1]).toMatchObject({ status: 'Pending', serviceOrderId: null });
    expect(p.alerts[0]).toMatchObject({ status: 'Linked', reasonCode: 'LAMP_OUT', reasonName: 'Lamp out' });
    const pt = (await (await viewer(`/tenants/${portoAlegre}/poles/POA-004217`, { headers: { 'accept-language': 'pt-BR' } })).json()) as Record<string, any>;
    expect(pt.alerts[0].reasonName).toBe('Lâmpada apagada');
  });

  it('answers a pole without a telegestor with nothing on it', async () => {
    const p = (await (await viewer(`/tenants/${portoAlegre}/poles/POA-004218`)).json()) as Record<string, any>;
    expect(p).toMatchObject({ code: 'POA-004218', telegestor: null, states: [], serviceOrders: [], alerts: [] });
  });

  it('gives the order its pole code, and finds orders and alerts by the pole code', async () => {
    const orders = (await (await viewer(`/service-orders?tenantId=${portoAlegre}&text=poa-004217`)).json()) as Record<string, any>;
    expect(orders.items.map((o: any) => o.number).sort()).toEqual([ids.old, ids.open, ids.cancelled].sort());
    expect(orders.items.every((o: any) => o.poleCode === 'POA-004217')).toBe(true);
    const alerts = (await (await viewer(`/alerts?tenantId=${portoAlegre}&text=POA-004217`)).json()) as Record<string, any>;
    expect(alerts.items.map((a: any) => a.id)).toEqual([ids.a1]);
  });
});

describe('tenant isolation', () => {
  it("is 404 for a code the city does not have, another city's pole, and a city the caller cannot see, all alike", async () => {
    const missing = await viewer(`/tenants/${portoAlegre}/poles/NOPE-1`);
    const foreign = await viewer(`/tenants/${portoAlegre}/poles/MAO-000001`);
    const unseen = await viewer(`/tenants/${manaus}/poles/MAO-000001`);
    const fromManaus = await manausAdmin(`/tenants/${portoAlegre}/poles/POA-004217`);
    for (const res of [missing, foreign, unseen, fromManaus]) {
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    const titles = await Promise.all([missing, foreign].map(async (r) => ((await r.json()) as { type: string }).type));
    expect(new Set(titles).size).toBe(1);
  });

  it("answers each city its own pole of a shared code", async () => {
    const mine = (await (await manausAdmin(`/tenants/${manaus}/poles/POA-004217`)).json()) as Record<string, any>;
    expect(mine).toMatchObject({ tenantId: manaus, address: 'Avenida Eduardo Ribeiro, 520', states: [], serviceOrders: [], alerts: [] });
    expect(mine.telegestor.identifier).toBe('TG-MAO-1');
    const both = await Promise.all([platform(`/tenants/${manaus}/poles/POA-004217`), platform(`/tenants/${portoAlegre}/poles/POA-004217`)]);
    const [m, p] = (await Promise.all(both.map((r) => r.json()))) as Record<string, any>[];
    expect(m!.id).not.toBe(p!.id);
  });

  it('answers the same through `lumen pole show`, and not-found for another city\'s code', async () => {
    const out = await t.cli('pole', 'show', '--tenant', portoAlegre, 'POA-004217', '--states', '2', '--json');
    expect(out.stderr).toBe('');
    const p = JSON.parse(out.stdout) as Record<string, any>;
    expect(p).toMatchObject({ id: ids.pole, code: 'POA-004217', telegestor: { identifier: 'TG-POA-004217' } });
    expect(p.states).toHaveLength(2);
    const foreign = await t.cli('pole', 'show', '--tenant', portoAlegre, 'MAO-000001');
    expect(foreign.code).not.toBe(0);
    expect(foreign.stdout).toBe('');
  });

  it('refuses a states count that is not a whole number', async () => {
    expect((await viewer(`/tenants/${portoAlegre}/poles/POA-004217?states=0`)).status).toBe(400);
  });
});
