/**
 * Bulk "assign team" (POST /api/admin/alerts/bulk, action assign-team): distinct lamps
 * sent to one crew. Each Pending alert becomes its own order, ASSIGNED to the team, with
 * the single "create order" action's history, audit entry and event; all or nothing.
 * Two cities (Manaus, Curitiba): a team or alert of the other city is never used.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makePartner, makeReason, makeTeam, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, problemOf } from '../operations/support.js';
import { makeOperator, makeToken } from '../operators/support.js';

let t: TestApp;
let api: ReturnType<typeof adminFetch>;
const city: Record<'manaus' | 'curitiba', { tenantId: string; partnerId: string }> = {} as never;
const AT = { manaus: { latitude: -3.119, longitude: -60.0217 }, curitiba: { latitude: -25.4284, longitude: -49.2733 } };

beforeAll(async () => {
  t = await startTestApp();
  api = adminFetch(t, await adminToken(t, 'assign-team-desk'));
  for (const [key, name] of [
    ['manaus', 'Manaus'],
    ['curitiba', 'Curitiba'],
  ] as const) {
    const tenantId = (await makeTenant(t.rt, { name: `${name} ${randomUUID().slice(0, 6)}`, intakePolicy: 'manual' })).id;
    city[key] = { tenantId, partnerId: (await makePartner(t.rt, { tenantId })).id };
  }
});
afterAll(async () => {
  await t?.stop();
});

async function pendingIn(key: keyof typeof city, n: number, o: Partial<Parameters<typeof makeAlert>[1]> = {}) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await makeAlert(t.rt, { tenantId: city[key].tenantId, externalSystemId: city[key].partnerId, ...AT[key], street: `Avenida Djalma Batista ${i + 1}`, ...o }));
  return out;
}

const bulk = (body: Record<string, unknown>, call = api) => call('/alerts/bulk', { json: body });
const ordersOf = (tenantId: string) => t.rt.db.selectFrom('service_order').select(['id', 'number', 'status', 'team_id', 'reason_code', 'address']).where('tenant_id', '=', tenantId).execute();
const alertsOf = (ids: string[]) => t.rt.db.selectFrom('alert').select(['id', 'status', 'service_order_id', 'reason_code']).where('id', 'in', ids).execute();

describe('assign-team: each alert its own order, assigned to the team', () => {
  it('in Manaus: three alerts give three ASSIGNED orders of the team, each alert Linked to its own, one event and one audit entry each', async () => {
    const alerts = await pendingIn('manaus', 3);
    const ids = alerts.map((a) => a.id);
    const team = await makeTeam(t.rt, { tenantId: city.manaus.tenantId, name: 'Equipe Norte Cidade Nova e Adrianópolis 01' });
    await makeReason(t.rt, { tenantId: city.manaus.tenantId, code: 'LAMP_FLICKER', priority: 'Low', slaHours: 72 });
    const before = (await ordersOf(city.manaus.tenantId)).length;
    // By the team's name, as the console's select may send it.
    const res = await bulk({ tenantId: city.manaus.tenantId, alertIds: ids, action: 'assign-team', teamId: team.name, reasonCode: 'LAMP_FLICKER' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, any>;
    expect(body).toMatchObject({ action: 'assign-team', handled: 3 });
    expect(body.serviceOrder).toBeUndefined();
    const orders = await ordersOf(city.manaus.tenantId);
    expect(orders).toHaveLength(before + 3);
    const rows = new Map((await alertsOf(ids)).map((r) => [r.id, r]));
    const orderIds = new Set<string>();
    for (const [i, item] of body.results.entries()) {
      expect(item).toMatchObject({ alertId: ids[i], outcome: 'done', state: 'Linked', alertNumber: alerts[i]!.alertNumber });
      const order = orders.find((o) => o.id === item.serviceOrder.id)!;
      expect(order).toMatchObject({ number: item.serviceOrder.number, status: 'ASSIGNED', team_id: team.id, reason_code: 'LAMP_FLICKER', address: `Avenida Djalma Batista ${i + 1}, 1500` });
      expect(rows.get(ids[i]!)).toMatchObject({ status: 'Linked', service_order_id: order.id, reason_code: 'LAMP_FLICKER' });
      orderIds.add(order.id);
    }
    expect(orderIds.size).toBe(3);
    const events = await t.rt.db.selectFrom('event').select(['alert_id', 'event_type']).where('alert_id', 'in', ids).execute();
    for (const id of ids) expect(events.filter((e) => e.alert_id === id).map((e) => e.event_type)).toEqual(['ServiceOrder.Created']);
    const audit = await t.rt.db.selectFrom('audit_log').select(['entity_id', 'action']).where('entity_id', 'in', ids).execute();
    for (const id of ids) expect(audit.filter((a) => a.entity_id === id).map((a) => a.action)).toEqual(['alert.create-order']);
    const history = await t.rt.db.selectFrom('service_order_status_history').select(['service_order_id', 'to_status']).where('service_order_id', 'in', [...orderIds]).execute();
    for (const id of orderIds) expect(history.filter((h) => h.service_order_id === id).map((h) => h.to_status).sort()).toEqual(['ASSIGNED', 'OPEN']);
  });

  it('without a team is 422 pointing at /teamId; nothing changes and no number is taken', async () => {
    const alerts = await pendingIn('manaus', 2);
    const before = (await ordersOf(city.manaus.tenantId)).length;
    const res = await bulk({ tenantId: city.manaus.tenantId, alertIds: alerts.map((a) => a.id), action: 'assign-team' });
    expect(res.status).toBe(422);
    const p = await problemOf(res);
    expect(p.type).toBe('urn:lumen:problem:validation-failed');
    expect(p.errors?.map((e) => e.pointer)).toEqual(['/teamId']);
    expect((await alertsOf(alerts.map((a) => a.id))).every((r) => r.status === 'Pending')).toBe(true);
    expect(await ordersOf(city.manaus.tenantId)).toHaveLength(before);
  });

  it("Curitiba's team named in a Manaus batch is 422 (no such team in the city), by id or by name", async () => {
    const alerts = await pendingIn('manaus', 1);
    const foreign = await makeTeam(t.rt, { tenantId: city.curitiba.tenantId, name: 'Equipe Batel Curitiba' });
    for (const teamId of [foreign.id, foreign.name]) {
      const res = await bulk({ tenantId: city.manaus.tenantId, alertIds: alerts.map((a) => a.id), action: 'assign-team', teamId });
      expect(res.status).toBe(422);
      expect((await problemOf(res)).errors?.[0]?.pointer).toBe('/teamId');
    }
    expect((await alertsOf(alerts.map((a) => a.id)))[0]!.status).toBe('Pending');
  });

  it('one alert already Linked: 409 bulk-refused, no order created for the others, the counter untouched', async () => {
    const team = await makeTeam(t.rt, { tenantId: city.curitiba.tenantId, name: 'Equipe Santa Felicidade' });
    const pending = await pendingIn('curitiba', 2);
    const [linked] = await pendingIn('curitiba', 1, { status: 'Linked' });
    const before = await ordersOf(city.curitiba.tenantId);
    const counter = async () => (await sql<{ n: number }>`SELECT lumen_last_number(${city.curitiba.tenantId}::uuid, 'service_order', ${new Date().getUTCFullYear()}::integer) AS n`.execute(t.rt.db)).rows[0]!.n;
    const counterBefore = await counter();
    const ids = [pending[0]!.id, linked!.id, pending[1]!.id];
    const res = await bulk({ tenantId: city.curitiba.tenantId, alertIds: ids, action: 'assign-team', teamId: team.id });
    expect(res.status).toBe(409);
    const p = (await problemOf(res)) as Record<string, any>;
    expect(p.type).toBe('urn:lumen:problem:bulk-refused');
    expect(p.results.map((r: any) => r.outcome)).toEqual(['done', 'refused', 'done']);
    expect(await ordersOf(city.curitiba.tenantId)).toHaveLength(before.length);
    expect(await counter()).toEqual(counterBefore);
    expect((await alertsOf([pending[0]!.id, pending[1]!.id])).every((r) => r.status === 'Pending' && r.service_order_id === null)).toBe(true);
  });

  it('an alert of Curitiba in a Manaus batch, by an operator who sees both, is refused as unknown; a viewer is 403', async () => {
    const team = await makeTeam(t.rt, { tenantId: city.manaus.tenantId, name: 'Equipe Ponta Negra' });
    const [mine] = await pendingIn('manaus', 1);
    const [theirs] = await pendingIn('curitiba', 1);
    const both = await makeOperator(t.rt, { grants: [{ tenantId: city.manaus.tenantId, role: 'triager' }, { tenantId: city.curitiba.tenantId, role: 'viewer' }] });
    const call = adminFetch(t, (await makeToken(t.rt, { operator: both.email })).token);
    const res = await bulk({ tenantId: city.manaus.tenantId, alertIds: [mine!.id, theirs!.id], action: 'assign-team', teamId: team.id }, call);
    expect(res.status).toBe(422);
    const p = (await problemOf(res)) as Record<string, any>;
    expect(p.type).toBe('urn:lumen:problem:bulk-unknown-alerts');
    expect(p.results[1]).toEqual({ alertId: theirs!.id, outcome: 'refused', reason: 'not-found' });
    const viewer = await bulk({ tenantId: city.curitiba.tenantId, alertIds: [theirs!.id], action: 'assign-team', teamId: team.id }, call);
    expect(viewer.status).toBe(403);
    expect((await alertsOf([mine!.id, theirs!.id])).every((r) => r.status === 'Pending')).toBe(true);
  });
});
