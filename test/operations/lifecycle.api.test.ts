import { ORDER_STATUS_WORDS } from '../../src/lib/status-words.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makePartner, makeTeam, makeTenant, type MadeAlert } from '../support/factories.js';
import { adminFetch, adminToken, alertHistory, alertRow, auditOf, orderHistory, orderRow, outboxOf, problemOf, snapshot } from './support.js';

let t: TestApp;
let api: ReturnType<typeof adminFetch>;
let tenantId: string;
let partnerA: string;
let partnerB: string;
let team: { id: string; name: string };
let otherTeam: { id: string; name: string };

beforeAll(async () => {
  t = await startTestApp();
  api = adminFetch(t, await adminToken(t, 'field-desk'));
  tenantId = (await makeTenant(t.rt)).id;
  partnerA = (await makePartner(t.rt, { tenantId })).id;
  partnerB = (await makePartner(t.rt, { tenantId })).id;
  team = await makeTeam(t.rt, { tenantId, name: 'Equipe Centro 03' });
  otherTeam = await makeTeam(t.rt, { tenantId, name: 'Equipe Norte 01' });
});
afterAll(async () => {
  await t?.stop();
});

/** An OPEN order with one alert of partner A and, when `duplicates`, one of partner B linked to it. */
async function orderWithAlerts(duplicates = true): Promise<{ orderId: string; number: string; alerts: MadeAlert[] }> {
  const first = await makeAlert(t.rt, { tenantId, externalSystemId: partnerA, status: 'Linked' });
  const alerts = [first];
  if (duplicates) alerts.push(await makeAlert(t.rt, { tenantId, externalSystemId: partnerB, status: 'Linked', orderId: first.serviceOrderId! }));
  return { orderId: first.serviceOrderId!, number: first.serviceOrderNumber!, alerts };
}

const post = (orderId: string, action: string, json: unknown = {}) => api(`/service-orders/${orderId}/${action}`, { json });

type Status = 'OPEN' | 'ASSIGNED' | 'IN_PROGRESS' | 'COMPLETED' | 'CANCELLED';

async function orderIn(status: Status) {
  const o = await orderWithAlerts(false);
  const steps: Record<Status, [string, unknown][]> = {
    OPEN: [],
    ASSIGNED: [['assign', { teamId: team.id }]],
    IN_PROGRESS: [['assign', { teamId: team.id }], ['start', {}]],
    COMPLETED: [['assign', { teamId: team.id }], ['complete', {}]],
    CANCELLED: [['cancel', {}]],
  };
  for (const [action, body] of steps[status]) expect((await post(o.orderId, action, body)).status).toBe(200);
  expect((await orderRow(t, o.orderId)).status).toBe(status);
  return o;
}

describe('the order status machine, every (status, action) pair', () => {
  const legal: Record<string, Status[]> = {
    assign: ['OPEN', 'ASSIGNED'],
    start: ['ASSIGNED'],
    complete: ['ASSIGNED', 'IN_PROGRESS'],
    cancel: ['OPEN', 'ASSIGNED', 'IN_PROGRESS'],
  };
  const target: Record<string, Status> = { assign: 'ASSIGNED', start: 'IN_PROGRESS', complete: 'COMPLETED', cancel: 'CANCELLED' };
  const statuses: Status[] = ['OPEN', 'ASSIGNED', 'IN_PROGRESS', 'COMPLETED', 'CANCELLED'];

  for (const action of Object.keys(legal)) {
    for (const from of statuses) {
      const allowed = legal[action]!.includes(from);
      it(`${action} from ${from}: ${allowed ? `-> ${target[action]}` : '409, nothing changed'}`, async () => {
        const o = await orderIn(from);
        const body = action === 'assign' ? { teamId: otherTeam.id } : {};
        const before = await snapshot(t, o.alerts.map((a) => a.id), [o.orderId]);
        const res = await post(o.orderId, action, body);
        if (allowed) {
          expect(res.status).toBe(200);
          expect(((await res.json()) as { status: string }).status).toBe(target[action]);
          expect((await orderHistory(t, o.orderId)).at(-1)).toMatchObject({ from_status: from, to_status: target[action], actor: 'admin-token:field-desk' });
        } else {
          expect(res.status).toBe(409);
          const p = await problemOf(res);
          expect(p.type).toBe('urn:lumen:problem:invalid-transition');
          expect(p.detail).toContain(ORDER_STATUS_WORDS[from]!['pt-BR']);
          expect(await snapshot(t, o.alerts.map((a) => a.id), [o.orderId])).toBe(before);
        }
      });
    }
  }
});

