/**
 * A partner's webhook receiver down for longer than the whole retry schedule (the
 * schedule is shortened so "long" takes a second): every delivery ends dead after
 * its last attempt, the events stay readable from GET /api/external/events, and once
 * the receiver is back an operator recovers everything by redelivery, through the
 * CLI for one partner and the admin API for the other, one delivery or "everything
 * since T". Each event then arrives exactly once more, in order per service order.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verify } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Event, EventType } from '../../generated/partner/types.gen.js';
import type { EventSubject } from '../../src/services/events/outbox.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { recordReliability } from '../support/reliability.js';
import { emit, makeEventPartner, subjectFor, waitFor, WEBHOOK_SECRET, type Received } from '../events/support.js';
import { adminFetch, adminToken, cliJson } from '../operations/support.js';

const SECTION = 'Faults: partner receiver down';
/** Four attempts, the last 600 ms after the first: the simulated long outage outlasts them all. */
const SCHEDULE = ['100ms', '200ms', '300ms'];
const ATTEMPTS = SCHEDULE.length + 1;

let t: TestApp;
let down = true;
/** Connections the down receiver reset: one per attempt. */
let resets = 0;
const received: Received[] = [];
let receiver: http.Server;
let url = '';
beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_WEBHOOK_RETRY_SCHEDULE: SCHEDULE.join(',') } });
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ raw: Buffer.concat(chunks), headers: req.headers, at: Date.now(), status: 204 });
      res.writeHead(204).end();
    });
  });
  // Down: every connection is reset before a byte is read, as a dead receiver's host does.
  receiver.on('connection', (socket) => {
    if (!down) return;
    resets++;
    socket.resetAndDestroy();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/lumen`;
});
afterAll(async () => {
  await t?.stop();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

const parsed = (r: Received): Event => JSON.parse(r.raw.toString('utf8')) as Event;

/** Three orders of one partner with a few events each, written as operators' actions would. */
async function history(p: Awaited<ReturnType<typeof makeEventPartner>>): Promise<Event[]> {
  const plan: EventType[][] = [
    ['ServiceOrder.Created', 'ServiceOrder.StatusChanged', 'ServiceOrder.StatusChanged', 'ServiceOrder.Completed'],
    ['ServiceOrder.Created', 'ServiceOrder.StatusChanged', 'ServiceOrder.Cancelled'],
    ['ServiceOrder.Created', 'ServiceOrder.StatusChanged', 'ServiceOrder.StatusChanged'],
  ];
  const subjects: EventSubject[] = [];
  for (let i = 0; i < plan.length; i++) subjects.push(await subjectFor(t.rt, p));
  const events: Event[] = [];
  // Interleaved across orders, one transaction per step.
  for (let step = 0; step < 4; step++) {
    for (let i = 0; i < plan.length; i++) {
      const type = plan[i]![step];
      if (type) events.push(...((await emit(t.rt, [type, subjects[i]!])) as Event[]));
    }
  }
  return events;
}

describe('a receiver down for longer than the retry schedule', () => {
  it('ends every delivery dead, keeps the events readable, and recovers them all by redelivery (CLI and admin API)', async () => {
    const cliPartner = await makeEventPartner(t.rt, { webhookUrl: url });
    const apiPartner = await makeEventPartner(t.rt, { webhookUrl: url });
    const started = Date.now();
    const events = { cli: await history(cliPartner), api: await history(apiPartner) };
    const all = [...events.cli, ...events.api];

    const deliveries = () => t.rt.db.selectFrom('webhook_delivery').selectAll().where('event_id', 'in', all.map((e) => e.eventId)).execute();
    await waitFor(async () => (await deliveries()).every((d) => d.status === 'dead'), 60_000, 'every delivery dead');
    const deadAfterMs = Date.now() - started;
    const dead = await deliveries();
    expect(dead).toHaveLength(all.length);
    for (const d of dead) expect(d).toMatchObject({ status: 'dead', attempts: ATTEMPTS, lease_until: null });
    // Every attempt reached the receiver's host and was reset; nothing got through.
    expect(resets).toBe(all.length * ATTEMPTS);
    expect(received).toEqual([]);
    for (const d of dead) expect(d.last_error).toMatch(/^network: /);

    // The events are all still there to read, with the same ids, in each partner's order.
    for (const [p, written] of [[cliPartner, events.cli], [apiPartner, events.api]] as const) {
      const res = await t.fetch('/api/external/events', { apiKey: p.partner.apiKey });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { events: Event[] }).events).toEqual(written);
    }

    down = false;
    const deadOf = (partnerId: string, eventId: string) => dead.find((d) => d.external_system_id === partnerId && d.event_id === eventId)!;
    // "Since" is inclusive of the event's own write time: the second event onwards.
    const secondWrittenAt = async (eventId: string) => (await t.rt.db.selectFrom('event').select('created_at').where('id', '=', eventId).executeTakeFirstOrThrow()).created_at.toISOString();

    // CLI partner: everything since its second event, then the first one by id.
    const sinceCli = cliJson(await t.cli('webhook', 'redeliver', '--partner', cliPartner.partner.code, '--since', await secondWrittenAt(events.cli[1]!.eventId), '--json'));
    expect(sinceCli.count).toBe(events.cli.length - 1);
    const oneCli = cliJson(await t.cli('webhook', 'redeliver', deadOf(cliPartner.partner.id, events.cli[0]!.eventId).id, '--json'));
    expect(oneCli).toMatchObject({ status: 'pending', redeliveryOf: deadOf(cliPartner.partner.id, events.cli[0]!.eventId).id });

    // Admin API partner: the same through the operators' API.
    const admin = adminFetch(t, await adminToken(t, 'recovery-desk'));
    const sinceApi = await admin(`/partners/${apiPartner.partner.code}/webhook-deliveries/redeliver`, { json: { since: await secondWrittenAt(events.api[1]!.eventId) } });
    expect(sinceApi.status).toBe(200);
    expect(((await sinceApi.json()) as { count: number }).count).toBe(events.api.length - 1);
    const oneApi = await admin(`/webhook-deliveries/${deadOf(apiPartner.partner.id, events.api[0]!.eventId).id}/redeliver`, { method: 'POST' });
    expect(oneApi.status).toBe(201);

    const recovered = () => received;
    await waitFor(() => recovered().length >= all.length, 30_000, 'every event redelivered');
    const redelivered = await t.rt.db.selectFrom('webhook_delivery').selectAll().where('redelivery_of', 'is not', null).where('event_id', 'in', all.map((e) => e.eventId)).execute();
    await waitFor(async () => (await t.rt.db.selectFrom('webhook_delivery').select('status').where('id', 'in', redelivered.map((d) => d.id)).execute()).every((d) => d.status === 'succeeded'), 10_000, 'redeliveries settled');

    // Each event once, with its eventId, the original bytes, signed, attempt 1 again.
    const got = recovered();
    expect(got).toHaveLength(all.length);
    expect(got.map((r) => parsed(r).eventId).sort()).toEqual(all.map((e) => e.eventId).sort());
    for (const r of got) {
      const ev = parsed(r);
      expect(ev).toEqual(all.find((e) => e.eventId === ev.eventId));
      expect(r.headers['x-lumen-event-id']).toBe(ev.eventId);
      expect(r.headers['x-lumen-delivery-attempt']).toBe('1');
      expect(await verify(WEBHOOK_SECRET, r.raw.toString('utf8'), String(r.headers['x-lumen-signature']))).toBe(true);
    }
    // Per order, the redelivered events that went out together ("since") kept their order.
    const bySince = got.filter((r) => ![events.cli[0]!.eventId, events.api[0]!.eventId].includes(parsed(r).eventId));
    const lastSeq = new Map<string, number>();
    for (const r of bySince) {
      const ev = parsed(r);
      const key = ev.serviceOrder?.id ?? ev.alert.id;
      expect(ev.sequence).toBeGreaterThan(lastSeq.get(key) ?? 0);
      lastSeq.set(key, ev.sequence);
    }

    recordReliability(SECTION, { item: 'events written while the receiver was down', figure: String(all.length), detail: `2 partners, 6 service orders; retry schedule ${SCHEDULE.join(', ')} (${ATTEMPTS} attempts)` });
    recordReliability(SECTION, { item: 'attempts made against the down receiver, then dead', figure: `${all.length * ATTEMPTS} attempts, ${dead.length} of ${all.length} deliveries dead after ${deadAfterMs} ms`, detail: 'the receiver host reset every connection: every attempt failed, none got through' });
    recordReliability(SECTION, { item: 'events still readable from GET /api/external/events while dead', figure: `${all.length} of ${all.length}` });
    recordReliability(SECTION, { item: 'events recovered by redelivery, each exactly once', figure: `${got.length} of ${all.length} (lost 0, duplicated 0)`, detail: 'one partner by `lumen webhook redeliver` (by id and --since), the other by the admin API (by id and since)' });
  }, 120_000);
});
