import { statusWords } from '../../src/lib/status-words.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makePartner, makeReason, makeTeam, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, alertHistory, alertRow, auditOf, orderHistory, orderRow, outboxOf, problemOf, snapshot } from './support.js';

let t: TestApp;
let api: ReturnType<typeof adminFetch>;
let tenantId: string;
let partnerId: string;
let otherPartnerId: string;

beforeAll(async () => {
  t = await startTestApp();
  api = adminFetch(t, await adminToken(t, 'triage-desk'));
  tenantId = (await makeTenant(t.rt, { intakePolicy: 'manual' })).id;
  partnerId = (await makePartner(t.rt, { tenantId })).id;
  otherPartnerId = (await makePartner(t.rt, { tenantId })).id;
});
afterAll(async () => {
  await t?.stop();
});

const pending = (o: Partial<Parameters<typeof makeAlert>[1]> = {}) => makeAlert(t.rt, { tenantId, externalSystemId: partnerId, ...o });

async function expectInvalidTransition(res: Response, state: string) {
  expect(res.status).toBe(409);
  const p = await problemOf(res);
  expect(p.type).toBe('urn:lumen:problem:invalid-transition');
  // The state in words, in the answer's language (pt-BR by default).
  expect(p.detail).toContain((statusWords(state) as { 'pt-BR': string })['pt-BR']);
  return p;
}

