/**
 * Undo within a short window (issue 23 §2): an action made with `Prefer: undo` holds
 * its partner events (not delivered, not in the events page) until the window passes;
 * POST /api/admin/actions/{id}/undo within it puts everything back and the events are
 * never sent. A real webhook receiver on loopback and a polling partner's events page
 * see what partners would. Curitiba, and Manaus for isolation; a 3 s window.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventsPage } from '../../generated/partner/types.gen.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase } from '../support/database.js';
import { makeAlert, makePartner, makeReason, makeTeam, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, alertHistory, auditOf, problemOf } from '../operations/support.js';
import { makeToken } from '../operators/support.js';
import { startReceiver, waitFor, WEBHOOK_SECRET } from './support.js';

const WINDOW_SECONDS = 3;
const CURITIBA = { latitude: -25.4284, longitude: -49.2733 };

let t: TestApp;
let api: ReturnType<typeof adminFetch>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let curitiba: string;
let manaus: string;
let hooked: { id: string };
let polled: { id: string; apiKey: string };

beforeAll(async () => {
  receiver = await startReceiver();
  t = await startTestApp({ env: { LUMEN_UNDO_WINDOW_SECONDS: String(WINDOW_SECONDS) } });
  api = adminFetch(t, await adminToken(t, 'undo-desk'));
  curitiba = (await makeTenant(t.rt, { name: `Curitiba ${randomUUID().slice(0, 6)}`, intakePolicy: 'manual' })).id;
  manaus = (await makeTenant(t.rt, { name: `Manaus ${randomUUID().slice(0, 6)}`, intakePolicy: 'manual' })).id;
  hooked = await makePartner(t.rt, { tenantId: curitiba, code: `CWB-156-${randomUUID().slice(0, 4)}`, scopes: [], transport: 'webhook', webhookUrl: receiver.url, webhookSecret: WEBHOOK_SECRET });
  polled = (await makePartner(t.rt, { tenantId: curitiba, code: `CWB-APP-${randomUUID().slice(0, 4)}`, scopes: [], transport: 'polling' })) as never;
  await makeReason(t.rt, { tenantId: curitiba, code: 'LAMP_OUT', priority: 'High', slaHours: 8 });
  await makeTeam(t.rt, { tenantId: curitiba, name: 'Equipe Boqueirão de Manutenção Noturna' });
});
afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

const pending = (externalSystemId: string, street = 'Rua XV de Novembro') => makeAlert(t.rt, { tenantId: curitiba, externalSystemId, ...CURITIBA, street });
const undoable = (path: string, json: unknown, call = api) => call(path, { json, headers: { prefer: 'undo' } });
const undo = (actionId: string, call = api) => call(`/actions/${actionId}/undo`, { method: 'POST' });

function ticketOf(res: Response): { actionId: string; until: number } {
  expect(res.headers.get('preference-applied')).toBe('undo');
  const actionId = res.headers.get('lumen-undo-action');
  const until = res.headers.get('lumen-undo-until');
  expect(actionId).toMatch(/^[0-9a-f-]{36}$/);
  expect(until).toBeTruthy();
  return { actionId: actionId!, until: Date.parse(until!) };
}

/** Events of these alerts a partner could see: in the outbox (webhook deliveries and the events page are built from it). */
async function outboxFor(alertIds: string[]) {
  return t.rt.db.selectFrom('event').select(['id', 'alert_id', 'event_type']).where('alert_id', 'in', alertIds).execute();
}

async function heldFor(alertIds: string[]) {
  return t.rt.db.selectFrom('held_event').select(['id', 'alert_id']).where('alert_id', 'in', alertIds).execute();
}

/** Every event the polling partner's events page returns, from the start. */
async function eventsPage(): Promise<EventsPage['events']> {
  const res = await t.fetch('/api/external/events?since=1970-01-01T00:00:00.000Z', { apiKey: polled.apiKey });
  expect(res.status).toBe(200);
  return ((await res.json()) as EventsPage).events;
}

const receivedAbout = (alertId: string) => receiver.received.filter((r) => (JSON.parse(r.raw.toString('utf8')) as { alert: { id: string } }).alert.id === alertId);