describe('events, history and audit of each move', () => {
  it('assign: team set, ServiceOrder.StatusChanged to each linked alert\'s partner; same team again is a no-op; another team is a reassignment', async () => {
    const o = await orderWithAlerts();
    const res = await post(o.orderId, 'assign', { teamId: team.id, note: 'turno da noite' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ASSIGNED', team: { id: team.id, name: 'Equipe Centro 03' }, closedAt: null });
    for (const [alert, partner] of [[o.alerts[0]!, partnerA], [o.alerts[1]!, partnerB]] as const) {
      const events = await outboxOf(t, alert.id);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ type: 'ServiceOrder.StatusChanged', partnerId: partner, serviceOrderId: o.orderId });
      expect(events[0]!.payload).toMatchObject({ serviceOrder: { status: 'ASSIGNED', team: { id: team.id } }, alert: { id: alert.id, status: 'Linked' } });
    }
    expect((await orderHistory(t, o.orderId)).at(-1)).toMatchObject({ from_status: 'OPEN', to_status: 'ASSIGNED', note: 'turno da noite' });
    const audit = await auditOf(t, o.orderId);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: 'service-order.assign', entity_type: 'service_order', note: 'turno da noite', before: { status: 'OPEN', teamId: null }, after: { status: 'ASSIGNED', teamId: team.id } });

    const same = await snapshot(t, o.alerts.map((a) => a.id), [o.orderId]);
    expect((await post(o.orderId, 'assign', { teamId: team.id })).status).toBe(200);
    expect(await snapshot(t, o.alerts.map((a) => a.id), [o.orderId])).toBe(same);

    const moved = await post(o.orderId, 'assign', { teamId: otherTeam.id });
    expect(await moved.json()).toMatchObject({ status: 'ASSIGNED', team: { id: otherTeam.id } });
    expect((await outboxOf(t, o.alerts[0]!.id)).map((e) => e.type)).toEqual(['ServiceOrder.StatusChanged', 'ServiceOrder.StatusChanged']);
    // `sequence` counts per order, across its alerts: a receiver can drop a stale event.
    const sequences = [...(await outboxOf(t, o.alerts[0]!.id)), ...(await outboxOf(t, o.alerts[1]!.id))].map((e) => e.sequence).sort();
    expect(sequences).toEqual([1, 2, 3, 4]);
    const [firstA, secondA] = (await outboxOf(t, o.alerts[0]!.id)).map((e) => e.sequence);
    expect(secondA).toBeGreaterThan(firstA!);
  });

  it('start: IN_PROGRESS and ServiceOrder.StatusChanged per alert', async () => {
    const o = await orderWithAlerts();
    await post(o.orderId, 'assign', { teamId: team.id });
    const res = await post(o.orderId, 'start', { note: 'equipe no local' });
    expect(await res.json()).toMatchObject({ status: 'IN_PROGRESS', closedAt: null });
    for (const alert of o.alerts) expect((await outboxOf(t, alert.id)).map((e) => [e.type, e.payload.serviceOrder.status])).toEqual([
      ['ServiceOrder.StatusChanged', 'ASSIGNED'],
      ['ServiceOrder.StatusChanged', 'IN_PROGRESS'],
    ]);
  });

  it('complete: closedAt set, every linked alert Resolved, one ServiceOrder.Completed per alert to its partner', async () => {
    const o = await orderWithAlerts();
    await post(o.orderId, 'assign', { teamId: team.id });
    await post(o.orderId, 'start');
    const res = await post(o.orderId, 'complete', { note: 'lâmpada substituída' });
    expect(res.status).toBe(200);
    const order = (await res.json()) as Record<string, any>;
    expect(order.status).toBe('COMPLETED');
    expect(Date.parse(order.closedAt)).toBe(Date.parse(order.updatedAt));
    for (const [alert, partner] of [[o.alerts[0]!, partnerA], [o.alerts[1]!, partnerB]] as const) {
      expect(await alertRow(t, alert.id)).toMatchObject({ status: 'Resolved', service_order_id: o.orderId });
      expect((await alertHistory(t, alert.id)).at(-1)).toMatchObject({ from_status: 'Linked', to_status: 'Resolved', note: `order ${o.number} COMPLETED` });
      const last = (await outboxOf(t, alert.id)).at(-1)!;
      expect(last).toMatchObject({ type: 'ServiceOrder.Completed', partnerId: partner, serviceOrderId: o.orderId });
      expect(last.payload).toMatchObject({ serviceOrder: { status: 'COMPLETED', closedAt: order.closedAt }, alert: { id: alert.id, status: 'Resolved' } });
    }
    const audit = (await auditOf(t, o.orderId)).at(-1)!;
    expect(audit).toMatchObject({ action: 'service-order.complete', note: 'lâmpada substituída' });
    expect((audit.after as { alerts: unknown[] }).alerts).toEqual(expect.arrayContaining([{ id: o.alerts[0]!.id, status: 'Resolved' }, { id: o.alerts[1]!.id, status: 'Resolved' }]));
  });

  it('cancel: closedAt set, ServiceOrder.Cancelled per alert, the alerts back to Pending for a new triage', async () => {
    const o = await orderWithAlerts();
    const res = await post(o.orderId, 'cancel', { reason: 'duplicada' });
    expect(res.status).toBe(200);
    const order = (await res.json()) as Record<string, any>;
    expect(order).toMatchObject({ status: 'CANCELLED', closedAt: expect.any(String) });
    for (const [alert, partner] of [[o.alerts[0]!, partnerA], [o.alerts[1]!, partnerB]] as const) {
      expect(await alertRow(t, alert.id)).toMatchObject({ status: 'Pending', service_order_id: null });
      expect((await alertHistory(t, alert.id)).at(-1)).toMatchObject({ from_status: 'Linked', to_status: 'Pending' });
      const last = (await outboxOf(t, alert.id)).at(-1)!;
      expect(last).toMatchObject({ type: 'ServiceOrder.Cancelled', partnerId: partner, serviceOrderId: o.orderId });
      expect(last.payload).toMatchObject({ serviceOrder: { id: o.orderId, status: 'CANCELLED' }, alert: { id: alert.id, status: 'Pending' } });
    }
    expect((await orderHistory(t, o.orderId)).at(-1)).toMatchObject({ from_status: 'OPEN', to_status: 'CANCELLED', note: 'duplicada' });
    // Released alerts are triaged again: one is discarded, the other gets a new order.
    const discarded = await api(`/alerts/${o.alerts[0]!.id}/discard`, { json: { reason: 'resolvido pelo munícipe' } });
    expect(discarded.status).toBe(200);
    expect((await outboxOf(t, o.alerts[0]!.id)).at(-1)).toMatchObject({ type: 'Alert.Cancelled', serviceOrderId: null });
    const again = await api(`/alerts/${o.alerts[1]!.id}/create-order`, { json: {} });
    expect(again.status).toBe(201);
  });

  it('answers 422 for a team of another tenant and 404 for an unknown order', async () => {
    const o = await orderWithAlerts(false);
    const foreign = await makeTeam(t.rt, { tenantId: (await makeTenant(t.rt)).id });
    const res = await post(o.orderId, 'assign', { teamId: foreign.id });
    expect(res.status).toBe(422);
    expect((await problemOf(res)).errors).toEqual([{ pointer: '/teamId', message: "no such team in the order's tenant" }]);
    expect((await post(o.orderId, 'assign', {})).status).toBe(422);
    expect((await post('00000000-0000-4000-8000-000000000000', 'start')).status).toBe(404);
    expect((await api('/service-orders/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    const shown = await api(`/service-orders/${o.orderId}`);
    expect(await shown.json()).toMatchObject({ id: o.orderId, number: o.number, status: 'OPEN' });
  });
});
