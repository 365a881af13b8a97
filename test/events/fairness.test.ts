/**
 * Webhook fairness: a partner whose receiver never answers holds at most its limit of
 * attempts in flight, so the events of another city go out at once instead of waiting
 * for the hanging attempts to time out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { LEASES_PER_PARTNER_SLOT } from '../../src/jobs/webhook-pump.js';
import { emit, makeEventPartner, startReceiver, subjectFor, waitFor } from './support.js';

const LIMIT = 3;
let t: TestApp;
let dead: Awaited<ReturnType<typeof startReceiver>>;
let healthy: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  dead = await startReceiver(() => ({ status: 0, hang: true }));
  healthy = await startReceiver();
  // A long attempt timeout: the healthy event must not be waiting for the hanging ones to end.
  // No backstop poll within the test: every claim must come from a wake-up of the pump's own.
  t = await startTestApp({ env: { LUMEN_WEBHOOK_TIMEOUT_MS: '10000', LUMEN_WEBHOOK_MAX_IN_FLIGHT_PER_PARTNER: String(LIMIT), LUMEN_WEBHOOK_POLL_MS: '600000' } });
});
afterAll(async () => {
  await dead?.close();
  await healthy?.close();
  await t?.stop();
});

describe('webhook fairness', () => {
  it('a dead receiver with 150 due deliveries holds at most its limit of attempts; another city’s event goes out at once', async () => {
    const stuck = await makeEventPartner(t.rt, { webhookUrl: dead.url });
    const other = await makeEventPartner(t.rt, { webhookUrl: healthy.url });
    // 150 orders of the dead receiver's city, each with an event due now: more than the
    // pump's 64 attempt slots, which a dead receiver would otherwise fill.
    for (let i = 0; i < 15; i++) {
      const items = [];
      for (let j = 0; j < 10; j++) items.push(['ServiceOrder.Created', await subjectFor(t.rt, stuck)] as const);
      await emit(t.rt, ...items);
    }
    await waitFor(() => dead.received.length >= LIMIT, 10_000, 'the dead receiver to be called');
    await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, other)]);
    await waitFor(() => healthy.received.length >= 1, 8_000, 'the other city’s event');
    // It arrived while every hanging attempt was still hanging (none had ended and been
    // recorded), and the dead receiver held no more than its limit of connections; the
    // deliveries leased for it beyond those wait in the pump, within the lease limit.
    const ended = await t.rt.db
      .selectFrom('webhook_attempt')
      .innerJoin('webhook_delivery', 'webhook_delivery.id', 'webhook_attempt.delivery_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('webhook_delivery.external_system_id', '=', stuck.partner.id)
      .executeTakeFirstOrThrow();
    expect(Number(ended.n)).toBe(0);
    expect(dead.received.length).toBeLessThanOrEqual(LIMIT);
    const leased = await t.rt.db
      .selectFrom('webhook_delivery')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('external_system_id', '=', stuck.partner.id)
      .where('lease_until', 'is not', null)
      .executeTakeFirstOrThrow();
    expect(Number(leased.n)).toBeLessThanOrEqual(LIMIT * LEASES_PER_PARTNER_SLOT);
    expect(dead.received.length).toBeLessThanOrEqual(LIMIT);
  });

  it('three dead receivers, each holding its limit and a backlog leased behind it, do not keep another city’s event from going out', async () => {
    const before = healthy.received.length;
    const deadBefore = dead.received.length;
    // Each dead partner's backlog fills its lease limit (LIMIT × LEASES_PER_PARTNER_SLOT),
    // so together they lease more than the pump's batch of 128.
    for (let p = 0; p < 3; p++) {
      const stuck = await makeEventPartner(t.rt, { webhookUrl: dead.url });
      const items = [];
      for (let j = 0; j < LIMIT * LEASES_PER_PARTNER_SLOT + 10; j++) items.push(['ServiceOrder.Created', await subjectFor(t.rt, stuck)] as const);
      await emit(t.rt, ...items);
    }
    await waitFor(() => dead.received.length - deadBefore >= 3 * LIMIT, 10_000, 'every dead receiver to hold its limit');
    const other = await makeEventPartner(t.rt, { webhookUrl: healthy.url });
    await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, other)]);
    await waitFor(() => healthy.received.length - before >= 1, 8_000, 'the other city’s event');
  });

  it('a partner held at its limit gets its next deliveries as soon as attempts end, not at the next poll', async () => {
    const busy = await makeEventPartner(t.rt, { webhookUrl: healthy.url });
    const before = healthy.received.length;
    const items = [];
    // Many times the lease limit: the records of one batch and the claim of the next overlap.
    for (let j = 0; j < 40 * LIMIT; j++) items.push(['ServiceOrder.Created', await subjectFor(t.rt, busy)] as const);
    await emit(t.rt, ...items);
    // One notification wakes the pump once; it may lease LIMIT × LEASES_PER_PARTNER_SLOT at
    // a time, and the poll is ten minutes away: every later batch must follow from the
    // attempts that ended.
    await waitFor(() => healthy.received.length - before >= 40 * LIMIT, 20_000, 'every delivery of the partner at its limit');
  });
});