describe('undo within the window', () => {
  it('a bulk discard undone: alerts Pending again without the note, audit alert.undo, no webhook and nothing in the events page, ever', async () => {
    const a = await pending(hooked.id, 'Rua Marechal Deodoro');
    const b = await pending(polled.id, 'Avenida Sete de Setembro');
    const res = await undoable('/alerts/bulk', { tenantId: curitiba, alertIds: [a.id, b.id], action: 'discard', note: 'trote: endereço inexistente no Boqueirão' });
    expect(res.status).toBe(200);
    const ticket = ticketOf(res);
    expect((await heldFor([a.id, b.id])).length).toBe(2);
    expect(await outboxFor([a.id, b.id])).toEqual([]);
    expect((await eventsPage()).filter((e) => e.alert.id === b.id)).toEqual([]);

    const done = await undo(ticket.actionId);
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ id: ticket.actionId, kind: 'discard' });
    const rows = await t.rt.db.selectFrom('alert').select(['id', 'status', 'cancel_reason', 'service_order_id']).where('id', 'in', [a.id, b.id]).execute();
    expect(rows.map((r) => [r.status, r.cancel_reason, r.service_order_id])).toEqual([
      ['Pending', null, null],
      ['Pending', null, null],
    ]);
    expect((await auditOf(t, a.id)).map((e) => e.action)).toEqual(['alert.discard', 'alert.undo']);
    expect((await alertHistory(t, a.id)).slice(-1)[0]).toMatchObject({ from_status: 'Cancelled', to_status: 'Pending' });
    expect(await heldFor([a.id, b.id])).toEqual([]);

    // A later action let run out its window: once its event has arrived, the undone one's would have long before.
    const control = await pending(hooked.id, 'Rua Comendador Araújo');
    const later = await undoable(`/alerts/${control.id}/discard`, { reason: 'duplicado do 156' });
    ticketOf(later);
    await waitFor(() => receivedAbout(control.id).length > 0, 20_000, 'the control event');
    expect(receivedAbout(a.id)).toEqual([]);
    expect(await outboxFor([a.id, b.id])).toEqual([]);
    expect((await eventsPage()).filter((e) => e.alert.id === a.id || e.alert.id === b.id)).toEqual([]);
    // Undone: a second undo is too late.
    const again = await undo(ticket.actionId);
    expect(again.status).toBe(409);
    expect((await problemOf(again)).type).toBe('urn:lumen:problem:undo-expired');
  });

  it('a create-order undone deletes the order: the alert is Pending, unlinked, with its reason back', async () => {
    const a = await pending(hooked.id, 'Rua Padre Anchieta');
    const reasonBefore = await t.rt.db.selectFrom('alert').select(['reason_code', 'priority', 'sla_due_at']).where('id', '=', a.id).executeTakeFirstOrThrow();
    const res = await undoable(`/alerts/${a.id}/create-order`, { teamId: 'Equipe Boqueirão de Manutenção Noturna', reasonCode: 'LAMP_OUT' });
    expect(res.status).toBe(201);
    const ticket = ticketOf(res);
    const order = (await res.json()) as { id: string; number: string };
    expect((await undo(ticket.actionId)).status).toBe(200);
    expect(await t.rt.db.selectFrom('service_order').select('id').where('id', '=', order.id).executeTakeFirst()).toBeUndefined();
    const row = await t.rt.db.selectFrom('alert').select(['status', 'service_order_id', 'reason_code', 'priority', 'sla_due_at']).where('id', '=', a.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'Pending', service_order_id: null, ...reasonBefore });
    expect((await auditOf(t, a.id)).map((e) => e.action)).toEqual(['alert.create-order', 'alert.undo']);
    expect(await outboxFor([a.id])).toEqual([]);
  });

  it("an order's cancellation undone: the order is open again with its team, its alerts linked to it again", async () => {
    const a = await makeAlert(t.rt, { tenantId: curitiba, externalSystemId: hooked.id, status: 'Linked', ...CURITIBA });
    const before = await t.rt.db.selectFrom('service_order').select(['status', 'closed_at', 'team_id']).where('id', '=', a.serviceOrderId!).executeTakeFirstOrThrow();
    const res = await undoable(`/service-orders/${a.serviceOrderId}/cancel`, { reason: 'aberta por engano' });
    expect(res.status).toBe(200);
    const ticket = ticketOf(res);
    expect((await t.rt.db.selectFrom('alert').select('status').where('id', '=', a.id).executeTakeFirstOrThrow()).status).toBe('Pending');
    expect((await undo(ticket.actionId)).status).toBe(200);
    expect(await t.rt.db.selectFrom('service_order').select(['status', 'closed_at', 'team_id']).where('id', '=', a.serviceOrderId!).executeTakeFirstOrThrow()).toEqual(before);
    expect(await t.rt.db.selectFrom('alert').select(['status', 'service_order_id']).where('id', '=', a.id).executeTakeFirstOrThrow()).toEqual({ status: 'Linked', service_order_id: a.serviceOrderId });
    expect((await auditOf(t, a.serviceOrderId!)).map((e) => e.action)).toEqual(['service-order.cancel', 'service-order.undo']);
    expect((await outboxFor([a.id])).filter((e) => e.event_type === 'ServiceOrder.Cancelled')).toEqual([]);
  });

  it('a reclassify undone restores reason, priority and deadline', async () => {
    const a = await pending(polled.id, 'Rua Mateus Leme');
    const before = await t.rt.db.selectFrom('alert').select(['reason_code', 'priority', 'sla_due_at']).where('id', '=', a.id).executeTakeFirstOrThrow();
    const res = await undoable(`/alerts/${a.id}/reclassify`, { reasonCode: 'LAMP_OUT' });
    expect(res.status).toBe(200);
    expect((await undo(ticketOf(res).actionId)).status).toBe(200);
    expect(await t.rt.db.selectFrom('alert').select(['reason_code', 'priority', 'sla_due_at']).where('id', '=', a.id).executeTakeFirstOrThrow()).toEqual(before);
  });
});

