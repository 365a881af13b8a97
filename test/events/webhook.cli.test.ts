import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookDeliveryView } from '../../src/services/events/deliveries.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { emit, makeEventPartner, startReceiver, subjectFor, waitFor } from './support.js';

let t: TestApp;
let rx: Awaited<ReturnType<typeof startReceiver>>;
let down = true;
beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_WEBHOOK_RETRY_SCHEDULE: '50ms' } });
  rx = await startReceiver(() => ({ status: down ? 500 : 204 }));
});
afterAll(async () => {
  await t?.stop();
  await rx?.close();
});

function json<T = Record<string, any>>(out: { code: number; stdout: string; stderr: string }): T {
  expect(out.stderr).toBe('');
  expect(out.code).toBe(0);
  const lines = out.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as T;
}

const statusOf = async (id: string) => (await t.rt.db.selectFrom('webhook_delivery').select('status').where('id', '=', id).executeTakeFirst())?.status;

describe('lumen webhook', () => {
  it('lists dead deliveries with every attempt, and redelivers one, then everything since a time', async () => {
    const p = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    const code = p.partner.code;
    const before = new Date(Date.now() - 1000).toISOString();
    const events = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, p)], ['Alert.Cancelled', await subjectFor(t.rt, p, false)]);
    const dead = await waitFor(async () => {
      const out = json<{ partnerCode: string; deliveries: WebhookDeliveryView[] }>(await t.cli('webhook', 'deliveries', '--partner', code, '--status', 'dead', '--json'));
      return out.deliveries.length === 2 ? out : null;
    }, 10_000, 'two dead deliveries');
    expect(dead.partnerCode).toBe(code);
    expect(dead.deliveries.map((d) => d.eventId).sort()).toEqual(events.map((e) => e!.eventId).sort());
    for (const d of dead.deliveries) {
      expect(d).toMatchObject({ status: 'dead', attempts: 2, lastStatusCode: 500, nextAttemptAt: null, redeliveryOf: null, requestedBy: 'event' });
      expect(d.attemptLog.map((a) => [a.attempt, a.succeeded, a.statusCode])).toEqual([[1, false, 500], [2, false, 500]]);
      for (const a of d.attemptLog) {
        expect(a.at).toMatch(/Z$/);
        expect(a.latencyMs).toBeGreaterThanOrEqual(0);
        expect(a.error).toMatch(/^HTTP 500/);
      }
    }
    const human = await t.cli('webhook', 'deliveries', '--partner', code);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('DEAD');
    expect(human.stdout).toContain('#2 ');
    expect(json<{ deliveries: unknown[] }>(await t.cli('webhook', 'deliveries', '--partner', code, '--status', 'succeeded', '--json')).deliveries).toEqual([]);

    // the partner is back: redeliver one
    down = false;
    const target = dead.deliveries[0]!;
    const again = json<WebhookDeliveryView>(await t.cli('webhook', 'redeliver', target.id, '--json'));
    expect(again).toMatchObject({ eventId: target.eventId, redeliveryOf: target.id, status: 'pending', attempts: 0 });
    expect(again.requestedBy).toMatch(/^cli:/);
    await waitFor(async () => (await statusOf(again.id)) === 'succeeded', 5000, 'the redelivery');
    const got = rx.received.filter((r) => r.headers['x-lumen-event-id'] === target.eventId);
    expect(got.map((r) => [r.headers['x-lumen-delivery-attempt'], r.status])).toEqual([['1', 500], ['2', 500], ['1', 204]]);
    const shown = json<WebhookDeliveryView>(await t.cli('webhook', 'show', again.id, '--json'));
    expect(shown).toMatchObject({ id: again.id, status: 'succeeded', attempts: 1 });

    // everything since a time: both events once more
    const all = json<{ count: number; deliveryIds: string[] }>(await t.cli('webhook', 'redeliver', '--partner', code, '--since', before, '--json'));
    expect(all.count).toBe(2);
    for (const id of all.deliveryIds) await waitFor(async () => (await statusOf(id)) === 'succeeded', 5000, 'redelivery since');
    for (const ev of events) expect(rx.received.filter((r) => r.headers['x-lumen-event-id'] === ev!.eventId && r.status === 204).length).toBeGreaterThanOrEqual(1);

    const audit = await t.rt.db.selectFrom('audit_log').select('action').where('entity_id', '=', p.partner.id).where('action', 'like', 'webhook.%').execute();
    expect(audit.map((a) => a.action).sort()).toEqual(['webhook.redeliver', 'webhook.redeliver-since']);
  });

  it('refuses what cannot be done', async () => {
    const polling = await makeEventPartner(t.rt);
    const usage = await t.cli('webhook', 'redeliver');
    expect(usage.code).toBe(2);
    expect((await t.cli('webhook', 'redeliver', '00000000-0000-4000-8000-000000000000', '--partner', 'x', '--since', '2026-01-01T00:00:00Z')).code).toBe(2);
    const missing = await t.cli('webhook', 'redeliver', '00000000-0000-4000-8000-000000000000');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/does not exist/);
    const notWebhook = await t.cli('webhook', 'redeliver', '--partner', polling.partner.code, '--since', '2026-01-01T00:00:00Z');
    expect(notWebhook.code).toBe(1);
    expect(notWebhook.stderr).toMatch(/polling mode/);
    const badStatus = await t.cli('webhook', 'deliveries', '--partner', polling.partner.code, '--status', 'lost');
    expect(badStatus.code).toBe(1);
    expect(badStatus.stderr).toMatch(/status/);
    const unknown = await t.cli('webhook', 'deliveries', '--partner', 'no-such-partner');
    expect(unknown.code).toBe(1);
  });

  it('refuses to redeliver an event whose delivery is still open', async () => {
    const hold = await startReceiver(() => ({ status: 0, hang: true }));
    try {
      const p = await makeEventPartner(t.rt, { webhookUrl: hold.url });
      const [ev] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, p)]);
      const d = await t.rt.db.selectFrom('webhook_delivery').select('id').where('event_id', '=', ev!.eventId).executeTakeFirstOrThrow();
      const out = await t.cli('webhook', 'redeliver', d.id);
      expect(out.code).toBe(1);
      expect(out.stderr).toMatch(/still being delivered/);
    } finally {
      await hold.close();
    }
  });
});
