import { verify } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Event, EventsPage } from '../../generated/partner/types.gen.js';
import { cliJson, startTestApp, type TestApp } from '../support/app.js';
import { makeCityTeam } from '../support/factories.js';
import { adminFetch, adminToken } from '../operations/support.js';
import { emit, makeEventPartner, startReceiver, subjectFor, waitFor, WEBHOOK_SECRET } from './support.js';

let t: TestApp;
let admin: ReturnType<typeof adminFetch>;
let rx: Awaited<ReturnType<typeof startReceiver>>;
let down = false;
beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_WEBHOOK_RETRY_SCHEDULE: '50ms' } });
  admin = adminFetch(t, await adminToken(t, 'events-desk'));
  rx = await startReceiver(() => ({ status: down ? 503 : 200 }));
});
afterAll(async () => {
  await t?.stop();
  await rx?.close();
});

const parsed = (raw: Buffer): Event => JSON.parse(raw.toString('utf8')) as Event;

describe('admin API: webhook deliveries', () => {
  it('shows the delivery log and redelivers one delivery or everything since a time', async () => {
    down = true;
    const p = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    const since = new Date(Date.now() - 1000).toISOString();
    const [ev] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, p)]);
    const page = await waitFor(async () => {
      const res = await admin(`/partners/${p.partner.code}/webhook-deliveries?status=dead`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { deliveries: { id: string; eventId: string; attemptLog: unknown[] }[] };
      return body.deliveries.length === 1 ? body : null;
    }, 10_000, 'a dead delivery');
    const dead = page.deliveries[0]!;
    expect(dead.eventId).toBe(ev!.eventId);
    expect(dead.attemptLog).toHaveLength(2);

    const one = await admin(`/webhook-deliveries/${dead.id}`);
    expect(one.status).toBe(200);
    expect(await one.json()).toMatchObject({ id: dead.id, status: 'dead', lastStatusCode: 503 });

    down = false;
    const res = await admin(`/webhook-deliveries/${dead.id}/redeliver`, { method: 'POST' });
    expect(res.status).toBe(201);
    const again = (await res.json()) as { id: string; redeliveryOf: string; requestedBy: string };
    expect(again).toMatchObject({ redeliveryOf: dead.id, requestedBy: 'admin-token:events-desk' });
    await waitFor(async () => ((await (await admin(`/webhook-deliveries/${again.id}`)).json()) as { status: string }).status === 'succeeded', 5000, 'the redelivery');

    const all = await admin(`/partners/${p.partner.code}/webhook-deliveries/redeliver`, { json: { since } });
    expect(all.status).toBe(200);
    expect(await all.json()).toMatchObject({ partnerCode: p.partner.code, count: 1 });

    expect((await admin('/webhook-deliveries/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    const polling = await makeEventPartner(t.rt);
    expect((await admin(`/partners/${polling.partner.code}/webhook-deliveries/redeliver`, { json: { since } })).status).toBe(409);
    expect((await admin(`/partners/${p.partner.code}/webhook-deliveries?status=lost`)).status).toBe(400);
    expect((await adminFetch(t, undefined)(`/partners/${p.partner.code}/webhook-deliveries`)).status).toBe(401);
  });
});

describe('admin API: one service order\'s deliveries', () => {
  it('lists an order\'s deliveries however many newer ones the partner has, and refuses an id that is not one', async () => {
    down = false;
    const p = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    const older = await subjectFor(t.rt, p);
    const newer = await subjectFor(t.rt, p);
    const [mine] = await emit(t.rt, ['ServiceOrder.Created', older]);
    await emit(t.rt, ['ServiceOrder.Created', newer], ['ServiceOrder.StatusChanged', newer], ['ServiceOrder.Completed', newer]);
    const list = async (query: string) => {
      const res = await admin(`/partners/${p.partner.code}/webhook-deliveries?${query}`);
      expect(res.status).toBe(200);
      return ((await res.json()) as { deliveries: { eventId: string; serviceOrderId: string; status: string }[] }).deliveries;
    };
    await waitFor(async () => (await list('limit=10')).filter((d) => d.status === 'succeeded').length === 4, 10_000, 'four deliveries');
    // The partner's newest two are the newer order's: the older order's delivery is not among them.
    expect((await list('limit=2')).map((d) => d.serviceOrderId)).toEqual([newer.serviceOrderId, newer.serviceOrderId]);
    const ofOrder = await list(`limit=2&serviceOrderId=${older.serviceOrderId}`);
    expect(ofOrder.map((d) => [d.eventId, d.serviceOrderId])).toEqual([[mine!.eventId, older.serviceOrderId]]);
    expect(await list(`serviceOrderId=${newer.serviceOrderId}`)).toHaveLength(3);
    // Another city's order, whose event was delivered to that city's partner: never through this partner.
    const elsewhere = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    const foreign = await subjectFor(t.rt, elsewhere);
    const [theirs] = await emit(t.rt, ['ServiceOrder.Created', foreign]);
    await waitFor(() => rx.received.some((r) => r.headers['x-lumen-event-id'] === theirs!.eventId), 10_000, 'the other city\'s delivery');
    expect(await list(`serviceOrderId=${foreign.serviceOrderId}`)).toEqual([]);
    // The same from the command line.
    const cli = await t.cli('webhook', 'deliveries', '--partner', p.partner.code, '--order', older.serviceOrderId!, '--limit', '2', '--json');
    expect(cli.code).toBe(0);
    expect((cliJson(cli) as { deliveries: { eventId: string }[] }).deliveries.map((d) => d.eventId)).toEqual([mine!.eventId]);

    const bad = await admin(`/partners/${p.partner.code}/webhook-deliveries?serviceOrderId=OS-2026-00001`);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('serviceOrderId');
  });
});

describe('operator actions end to end', () => {
  it('every transition of an order reaches the partner by webhook, in order, and the same by polling', async () => {
    down = false;
    const p = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    const team = await makeCityTeam(t.rt, { tenantId: p.tenantId });
    const pending = await subjectFor(t.rt, p, false);
    const start = rx.received.length;

    const created = await admin(`/alerts/${pending.alert.id}/create-order`, { json: {} });
    expect(created.status, await created.clone().text()).toBe(201);
    const orderId = ((await created.json()) as { id: string }).id;
    for (const [action, body] of [['assign', { teamId: team.id }], ['start', {}], ['complete', {}]] as const) {
      const res = await admin(`/service-orders/${orderId}/${action}`, { json: body });
      expect(res.status, `${action}: ${await res.clone().text()}`).toBe(200);
    }

    const mine = () => rx.received.slice(start).filter((r) => parsed(r.raw).alert.id === pending.alert.id);
    await waitFor(() => mine().length >= 4, 10_000, 'four webhooks');
    const pushed = mine();
    expect(pushed.map((r) => [parsed(r.raw).eventType, parsed(r.raw).sequence, parsed(r.raw).serviceOrder?.status])).toEqual([
      ['ServiceOrder.Created', 1, 'OPEN'],
      ['ServiceOrder.StatusChanged', 2, 'ASSIGNED'],
      ['ServiceOrder.StatusChanged', 3, 'IN_PROGRESS'],
      ['ServiceOrder.Completed', 4, 'COMPLETED'],
    ]);
    expect(parsed(pushed[3]!.raw).alert.status).toBe('Resolved');
    for (const r of pushed) expect(await verify(WEBHOOK_SECRET, r.raw.toString('utf8'), String(r.headers['x-lumen-signature']))).toBe(true);

    const res = await t.fetch('/api/external/events', { apiKey: p.partner.apiKey });
    const polled = ((await res.json()) as EventsPage).events.filter((e) => e.alert.id === pending.alert.id);
    expect(polled).toEqual(pushed.map((r) => parsed(r.raw)));
  });
  it("the operator's note travels in the event: a completion note, a cancel reason, a discard reason; none when none was written", async () => {
    down = false;
    const p = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    const team = await makeCityTeam(t.rt, { tenantId: p.tenantId });
    const [completed, cancelled, discarded] = [await subjectFor(t.rt, p, false), await subjectFor(t.rt, p, false), await subjectFor(t.rt, p, false)];
    const start = rx.received.length;
    const orderOf = async (alertId: string) => ((await (await admin(`/alerts/${alertId}/create-order`, { json: {} })).json()) as { id: string }).id;

    const a = await orderOf(completed.alert.id);
    expect((await admin(`/service-orders/${a}/assign`, { json: { teamId: team.id } })).status).toBe(200);
    expect((await admin(`/service-orders/${a}/complete`, { json: { note: 'Lâmpada trocada por LED 100 W.' } })).status).toBe(200);
    const b = await orderOf(cancelled.alert.id);
    expect((await admin(`/service-orders/${b}/cancel`, { json: { reason: 'Poste da concessionária de energia.' } })).status).toBe(200);
    expect((await admin(`/alerts/${discarded.alert.id}/discard`, { json: { reason: 'Duplicada.' } })).status).toBe(200);

    const ids = new Set([completed.alert.id, cancelled.alert.id, discarded.alert.id]);
    const mine = () => rx.received.slice(start).map((r) => parsed(r.raw)).filter((e) => ids.has(e.alert.id));
    await waitFor(() => mine().length >= 6, 10_000, 'six webhooks');
    expect(mine().map((e) => [e.eventType, e.note])).toEqual([
      ['ServiceOrder.Created', undefined],
      ['ServiceOrder.StatusChanged', undefined],
      ['ServiceOrder.Completed', 'Lâmpada trocada por LED 100 W.'],
      ['ServiceOrder.Created', undefined],
      ['ServiceOrder.Cancelled', 'Poste da concessionária de energia.'],
      ['Alert.Cancelled', 'Duplicada.'],
    ]);
  });
});