describe('without undo', () => {
  it('the event is held for the window, then arrives once by webhook and in the events page; undo is then 409', async () => {
    const a = await pending(hooked.id, 'Alameda Dr. Carlos de Carvalho');
    const b = await pending(polled.id, 'Rua Visconde de Guarapuava');
    const res = await undoable('/alerts/bulk', { tenantId: curitiba, alertIds: [a.id, b.id], action: 'create-order' });
    expect(res.status).toBe(200);
    const ticket = ticketOf(res);
    expect(receivedAbout(a.id)).toEqual([]);
    expect((await eventsPage()).filter((e) => e.alert.id === b.id)).toEqual([]);

    await waitFor(() => receivedAbout(a.id).length > 0, 20_000, 'the held webhook');
    const got = receivedAbout(a.id);
    expect(got).toHaveLength(1);
    expect(got[0]!.at).toBeGreaterThanOrEqual(ticket.until - 50);
    expect((JSON.parse(got[0]!.raw.toString('utf8')) as { eventType: string }).eventType).toBe('ServiceOrder.Created');
    const page = await waitFor(
      async () => {
        const events = (await eventsPage()).filter((e) => e.alert.id === b.id);
        return events.length > 0 ? events : null;
      },
      10_000,
      'the events page',
    );
    expect(page.map((e) => e.eventType)).toEqual(['ServiceOrder.Created']);
    expect(await heldFor([a.id, b.id])).toEqual([]);

    const late = await undo(ticket.actionId);
    expect(late.status).toBe(409);
    expect((await problemOf(late)).type).toBe('urn:lumen:problem:undo-expired');
    expect((await t.rt.db.selectFrom('alert').select('status').where('id', '=', a.id).executeTakeFirstOrThrow()).status).toBe('Linked');
  });

  it('a later action on the same order releases the held events at once, in order, and the undo is refused', async () => {
    const a = await pending(polled.id, 'Rua Brigadeiro Franco');
    const res = await undoable(`/alerts/${a.id}/create-order`, {});
    const ticket = ticketOf(res);
    const order = (await res.json()) as { id: string };
    const assigned = await api(`/service-orders/${order.id}/assign`, { json: { teamId: 'Equipe Boqueirão de Manutenção Noturna' } });
    expect(assigned.status).toBe(200);
    expect(await heldFor([a.id])).toEqual([]);
    const rows = await t.rt.db.selectFrom('event').select(['event_type', 'sequence']).where('alert_id', '=', a.id).orderBy('write_seq').execute();
    expect(rows.map((r) => r.event_type)).toEqual(['ServiceOrder.Created', 'ServiceOrder.StatusChanged']);
    const late = await undo(ticket.actionId);
    expect(late.status).toBe(409);
  });

  it('without Prefer: undo the event goes at once and no undo headers are sent', async () => {
    const a = await pending(polled.id, 'Rua Itupava');
    const res = await api(`/alerts/${a.id}/discard`, { json: { reason: 'duplicado' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('lumen-undo-action')).toBeNull();
    expect((await outboxFor([a.id])).map((e) => e.event_type)).toEqual(['Alert.Cancelled']);
  });
});

describe('tenant isolation', () => {
  it("another city's operator gets 404 for the action, and it stays undoable by Curitiba", async () => {
    const a = await pending(polled.id, 'Rua Chile');
    const res = await undoable(`/alerts/${a.id}/discard`, { reason: 'poste de outra concessionária' });
    const ticket = ticketOf(res);
    const manausDesk = adminFetch(t, (await makeToken(t.rt, { service: true, grants: [{ tenantId: manaus, role: 'city-admin' }] })).token);
    const foreign = await undo(ticket.actionId, manausDesk);
    expect(foreign.status).toBe(404);
    expect((await problemOf(foreign)).type).toBe('urn:lumen:problem:not-found');
    expect((await undo(randomUUID(), manausDesk)).status).toBe(404);
    expect((await undo(ticket.actionId)).status).toBe(200);
  });
});

describe('a restart during the window', () => {
  it('loses nothing and repeats nothing: the held event is delivered once by the next process', async () => {
    const db = await createTestDatabase();
    const rx = await startReceiver();
    const env = { LUMEN_UNDO_WINDOW_SECONDS: String(WINDOW_SECONDS) };
    let app: TestApp | undefined = await startTestApp({ db, env });
    try {
      const desk = adminFetch(app, await adminToken(app, 'restart-desk'));
      const city = (await makeTenant(app.rt, { name: 'Porto Alegre', intakePolicy: 'manual' })).id;
      const p = await makePartner(app.rt, { tenantId: city, scopes: [], transport: 'webhook', webhookUrl: rx.url, webhookSecret: WEBHOOK_SECRET });
      const a = await makeAlert(app.rt, { tenantId: city, externalSystemId: p.id, latitude: -30.0346, longitude: -51.2177, street: 'Rua dos Andradas' });
      const res = await desk(`/alerts/${a.id}/discard`, { json: { reason: 'duplicado' }, headers: { prefer: 'undo' } });
      const ticket = ticketOf(res);
      // The process stops inside the window, before anything was released.
      await app.stop();
      app = undefined;
      expect(rx.received).toHaveLength(0);
      app = await startTestApp({ db, env });
      await waitFor(() => rx.received.length > 0, 20_000, 'the held event after the restart');
      const deliveries = await app.rt.db.selectFrom('webhook_delivery').select(['status']).where('external_system_id', '=', p.id).execute();
      await waitFor(async () => (await app!.rt.db.selectFrom('webhook_delivery').select('status').where('external_system_id', '=', p.id).executeTakeFirst())?.status === 'succeeded', 10_000, 'the delivery settled');
      expect(deliveries).toHaveLength(1);
      expect(rx.received).toHaveLength(1);
      expect(rx.received[0]!.at).toBeGreaterThanOrEqual(ticket.until - 50);
      expect((JSON.parse(rx.received[0]!.raw.toString('utf8')) as { eventType: string }).eventType).toBe('Alert.Cancelled');
      expect(await app.rt.db.selectFrom('held_event').select('id').execute()).toEqual([]);
      expect((await app.rt.db.selectFrom('undoable_action').select('settled').where('id', '=', ticket.actionId).executeTakeFirstOrThrow()).settled).toBe('released');
      const late = await adminFetch(app, await adminToken(app, 'restart-desk-2'))(`/actions/${ticket.actionId}/undo`, { method: 'POST' });
      expect(late.status).toBe(409);
    } finally {
      await app?.stop();
      await rx.close();
      await db.drop();
    }
  });
});