describe('create-order: Pending -> Linked with a new order', () => {
  it('creates an OPEN order from the alert, links it, writes history, audit and ServiceOrder.Created for its partner', async () => {
    const alert = await pending();
    const res = await api(`/alerts/${alert.id}/create-order`, { json: {} });
    expect(res.status).toBe(201);
    const order = (await res.json()) as Record<string, any>;
    expect(res.headers.get('location')).toBe(`/api/admin/service-orders/${order.id}`);
    expect(order).toEqual({
      id: expect.any(String),
      number: expect.stringMatching(/^OS-\d{4}-\d{5}$/),
      status: 'OPEN',
      priority: 'Medium',
      type: 'EXTERNAL_OTHER',
      address: 'Rua Augusta, 1500',
      neighborhood: 'Consolação',
      latitude: -23.5573,
      longitude: -46.6602,
      poleId: null,
      team: null,
      openedAt: expect.any(String),
      updatedAt: expect.any(String),
      closedAt: null,
    });

    const row = await alertRow(t, alert.id);
    expect(row).toMatchObject({ status: 'Linked', service_order_id: order.id });
    expect((await orderRow(t, order.id)).sla_due_at.toISOString()).toBe(row.sla_due_at.toISOString());
    expect(await alertHistory(t, alert.id)).toEqual([
      expect.objectContaining({ from_status: null, to_status: 'Pending' }),
      { from_status: 'Pending', to_status: 'Linked', actor: 'admin-token:triage-desk', note: `new order ${order.number}` },
    ]);
    expect((await orderHistory(t, order.id)).map((h) => [h.from_status, h.to_status, h.actor])).toEqual([[null, 'OPEN', 'admin-token:triage-desk']]);

    const audit = await auditOf(t, alert.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: 'alert.create-order', actor: 'admin-token:triage-desk', entity_type: 'alert', tenant_id: tenantId, request_id: res.headers.get('x-request-id') });
    expect(audit[0]!.before).toMatchObject({ status: 'Pending', serviceOrderId: null });
    expect(audit[0]!.after).toMatchObject({ status: 'Linked', serviceOrderId: order.id, serviceOrder: { number: order.number, status: 'OPEN' } });

    const events = await outboxOf(t, alert.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'ServiceOrder.Created', partnerId, serviceOrderId: order.id, sequence: 1 });
    expect(events[0]!.payload).toMatchObject({
      eventType: 'ServiceOrder.Created',
      protocolNumber: alert.protocolNumber,
      serviceOrder: { id: order.id, number: order.number, status: 'OPEN' },
      alert: { id: alert.id, alertNumber: alert.alertNumber, status: 'Linked' },
      sequence: 1,
    });

    const shown = (await (await api(`/alerts/${alert.id}`)).json()) as Record<string, any>;
    expect(shown).toMatchObject({ status: 'Linked', serviceOrder: { id: order.id, number: order.number, status: 'OPEN' }, partner: { id: partnerId } });
  });

  it('with a team the order starts ASSIGNED; with a reason the alert is reclassified and the order takes its priority and SLA', async () => {
    const team = await makeTeam(t.rt, { tenantId });
    const reason = await makeReason(t.rt, { tenantId, priority: 'Critical', slaHours: 4, nameEn: 'Lamp out', namePt: 'Lâmpada apagada' });
    const alert = await pending({ latitude: null, number: null });
    const res = await api(`/alerts/${alert.id}/create-order`, { json: { teamId: team.id, reasonCode: reason.code } });
    expect(res.status).toBe(201);
    const order = (await res.json()) as Record<string, any>;
    expect(order).toMatchObject({ status: 'ASSIGNED', team: { id: team.id, name: team.name }, priority: 'Critical', type: reason.code, address: 'Rua Augusta', latitude: null, longitude: null });
    const row = await alertRow(t, alert.id);
    expect(row).toMatchObject({ reason_code: reason.code, priority: 'Critical' });
    expect(row.sla_due_at.getTime()).toBe(row.created_at.getTime() + 4 * 3600_000);
    expect((await orderHistory(t, order.id)).map((h) => [h.from_status, h.to_status])).toEqual([
      [null, 'OPEN'],
      ['OPEN', 'ASSIGNED'],
    ]);
    const events = await outboxOf(t, alert.id);
    expect(events.map((e) => e.type)).toEqual(['ServiceOrder.Created']);
    expect(events[0]!.payload.serviceOrder).toMatchObject({ status: 'ASSIGNED', team: { id: team.id } });
    const shown = (await (await api(`/alerts/${alert.id}`, { headers: { 'accept-language': 'en' } })).json()) as Record<string, any>;
    expect(shown.reasonName).toBe('Lamp out');
    expect((await (await api(`/alerts/${alert.id}`)).json()) as Record<string, any>).toMatchObject({ reasonName: 'Lâmpada apagada' });
  });

  it('refuses an unknown status filter of the alert list (400 naming it), and lists Pending alerts for a known one', async () => {
    const alert = await pending();
    for (const status of ['pending', "Pending' OR true --"]) {
      const res = await api(`/alerts?tenantId=${tenantId}&status=${encodeURIComponent(status)}`);
      expect(res.status).toBe(400);
      expect((await problemOf(res)).errors?.map((e) => e.pointer).join(' ')).toMatch(/status/);
    }
    const res = await api(`/alerts?tenantId=${tenantId}&status=Pending&sort=priority&pageSize=500`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { items: { id: string }[] }).items.map((i) => i.id)).toContain(alert.id);
  });

  it('numbers orders per tenant and year', async () => {
    const a = await pending();
    const b = await pending();
    const first = (await (await api(`/alerts/${a.id}/create-order`, { json: {} })).json()) as { number: string };
    const second = (await (await api(`/alerts/${b.id}/create-order`, { json: {} })).json()) as { number: string };
    const seq = (n: string) => Number(n.split('-')[2]);
    expect(seq(second.number)).toBe(seq(first.number) + 1);
  });

  it('refuses (409, nothing changed) a Linked, a Cancelled and a Resolved alert', async () => {
    const linked = await pending({ status: 'Linked' });
    const before = await snapshot(t, [linked.id], [linked.serviceOrderId!]);
    const p = await expectInvalidTransition(await api(`/alerts/${linked.id}/create-order`, { json: {} }), 'Linked');
    expect(p.title).toBe('Transição inválida');
    expect(p.detail).toBe('Não é possível criar uma ordem de serviço para o alerta: o estado atual é Vinculado a uma ordem.');
    const en = await api(`/alerts/${linked.id}/create-order`, { json: {}, headers: { 'accept-language': 'en' } });
    expect((await problemOf(en)).detail).toBe('Cannot create a service order for the alert: the current state is Linked to an order.');
    expect(await snapshot(t, [linked.id], [linked.serviceOrderId!])).toBe(before);

    const discarded = await pending();
    expect((await api(`/alerts/${discarded.id}/discard`, { json: {} })).status).toBe(200);
    await expectInvalidTransition(await api(`/alerts/${discarded.id}/create-order`, { json: {} }), 'Cancelled');

    const resolved = await pending({ status: 'Linked' });
    const team = await makeTeam(t.rt, { tenantId });
    await api(`/service-orders/${resolved.serviceOrderId}/assign`, { json: { teamId: team.id } });
    expect((await api(`/service-orders/${resolved.serviceOrderId}/complete`, { json: {} })).status).toBe(200);
    await expectInvalidTransition(await api(`/alerts/${resolved.id}/create-order`, { json: {} }), 'Resolved');
  });

  it('answers 422 for a team or reason of another tenant, 404 for an unknown alert or a reference that names none', async () => {
    const elsewhere = (await makeTenant(t.rt)).id;
    const foreignTeam = await makeTeam(t.rt, { tenantId: elsewhere });
    const alert = await pending();
    const before = await snapshot(t, [alert.id], []);
    const team = await api(`/alerts/${alert.id}/create-order`, { json: { teamId: foreignTeam.id } });
    expect(team.status).toBe(422);
    expect((await problemOf(team)).errors).toEqual([{ pointer: '/teamId', message: "no such team in the alert's tenant" }]);
    const reason = await api(`/alerts/${alert.id}/create-order`, { json: { reasonCode: 'NOPE' } });
    expect(reason.status).toBe(422);
    expect((await problemOf(reason)).errors?.[0]?.pointer).toBe('/reasonCode');
    const extra = await api(`/alerts/${alert.id}/create-order`, { json: { color: 'blue' } });
    expect(extra.status).toBe(422);
    expect(await snapshot(t, [alert.id], [])).toBe(before);
    expect((await api('/alerts/00000000-0000-4000-8000-000000000000/create-order', { json: {} })).status).toBe(404);
    // Paths take display numbers too (42, #42): a reference that is neither names no alert.
    expect((await api('/alerts/not-a-uuid/create-order', { json: {} })).status).toBe(404);
    expect((await api(`/alerts/${alert.id}/create-order`, { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
  });
});

describe('link: Pending -> Linked to an existing open order', () => {
  it('links a duplicate report; only this alert\'s partner gets ServiceOrder.Created; the order is unchanged', async () => {
    const first = await pending({ status: 'Linked' });
    const orderBefore = await orderRow(t, first.serviceOrderId!);
    const dup = await makeAlert(t.rt, { tenantId, externalSystemId: otherPartnerId });
    const res = await api(`/alerts/${dup.id}/link`, { json: { serviceOrderId: first.serviceOrderId } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, any>;
    expect(body).toMatchObject({ id: dup.id, status: 'Linked', serviceOrder: { id: first.serviceOrderId, number: first.serviceOrderNumber, status: 'OPEN' } });
    const orderAfter = await orderRow(t, first.serviceOrderId!);
    expect({ ...orderAfter, event_seq: 0, updated_at: 0 }).toEqual({ ...orderBefore, event_seq: 0, updated_at: 0 });
    expect(await outboxOf(t, first.id)).toEqual([]);
    const events = await outboxOf(t, dup.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'ServiceOrder.Created', partnerId: otherPartnerId, serviceOrderId: first.serviceOrderId });
    expect(events[0]!.payload.alert).toEqual({ id: dup.id, alertNumber: dup.alertNumber, status: 'Linked' });
    expect((await alertHistory(t, dup.id)).at(-1)).toMatchObject({ from_status: 'Pending', to_status: 'Linked', note: `linked to order ${first.serviceOrderNumber}` });
    expect((await auditOf(t, dup.id)).map((a) => a.action)).toEqual(['alert.link']);
  });

  it('refuses a closed order (COMPLETED, CANCELLED) and a non-Pending alert with 409; an order of another tenant with 422', async () => {
    const team = await makeTeam(t.rt, { tenantId });
    const done = await pending({ status: 'Linked' });
    await api(`/service-orders/${done.serviceOrderId}/assign`, { json: { teamId: team.id } });
    expect((await api(`/service-orders/${done.serviceOrderId}/complete`, { json: {} })).status).toBe(200);
    const alert = await pending();
    const cancelled = await pending({ status: 'Linked' });
    expect((await api(`/service-orders/${cancelled.serviceOrderId}/cancel`, { json: {} })).status).toBe(200);
    const before = await snapshot(t, [alert.id], [done.serviceOrderId!]);
    const closed = await expectInvalidTransition(await api(`/alerts/${alert.id}/link`, { json: { serviceOrderId: done.serviceOrderId } }), 'COMPLETED');
    expect(closed.detail).toContain(done.serviceOrderNumber!);
    await expectInvalidTransition(await api(`/alerts/${alert.id}/link`, { json: { serviceOrderId: cancelled.serviceOrderId } }), 'CANCELLED');
    expect(await snapshot(t, [alert.id], [done.serviceOrderId!])).toBe(before);

    const open = await pending({ status: 'Linked' });
    await expectInvalidTransition(await api(`/alerts/${done.id}/link`, { json: { serviceOrderId: open.serviceOrderId } }), 'Resolved');

    const elsewhere = (await makeTenant(t.rt)).id;
    const foreignPartner = (await makePartner(t.rt, { tenantId: elsewhere })).id;
    const foreign = await makeAlert(t.rt, { tenantId: elsewhere, externalSystemId: foreignPartner, status: 'Linked' });
    const cross = await api(`/alerts/${alert.id}/link`, { json: { serviceOrderId: foreign.serviceOrderId } });
    expect(cross.status).toBe(422);
    expect((await problemOf(cross)).errors?.[0]?.pointer).toBe('/serviceOrderId');
    expect((await api(`/alerts/${alert.id}/link`, { json: {} })).status).toBe(422);
  });
});

describe('discard: Pending -> Cancelled', () => {
  it('cancels with the reason; Alert.Cancelled with serviceOrder null', async () => {
    const alert = await pending();
    const res = await api(`/alerts/${alert.id}/discard`, { json: { reason: 'trote' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'Cancelled', cancelReason: 'trote', serviceOrder: null });
    expect((await alertHistory(t, alert.id)).at(-1)).toMatchObject({ from_status: 'Pending', to_status: 'Cancelled', note: 'trote', actor: 'admin-token:triage-desk' });
    const audit = await auditOf(t, alert.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: 'alert.discard', note: 'trote', before: { status: 'Pending' }, after: { status: 'Cancelled', cancelReason: 'trote' } });
    const events = await outboxOf(t, alert.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'Alert.Cancelled', partnerId, serviceOrderId: null, sequence: 1 });
    expect(events[0]!.payload).toMatchObject({ eventType: 'Alert.Cancelled', serviceOrder: null, alert: { id: alert.id, status: 'Cancelled' }, protocolNumber: alert.protocolNumber });
  });

  it('refuses Linked, Cancelled and Resolved alerts (409, nothing changed)', async () => {
    const linked = await pending({ status: 'Linked' });
    const before = await snapshot(t, [linked.id], [linked.serviceOrderId!]);
    const p = await expectInvalidTransition(await api(`/alerts/${linked.id}/discard`, { json: { reason: 'x' } }), 'Linked');
    expect(p.detail).toBe('Não é possível descartar o alerta: o estado atual é Vinculado a uma ordem.');
    expect(await snapshot(t, [linked.id], [linked.serviceOrderId!])).toBe(before);
    const gone = await pending();
    await api(`/alerts/${gone.id}/discard`, { json: {} });
    await expectInvalidTransition(await api(`/alerts/${gone.id}/discard`, { json: {} }), 'Cancelled');
  });
});

describe('reclassify', () => {
  it('Pending: reason, priority and SLA follow; no event', async () => {
    const reason = await makeReason(t.rt, { tenantId, priority: 'Low', slaHours: 72 });
    const alert = await pending();
    const res = await api(`/alerts/${alert.id}/reclassify`, { json: { reasonCode: reason.code } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, any>;
    expect(body).toMatchObject({ status: 'Pending', reasonCode: reason.code, priority: 'Low' });
    expect(Date.parse(body.slaDueAt) - Date.parse(body.createdAt)).toBe(72 * 3600_000);
    expect(await outboxOf(t, alert.id)).toEqual([]);
    const audit = await auditOf(t, alert.id);
    expect(audit[0]).toMatchObject({ action: 'alert.reclassify', before: { reasonCode: 'EXTERNAL_OTHER', priority: 'Medium' }, after: { reasonCode: reason.code, priority: 'Low' } });
    // The same reason again changes nothing.
    expect((await api(`/alerts/${alert.id}/reclassify`, { json: { reasonCode: reason.code } })).status).toBe(200);
    expect(await auditOf(t, alert.id)).toHaveLength(1);
  });

  it('Linked to an open order: the order follows; closed order or final alert: 409; unknown reason: 422', async () => {
    const reason = await makeReason(t.rt, { tenantId, priority: 'High', slaHours: 6 });
    const alert = await pending({ status: 'Linked' });
    const res = await api(`/alerts/${alert.id}/reclassify`, { json: { reasonCode: reason.code } });
    expect(res.status).toBe(200);
    const order = await orderRow(t, alert.serviceOrderId!);
    const row = await alertRow(t, alert.id);
    expect(order).toMatchObject({ reason_code: reason.code, priority: 'High' });
    expect(order.sla_due_at.toISOString()).toBe(row.sla_due_at.toISOString());
    expect(await outboxOf(t, alert.id)).toEqual([]);

    const unknown = await api(`/alerts/${alert.id}/reclassify`, { json: { reasonCode: 'NOT_A_REASON' } });
    expect(unknown.status).toBe(422);

    const team = await makeTeam(t.rt, { tenantId });
    await api(`/service-orders/${alert.serviceOrderId}/assign`, { json: { teamId: team.id } });
    await api(`/service-orders/${alert.serviceOrderId}/complete`, { json: {} });
    const cancelled = await pending();
    await api(`/alerts/${cancelled.id}/discard`, { json: {} });
    const before = await snapshot(t, [alert.id], [alert.serviceOrderId!]);
    await expectInvalidTransition(await api(`/alerts/${alert.id}/reclassify`, { json: { reasonCode: 'EXTERNAL_OTHER' } }), 'Resolved');
    await expectInvalidTransition(await api(`/alerts/${cancelled.id}/reclassify`, { json: { reasonCode: reason.code } }), 'Cancelled');
    expect(await snapshot(t, [alert.id], [alert.serviceOrderId!])).toBe(before);
  });
});

describe('set-location', () => {
  it('Pending: clears "not geolocated" (source operator); the inbox filter sees it', async () => {
    const alert = await pending({ latitude: null });
    const inbox = async () => ((await (await api(`/alerts?tenantId=${tenantId}&status=Pending&notGeolocated=true&pageSize=500`)).json()) as { items: { id: string }[] }).items.map((a) => a.id);
    expect(await inbox()).toContain(alert.id);
    const res = await api(`/alerts/${alert.id}/set-location`, { json: { latitude: -23.55, longitude: -46.63 } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ latitude: -23.55, longitude: -46.63, locationSource: 'operator', geolocated: true, status: 'Pending' });
    expect(await inbox()).not.toContain(alert.id);
    expect((await auditOf(t, alert.id))[0]).toMatchObject({ action: 'alert.set-location', before: { latitude: null, locationSource: null }, after: { latitude: -23.55, locationSource: 'operator' } });
    expect(await outboxOf(t, alert.id)).toEqual([]);
  });

  it('Linked: an open order without coordinates takes them; one with coordinates keeps them', async () => {
    const bare = await pending({ status: 'Linked', latitude: null });
    await api(`/alerts/${bare.id}/set-location`, { json: { latitude: -23.5, longitude: -46.6 } });
    expect(await orderRow(t, bare.serviceOrderId!)).toMatchObject({ latitude: -23.5, longitude: -46.6 });
    const placed = await pending({ status: 'Linked' });
    await api(`/alerts/${placed.id}/set-location`, { json: { latitude: -23.5, longitude: -46.6 } });
    expect(await orderRow(t, placed.serviceOrderId!)).toMatchObject({ latitude: -23.5573, longitude: -46.6602 });
    expect(await alertRow(t, placed.id)).toMatchObject({ latitude: -23.5, location_source: 'operator' });
  });

  it('refuses out-of-range coordinates (422) and final alerts (409)', async () => {
    const alert = await pending({ latitude: null });
    const bad = await api(`/alerts/${alert.id}/set-location`, { json: { latitude: 91, longitude: 0 } });
    expect(bad.status).toBe(422);
    expect((await problemOf(bad)).errors?.[0]?.pointer).toBe('/latitude');
    await api(`/alerts/${alert.id}/discard`, { json: {} });
    await expectInvalidTransition(await api(`/alerts/${alert.id}/set-location`, { json: { latitude: 1, longitude: 1 } }), 'Cancelled');
    expect(await alertRow(t, alert.id)).toMatchObject({ latitude: null });
  });
});

describe('listing and showing alerts', () => {
  it('lists oldest first with filters, paging and a total; shows one alert; validates parameters', async () => {
    const tenant = (await makeTenant(t.rt, { intakePolicy: 'manual' })).id;
    const partner = (await makePartner(t.rt, { tenantId: tenant })).id;
    const a = await makeAlert(t.rt, { tenantId: tenant, externalSystemId: partner });
    const b = await makeAlert(t.rt, { tenantId: tenant, externalSystemId: partner, status: 'Linked' });
    const c = await makeAlert(t.rt, { tenantId: tenant, externalSystemId: partner, latitude: null });
    const all = (await (await api(`/alerts?tenantId=${tenant}`)).json()) as { items: { id: string }[]; total: number; page: number; pageSize: number };
    expect(all.items.map((x) => x.id)).toEqual([a.id, b.id, c.id]);
    expect(all).toMatchObject({ total: 3, page: 1, pageSize: 50 });
    const pendingOnly = (await (await api(`/alerts?tenantId=${tenant}&status=Pending`)).json()) as { items: { id: string }[] };
    expect(pendingOnly.items.map((x) => x.id)).toEqual([a.id, c.id]);
    const byOrder = (await (await api(`/alerts?tenantId=${tenant}&serviceOrderId=${b.serviceOrderId}`)).json()) as { items: { id: string }[] };
    expect(byOrder.items.map((x) => x.id)).toEqual([b.id]);
    const page2 = (await (await api(`/alerts?tenantId=${tenant}&page=2&pageSize=2`)).json()) as { items: { id: string }[]; total: number };
    expect(page2).toMatchObject({ total: 3 });
    expect(page2.items.map((x) => x.id)).toEqual([c.id]);
    const capped = (await (await api(`/alerts?tenantId=${tenant}&pageSize=5000`)).json()) as { pageSize: number };
    expect(capped.pageSize).toBe(500);
    const shown = (await (await api(`/alerts/${c.id}`)).json()) as Record<string, any>;
    expect(shown).toMatchObject({ id: c.id, geolocated: false, latitude: null, locationSource: null, protocolNumber: c.protocolNumber, address: { street: 'Rua Augusta', number: '1500' } });

    const badStatus = await api(`/alerts?tenantId=${tenant}&status=Open`);
    expect(badStatus.status).toBe(400);
    expect((await problemOf(badStatus)).errors?.[0]?.pointer).toBe('/query/status');
    expect((await api('/alerts')).status).toBe(400);
    expect((await api(`/alerts?tenantId=${tenant}&page=0`)).status).toBe(400);
    expect((await api('/alerts/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });
});
