/**
 * Bulk triage (POST /api/admin/alerts/bulk): one action on many Pending alerts, all or
 * nothing, with the single actions' history, audit entry and event per alert. Three
 * cities (São Paulo, Recife, Porto Alegre); an operator who sees two of them still cannot
 * mix their alerts in one batch.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makePartner, makeReason, makeTeam, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, problemOf } from '../operations/support.js';
import { makeOperator, makeToken } from '../operators/support.js';

let t: TestApp;
let api: ReturnType<typeof adminFetch>;
const city: Record<'sp' | 'recife' | 'poa', { tenantId: string; partnerId: string }> = {} as never;

const RECIFE = { latitude: -8.0631, longitude: -34.8711 };
const POA = { latitude: -30.0277, longitude: -51.2287 };

beforeAll(async () => {
  t = await startTestApp();
  api = adminFetch(t, await adminToken(t, 'bulk-desk'));
  for (const [key, name] of [
    ['sp', 'São Paulo'],
    ['recife', 'Recife'],
    ['poa', 'Porto Alegre'],
  ] as const) {
    const tenantId = (await makeTenant(t.rt, { name: `${name} ${randomUUID().slice(0, 6)}`, intakePolicy: 'manual' })).id;
    city[key] = { tenantId, partnerId: (await makePartner(t.rt, { tenantId })).id };
  }
});
afterAll(async () => {
  await t?.stop();
});

async function pendingIn(key: keyof typeof city, n: number, o: Partial<Parameters<typeof makeAlert>[1]> = {}) {
  const at = key === 'recife' ? RECIFE : key === 'poa' ? POA : {};
  const out = [];
  for (let i = 0; i < n; i++) out.push(await makeAlert(t.rt, { tenantId: city[key].tenantId, externalSystemId: city[key].partnerId, ...at, street: `Rua ${i + 1}`, ...o }));
  return out;
}

const bulk = (body: Record<string, unknown>, call = api) => call('/alerts/bulk', { json: body });

async function statesOf(ids: string[]) {
  const rows = await t.rt.db.selectFrom('alert').select(['id', 'status', 'reason_code', 'service_order_id', 'cancel_reason', 'updated_at']).where('id', 'in', ids).orderBy('id').execute();
  return rows;
}

async function countsOf(ids: string[]) {
  const events = await t.rt.db.selectFrom('event').select(['alert_id', 'event_type']).where('alert_id', 'in', ids).execute();
  const audit = await t.rt.db.selectFrom('audit_log').select(['entity_id', 'action']).where('entity_id', 'in', ids).execute();
  const history = await t.rt.db.selectFrom('alert_status_history').select(['alert_id', 'to_status']).where('alert_id', 'in', ids).where('from_status', 'is not', null).execute();
  return { events, audit, history };
}

async function ordersOf(tenantId: string) {
  return t.rt.db.selectFrom('service_order').select(['id', 'number', 'status', 'team_id', 'reason_code']).where('tenant_id', '=', tenantId).execute();
}

describe('create-order: one order for every alert', () => {
  it('in Recife: one ASSIGNED order, every alert Linked to it, one ServiceOrder.Created and one audit entry per alert', async () => {
    const alerts = await pendingIn('recife', 5);
    const team = await makeTeam(t.rt, { tenantId: city.recife.tenantId, name: 'Equipe Boa Viagem' });
    await makeReason(t.rt, { tenantId: city.recife.tenantId, code: 'LAMP_OUT', priority: 'High', slaHours: 8 });
    const ordersBefore = (await ordersOf(city.recife.tenantId)).length;
    const ids = alerts.map((a) => a.id);
    const res = await bulk({ tenantId: city.recife.tenantId, alertIds: ids, action: 'create-order', teamId: 'Equipe Boa Viagem', reasonCode: 'LAMP_OUT' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, any>;
    expect(body.action).toBe('create-order');
    expect(body.handled).toBe(5);
    expect(body.results.map((r: any) => [r.alertId, r.outcome, r.state])).toEqual(ids.map((id) => [id, 'done', 'Linked']));
    const orders = await ordersOf(city.recife.tenantId);
    expect(orders).toHaveLength(ordersBefore + 1);
    const order = orders.find((o) => o.id === body.serviceOrder.id)!;
    expect(order).toMatchObject({ number: body.serviceOrder.number, status: 'ASSIGNED', team_id: team.id, reason_code: 'LAMP_OUT' });
    const rows = await statesOf(ids);
    expect(rows.every((r) => r.status === 'Linked' && r.service_order_id === order.id && r.reason_code === 'LAMP_OUT')).toBe(true);
    const { events, audit, history } = await countsOf(ids);
    for (const id of ids) expect(events.filter((e) => e.alert_id === id).map((e) => e.event_type)).toEqual(['ServiceOrder.Created']);
    expect(events).toHaveLength(5);
    // The first alert creates the order; the others are reclassified, then linked, as the single actions would.
    expect(audit.filter((a) => a.entity_id === ids[0]).map((a) => a.action)).toEqual(['alert.create-order']);
    for (const id of ids.slice(1)) expect(audit.filter((a) => a.entity_id === id).map((a) => a.action).sort()).toEqual(['alert.link', 'alert.reclassify']);
    expect(history).toHaveLength(5);
    const address = await t.rt.db.selectFrom('service_order').select('address').where('id', '=', order.id).executeTakeFirstOrThrow();
    expect(address.address).toBe('Rua 1, 1500');
  });

  it('an unknown team or reason is 422 validation-failed, and the counter is not touched', async () => {
    const alerts = await pendingIn('poa', 2);
    const counter = async () => t.rt.db.selectFrom('service_order').select((eb) => eb.fn.countAll<string>().as('n')).where('tenant_id', '=', city.poa.tenantId).executeTakeFirstOrThrow();
    const before = await counter();
    const res = await bulk({ tenantId: city.poa.tenantId, alertIds: alerts.map((a) => a.id), action: 'create-order', reasonCode: 'NO_SUCH_REASON' });
    expect(res.status).toBe(422);
    const p = await problemOf(res);
    expect(p.type).toBe('urn:lumen:problem:validation-failed');
    expect(p.errors?.[0]?.pointer).toBe('/reasonCode');
    expect(await counter()).toEqual(before);
    expect((await statesOf(alerts.map((a) => a.id))).every((r) => r.status === 'Pending')).toBe(true);
  });
});

describe('link, reclassify, discard', () => {
  it('links every alert to an open order by its number; one ServiceOrder.Created and alert.link each', async () => {
    const [target] = await pendingIn('poa', 1, { status: 'Linked' });
    const alerts = await pendingIn('poa', 4);
    const ids = alerts.map((a) => a.id);
    const res = await bulk({ tenantId: city.poa.tenantId, alertIds: ids, action: 'link', serviceOrderId: target!.serviceOrderNumber });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, any>;
    expect(body).toMatchObject({ action: 'link', handled: 4, serviceOrder: { id: target!.serviceOrderId, number: target!.serviceOrderNumber } });
    expect((await statesOf(ids)).every((r) => r.status === 'Linked' && r.service_order_id === target!.serviceOrderId)).toBe(true);
    const { events, audit } = await countsOf(ids);
    expect(events.map((e) => e.event_type)).toEqual(Array(4).fill('ServiceOrder.Created'));
    expect(audit.map((a) => a.action)).toEqual(Array(4).fill('alert.link'));
  });

  it('linking to a closed order is 409 invalid-transition; nothing changes', async () => {
    const [target] = await pendingIn('poa', 1, { status: 'Linked' });
    await t.rt.db.updateTable('service_order').set({ status: 'COMPLETED', closed_at: new Date() }).where('id', '=', target!.serviceOrderId!).execute();
    const alerts = await pendingIn('poa', 2);
    const res = await bulk({ tenantId: city.poa.tenantId, alertIds: alerts.map((a) => a.id), action: 'link', serviceOrderId: target!.serviceOrderId });
    expect(res.status).toBe(409);
    expect((await problemOf(res)).type).toBe('urn:lumen:problem:invalid-transition');
    expect((await statesOf(alerts.map((a) => a.id))).every((r) => r.status === 'Pending')).toBe(true);
  });

  it('reclassifies every alert: audit alert.reclassify each, no event', async () => {
    await makeReason(t.rt, { tenantId: city.sp.tenantId, code: 'POLE_DOWN', priority: 'Critical', slaHours: 4 });
    const alerts = await pendingIn('sp', 3);
    const ids = alerts.map((a) => a.id);
    const res = await bulk({ tenantId: city.sp.tenantId, alertIds: ids, action: 'reclassify', reasonCode: 'POLE_DOWN' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).handled).toBe(3);
    expect((await statesOf(ids)).every((r) => r.status === 'Pending' && r.reason_code === 'POLE_DOWN')).toBe(true);
    const { events, audit } = await countsOf(ids);
    expect(events).toEqual([]);
    expect(audit.map((a) => a.action)).toEqual(Array(3).fill('alert.reclassify'));
  });

  it('discards every alert with one note: Alert.Cancelled with the note to each partner, alert.discard each', async () => {
    const alerts = await pendingIn('recife', 3);
    const ids = alerts.map((a) => a.id);
    const res = await bulk({ tenantId: city.recife.tenantId, alertIds: ids, action: 'discard', note: 'trote em série' });
    expect(res.status).toBe(200);
    expect((await statesOf(ids)).every((r) => r.status === 'Cancelled' && r.cancel_reason === 'trote em série')).toBe(true);
    const { audit } = await countsOf(ids);
    expect(audit.map((a) => a.action)).toEqual(Array(3).fill('alert.discard'));
    const events = await t.rt.db.selectFrom('event').select(['alert_id', 'event_type', 'payload']).where('alert_id', 'in', ids).execute();
    expect(events).toHaveLength(3);
    for (const e of events) {
      expect(e.event_type).toBe('Alert.Cancelled');
      expect(JSON.stringify(e.payload)).toContain('trote em série');
    }
  });

  it('discard without a note, link without an order, reclassify without a reason: 422 pointing at the missing field', async () => {
    const [alert] = await pendingIn('sp', 1);
    for (const [action, pointer] of [
      ['discard', '/note'],
      ['link', '/serviceOrderId'],
      ['reclassify', '/reasonCode'],
    ] as const) {
      const res = await bulk({ tenantId: city.sp.tenantId, alertIds: [alert!.id], action });
      expect(res.status, action).toBe(422);
      expect((await problemOf(res)).errors?.map((e) => e.pointer), action).toContain(pointer);
    }
  });
});

describe('all or nothing', () => {
  it('one alert already Linked in the batch: 409 bulk-refused listing every alert; nothing changed in the database', async () => {
    const alerts = await pendingIn('sp', 4);
    const [linked] = await pendingIn('sp', 1, { status: 'Linked' });
    const ids = [...alerts.map((a) => a.id), linked!.id];
    const before = await statesOf(ids);
    const ordersBefore = await ordersOf(city.sp.tenantId);
    const countsBefore = await countsOf(ids);
    const res = await bulk({ tenantId: city.sp.tenantId, alertIds: ids, action: 'create-order' });
    expect(res.status).toBe(409);
    const p = (await problemOf(res)) as any;
    expect(p.type).toBe('urn:lumen:problem:bulk-refused');
    expect(p.refused).toBe(1);
    expect(p.results).toHaveLength(5);
    expect(p.results[4]).toEqual({ alertId: linked!.id, outcome: 'refused', reason: 'not-pending', alertNumber: linked!.alertNumber, state: 'Linked' });
    expect(p.results.slice(0, 4).every((r: any) => r.outcome === 'done')).toBe(true);
    expect(await statesOf(ids)).toEqual(before);
    expect(await ordersOf(city.sp.tenantId)).toEqual(ordersBefore);
    expect(await countsOf(ids)).toEqual(countsBefore);
  });

  it('one alert of another city (which the operator also sees) is refused as an unknown id; nothing changed in either city', async () => {
    const ops = await makeOperator(t.rt, { grants: [{ tenantId: city.sp.tenantId, role: 'triager' }, { tenantId: city.recife.tenantId, role: 'triager' }] });
    const call = adminFetch(t, (await makeToken(t.rt, { operator: ops.email })).token);
    const mine = await pendingIn('sp', 3);
    const [foreign] = await pendingIn('recife', 1);
    const unknown = randomUUID();
    const ids = [...mine.map((a) => a.id), foreign!.id];
    const before = await statesOf(ids);
    const countsBefore = await countsOf(ids);
    const res = await bulk({ tenantId: city.sp.tenantId, alertIds: [...ids, unknown], action: 'discard', note: 'duplicado' }, call);
    expect(res.status).toBe(422);
    const p = (await problemOf(res)) as any;
    expect(p.type).toBe('urn:lumen:problem:bulk-unknown-alerts');
    expect(p.refused).toBe(2);
    const refusedForeign = p.results.find((r: any) => r.alertId === foreign!.id);
    const refusedUnknown = p.results.find((r: any) => r.alertId === unknown);
    // Exactly as an unknown id: no number, no state.
    expect(refusedForeign).toEqual({ alertId: foreign!.id, outcome: 'refused', reason: 'not-found' });
    expect(refusedUnknown).toEqual({ alertId: unknown, outcome: 'refused', reason: 'not-found' });
    expect(await statesOf(ids)).toEqual(before);
    expect(await countsOf(ids)).toEqual(countsBefore);
  });

  it("a city the operator cannot see is 404, like an unknown one; a viewer is 403; nothing changes", async () => {
    const recifeOnly = await makeOperator(t.rt, { grants: [{ tenantId: city.recife.tenantId, role: 'triager' }, { tenantId: city.poa.tenantId, role: 'viewer' }] });
    const call = adminFetch(t, (await makeToken(t.rt, { operator: recifeOnly.email })).token);
    const sp = await pendingIn('sp', 2);
    const poa = await pendingIn('poa', 1);
    const before = await statesOf([...sp, ...poa].map((a) => a.id));
    const theirs = await bulk({ tenantId: city.sp.tenantId, alertIds: sp.map((a) => a.id), action: 'discard', note: 'x' }, call);
    const none = await bulk({ tenantId: randomUUID(), alertIds: sp.map((a) => a.id), action: 'discard', note: 'x' }, call);
    const noneForPlatform = await bulk({ tenantId: randomUUID(), alertIds: sp.map((a) => a.id), action: 'discard', note: 'x' });
    expect([theirs.status, none.status, noneForPlatform.status]).toEqual([404, 404, 404]);
    expect((await problemOf(theirs)).type).toBe((await problemOf(none)).type);
    const viewer = await bulk({ tenantId: city.poa.tenantId, alertIds: poa.map((a) => a.id), action: 'discard', note: 'x' }, call);
    expect(viewer.status).toBe(403);
    expect(await statesOf([...sp, ...poa].map((a) => a.id))).toEqual(before);
  });

  it('an alert named twice or more than 500 alerts is refused before anything is read', async () => {
    const [a] = await pendingIn('sp', 1);
    const twice = await bulk({ tenantId: city.sp.tenantId, alertIds: [a!.id, a!.id], action: 'discard', note: 'x' });
    expect([400, 422]).toContain(twice.status);
    const many = await bulk({ tenantId: city.sp.tenantId, alertIds: Array.from({ length: 501 }, () => randomUUID()), action: 'discard', note: 'x' });
    expect([400, 422]).toContain(many.status);
    expect((await statesOf([a!.id]))[0]!.status).toBe('Pending');
  });
});

describe('two batches at once on the same alerts', () => {
  it('exactly one wins; the other is refused with every alert not Pending; one order only', async () => {
    const alerts = await pendingIn('poa', 20);
    const ids = alerts.map((a) => a.id);
    const reversed = [...ids].reverse();
    const ordersBefore = (await ordersOf(city.poa.tenantId)).length;
    const [r1, r2] = await Promise.all([bulk({ tenantId: city.poa.tenantId, alertIds: ids, action: 'create-order' }), bulk({ tenantId: city.poa.tenantId, alertIds: reversed, action: 'discard', note: 'duplicado' })]);
    expect([r1.status, r2.status].sort()).toEqual([200, 409]);
    const rows = await statesOf(ids);
    expect(new Set(rows.map((r) => r.status)).size).toBe(1);
    const { events } = await countsOf(ids);
    expect(events).toHaveLength(20);
    expect((await ordersOf(city.poa.tenantId)).length - ordersBefore).toBe(r1.status === 200 ? 1 : 0);
  });
});
