import { verify } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Event, EventsPage } from '../../generated/partner/types.gen.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { emit, makeEventPartner, startReceiver, subjectFor, waitFor, WEBHOOK_SECRET, type Received, type Reply } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,400ms', LUMEN_WEBHOOK_TIMEOUT_MS: '500' } });
});
afterAll(async () => {
  await t?.stop();
});

const receivers: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});
async function receiver(...args: Parameters<typeof startReceiver>) {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}

const header = (r: Received, name: string): string => String(r.headers[name]);
const parsed = (r: Received): Event => JSON.parse(r.raw.toString('utf8')) as Event;

async function deliveryOf(eventId: string) {
  return t.rt.db.selectFrom('webhook_delivery').selectAll().where('event_id', '=', eventId).orderBy('position').execute();
}
async function attemptsOf(deliveryId: string) {
  return t.rt.db.selectFrom('webhook_attempt').selectAll().where('delivery_id', '=', deliveryId).orderBy('attempt').execute();
}

describe('webhook delivery', () => {
  it('posts the stored envelope bytes, signed so that an independent implementation verifies them, within milliseconds of the commit', async () => {
    const rx = await receiver();
    const p = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    for (let i = 0; i < 5; i++) {
      const committedAt = Date.now();
      const [ev] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, p)]);
      const got = await waitFor(() => rx.received.find((r) => header(r, 'x-lumen-event-id') === ev!.eventId), 5000, 'the webhook');
      // LISTEN/NOTIFY pick-up: far below the queue's 2 s backstop poll, every time
      expect(got.at - committedAt).toBeLessThan(1000);

      const stored = await t.rt.db.selectFrom('event').select('body').where('id', '=', ev!.eventId).executeTakeFirstOrThrow();
      expect(got.raw.toString('utf8')).toBe(stored.body);
      expect(parsed(got)).toEqual(ev);
      expect(await verify(WEBHOOK_SECRET, got.raw.toString('utf8'), header(got, 'x-lumen-signature'))).toBe(true);
      expect(await verify('another-secret-entirely', got.raw.toString('utf8'), header(got, 'x-lumen-signature'))).toBe(false);
      expect(header(got, 'x-lumen-signature')).toMatch(/^sha256=[0-9a-f]{64}$/);
      expect(header(got, 'content-type')).toBe('application/json');
      expect(header(got, 'x-lumen-event-type')).toBe('ServiceOrder.Created');
      expect(header(got, 'x-lumen-delivery-attempt')).toBe('1');
      expect(header(got, 'x-lumen-timestamp')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    expect(rx.received).toHaveLength(5);
  });

  it('retries a failing receiver (500, 401) with growing delays and the same eventId until a 2xx, then stops', async () => {
    const rx = await receiver((_r, i) => ({ status: [500, 401][i] ?? 204 }));
    const p = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    const [ev] = await emit(t.rt, ['ServiceOrder.Completed', await subjectFor(t.rt, p)]);
    const [delivery] = await waitFor(async () => {
      const d = await deliveryOf(ev!.eventId);
      return d[0]?.status === 'succeeded' ? d : null;
    }, 10_000, 'success');
    expect(rx.received.map((r) => header(r, 'x-lumen-event-id'))).toEqual([ev!.eventId, ev!.eventId, ev!.eventId]);
    expect(rx.received.map((r) => header(r, 'x-lumen-delivery-attempt'))).toEqual(['1', '2', '3']);
    expect(new Set(rx.received.map((r) => r.raw.toString('utf8'))).size).toBe(1);
    const gap1 = rx.received[1]!.at - rx.received[0]!.at;
    const gap2 = rx.received[2]!.at - rx.received[1]!.at;
    expect(gap1).toBeGreaterThanOrEqual(80); // 100 ms -20% jitter
    expect(gap2).toBeGreaterThanOrEqual(160); // 200 ms -20% jitter
    expect(gap2).toBeGreaterThan(gap1);

    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 3, last_status_code: 204, last_error: null });
    const log = await attemptsOf(delivery!.id);
    expect(log.map((a) => [a.attempt, a.succeeded, a.status_code])).toEqual([[1, false, 500], [2, false, 401], [3, true, 204]]);
    expect(log[0]!.error).toMatch(/^HTTP 500/);
    expect(log[0]!.next_attempt_at).not.toBeNull();
    expect(log[2]!.next_attempt_at).toBeNull();
    for (const a of log) expect(a.latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('times out a hanging receiver and retries it', async () => {
    const rx = await receiver((_r, i) => (i === 0 ? { status: 0, hang: true } : { status: 200 }));
    const p = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    const [ev] = await emit(t.rt, ['ServiceOrder.StatusChanged', await subjectFor(t.rt, p)]);
    const [delivery] = await waitFor(async () => {
      const d = await deliveryOf(ev!.eventId);
      return d[0]?.status === 'succeeded' ? d : null;
    }, 10_000, 'success after a timeout');
    const log = await attemptsOf(delivery!.id);
    expect(log.map((a) => a.succeeded)).toEqual([false, true]);
    expect(log[0]!.error).toMatch(/^timeout/);
    expect(log[0]!.latency_ms).toBeGreaterThanOrEqual(450);
    expect(rx.received.map((r) => header(r, 'x-lumen-delivery-attempt'))).toEqual(['1', '2']);
  });

  it('honours Retry-After, does not follow redirects, and ends as dead after the last attempt', async () => {
    const rx = await receiver((_r, i): Reply => (i === 0 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 302, headers: { location: 'http://127.0.0.1:1/elsewhere' } }));
    const p = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    const [ev] = await emit(t.rt, ['ServiceOrder.Cancelled', await subjectFor(t.rt, p)]);
    const [delivery] = await waitFor(async () => {
      const d = await deliveryOf(ev!.eventId);
      return d[0]?.status === 'dead' ? d : null;
    }, 15_000, 'the delivery to die');
    expect(rx.received).toHaveLength(4); // 1 + the 3 steps of the schedule
    expect(rx.received[1]!.at - rx.received[0]!.at).toBeGreaterThanOrEqual(1000);
    expect(delivery).toMatchObject({ status: 'dead', attempts: 4, last_status_code: 302 });
    expect(delivery!.finished_at).not.toBeNull();
    const log = await attemptsOf(delivery!.id);
    expect(log[3]!.error).toMatch(/redirect not followed/);
    expect(log[3]!.next_attempt_at).toBeNull();
  });

  it('delivers the events of one order one at a time, in order, while other orders go on', async () => {
    let failFirst = 2;
    let failOrderId: string | null = null;
    const rx = await receiver((r) => {
      const ev = parsed(r);
      if (ev.serviceOrder?.id === failOrderId && ev.sequence === 1 && failFirst > 0) {
        failFirst--;
        return { status: 500 };
      }
      return { status: 204 };
    });
    const p = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    const order = await subjectFor(t.rt, p);
    const other = await subjectFor(t.rt, p);
    failOrderId = order.serviceOrderId;
    const [first] = await emit(t.rt, ['ServiceOrder.Created', order]);
    await waitFor(() => rx.received.length >= 1, 5000, 'the first attempt');
    const [second] = await emit(t.rt, ['ServiceOrder.StatusChanged', order]);
    const [third] = await emit(t.rt, ['ServiceOrder.Completed', order]);
    const [unrelated] = await emit(t.rt, ['ServiceOrder.Created', other]);
    await waitFor(async () => (await deliveryOf(third!.eventId))[0]?.status === 'succeeded', 10_000, 'the whole order');

    const forOrder = rx.received.filter((r) => parsed(r).serviceOrder?.id === order.serviceOrderId);
    expect(forOrder.map((r) => [parsed(r).sequence, r.status])).toEqual([[1, 500], [1, 500], [1, 204], [2, 204], [3, 204]]);
    expect(forOrder.map((r) => header(r, 'x-lumen-event-id'))).toEqual([first, first, first, second, third].map((e) => e!.eventId));
    // the other order was not held back by the retries of the first
    const unrelatedAt = rx.received.find((r) => header(r, 'x-lumen-event-id') === unrelated!.eventId)!.at;
    expect(unrelatedAt).toBeLessThan(forOrder[2]!.at);
  });

  it('sends the same event by webhook and by polling (a webhook-mode partner may read /events)', async () => {
    const rx = await receiver();
    const p = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    const [ev] = await emit(t.rt, ['Alert.Cancelled', await subjectFor(t.rt, p, false)]);
    const pushed = await waitFor(() => rx.received[0], 5000, 'the webhook');
    const res = await t.fetch('/api/external/events', { apiKey: p.partner.apiKey });
    expect(res.status).toBe(200);
    const page = (await res.json()) as EventsPage;
    expect(page.events).toHaveLength(1);
    expect(page.events[0]).toEqual(parsed(pushed));
    expect(page.events[0]).toEqual(ev);
  });

  it('writes no delivery for a polling-mode partner or an unsubscribed type', async () => {
    const polling = await makeEventPartner(t.rt);
    const [a] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, polling)]);
    expect(await deliveryOf(a!.eventId)).toEqual([]);
    const rx = await receiver();
    const p = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    await t.rt.db.updateTable('external_system').set({ event_types: ['ServiceOrder.Completed'] }).where('id', '=', p.partner.id).execute();
    const [b] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, p)]);
    expect(b).toBeNull();
    expect(await t.rt.db.selectFrom('webhook_delivery').select('id').where('external_system_id', '=', p.partner.id).execute()).toEqual([]);
  });
});
