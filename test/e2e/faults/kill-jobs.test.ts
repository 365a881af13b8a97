/**
 * kill -9 of `lumen serve` while it retries webhooks and while it polls a partner.
 *
 * Webhooks: events whose deliveries are failing and waiting for their next attempt,
 * one attempt in flight (the receiver holds it unanswered), events written while the
 * service is down. After the restart every event is delivered with its eventId, the
 * attempts go on where they were, and nothing acknowledged with a 2xx is sent again.
 *
 * Polling: the kill lands in the middle of a batch (a photo of item 30 is being
 * downloaded); after the restart the batch is read again from the cursor, which had
 * not moved past the last complete batch: every request becomes one alert and one
 * order, the cursor ends at the partner's last nextSince.
 *
 * Two waits are simulated rather than sat out, and only those: the lease of the
 * attempt the dead process held (60 s), after which a delivery worker takes it again
 * (the minute sweep wakes them); and the poll job's heartbeat silence (30 s), after
 * which pg-boss's supervisor hands the poll to a live process. The test ages those
 * timestamps and runs the sweeper and the supervisor once; the restarted process does
 * the rest.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Event, EventType } from '../../../generated/partner/types.gen.js';
import { findPollState } from '../../../src/db/repositories/partner-poll.repository.js';
import type { Runtime } from '../../../src/runtime.js';
import { sweepStrandedDeliveries } from '../../../src/services/events/maintenance.js';
import type { EventSubject } from '../../../src/services/events/outbox.js';
import { reconcilePartnerPolls } from '../../../src/services/partner-poll/service.js';
import { recordReliability } from '../../support/reliability.js';
import { emit, makeEventPartner, subjectFor } from '../../events/support.js';
import { makePollingPartner, request, startPartnerStub, type PartnerStub } from '../../polling/support.js';
import { createDatabase, freePort, Lumen, openTestRuntime, removeTempDirs, requireExecutable, serveEnv, until } from './support.js';

const SECTION = 'Faults: kill -9 during webhook retries and partner polling';

let db: Awaited<ReturnType<typeof createDatabase>>;
let rt: Runtime;
let lumen: Lumen;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  requireExecutable();
  db = await createDatabase('kill_jobs');
  rt = await openTestRuntime(db.url);
  lumen = new Lumen(
    'lumen',
    await freePort(),
    serveEnv(db.url, {
      LUMEN_WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s,1s,1s',
      // A photo download that outlasts the kill.
      LUMEN_ATTACHMENT_ATTEMPT_TIMEOUT_MS: '60000',
      LUMEN_ATTACHMENT_TOTAL_TIMEOUT_MS: '120000',
    }),
  );
  lumen.start();
  await lumen.waitReady();
});
afterAll(async () => {
  await lumen?.stop().catch(() => {});
  for (const close of closers.reverse()) await close().catch(() => {});
  await rt?.close();
  await db?.drop();
  removeTempDirs();
});

interface Hit {
  eventId: string;
  attempt: number;
  /** 0 while held unanswered. */
  status: number;
  at: number;
  body: string;
}

describe('kill -9 during webhook retries', () => {
  it('delivers every event after the restart, with its eventId, continuing the attempts, never again after a 2xx', async () => {
    const hits: Hit[] = [];
    const held: http.ServerResponse[] = [];
    let heldEvent: string | null = null;
    const rx = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const hit: Hit = { eventId: String(req.headers['x-lumen-event-id']), attempt: Number(req.headers['x-lumen-delivery-attempt']), status: 0, at: Date.now(), body: Buffer.concat(chunks).toString('utf8') };
        hits.push(hit);
        // The first event's second attempt is held: it is in flight when the service dies.
        if (heldEvent === null && hit.attempt === 2) heldEvent = hit.eventId;
        if (hit.eventId === heldEvent && hit.attempt === 2 && held.length === 0) return void held.push(res);
        hit.status = hit.attempt <= 2 ? 500 : 204;
        res.writeHead(hit.status).end();
      });
    });
    await new Promise<void>((resolve) => rx.listen(0, '127.0.0.1', resolve));
    closers.push(async () => {
      for (const res of held) res.destroy();
      rx.closeAllConnections();
      await new Promise((resolve) => rx.close(resolve));
    });
    const p = await makeEventPartner(rt, { webhookUrl: `http://127.0.0.1:${(rx.address() as AddressInfo).port}/hooks` });

    // Ten orders, two events each (the second waits for the first: one order, one at a time).
    const subjects: EventSubject[] = [];
    for (let i = 0; i < 10; i++) subjects.push(await subjectFor(rt, p));
    const written: Event[] = [];
    for (const type of ['ServiceOrder.Created', 'ServiceOrder.StatusChanged'] as EventType[]) {
      for (const s of subjects) written.push(...((await emit(rt, [type, s])) as Event[]));
    }
    const openDeliveries = () => rt.db.selectFrom('webhook_delivery').selectAll().where('external_system_id', '=', p.partner.id).execute();
    // Kill when one attempt is held and the others are failing, waiting for their next try.
    await until(async () => held.length === 1 && (await openDeliveries()).filter((d) => d.status === 'failed').length >= 10, 30_000, 'retries under way with one attempt in flight');
    await lumen.kill9();
    // The database's clock at the kill: every lease the dead process took ends by this plus 60 s.
    const killedDbAt = (await sql<{ now: Date }>`SELECT now() AS now`.execute(rt.db)).rows[0]!.now;
    const atKill = await openDeliveries();
    const okBeforeKill = new Set(hits.filter((h) => h.status === 204).map((h) => h.eventId));
    const inFlightAtKill = new Set(atKill.filter((d) => d.lease_until && d.lease_until > killedDbAt).map((d) => d.event_id));

    // Written while the service is down (as `lumen order ...` would).
    for (let i = 0; i < 4; i++) written.push(...((await emit(rt, ['ServiceOrder.Created', await subjectFor(rt, p)])) as Event[]));

    lumen.start();
    const restartMs = await lumen.waitReady();
    // The dead process's leases (taken before the kill; the new process's end later):
    // expired as 60 s would have them, then the minute sweep run once.
    const aged = await sql<{ id: string }>`
      UPDATE webhook_delivery SET lease_until = now() - interval '1 second', next_attempt_at = now() - interval '31 seconds'
      WHERE external_system_id = ${p.partner.id} AND status IN ('pending', 'failed')
        AND lease_until > now() AND lease_until <= ${killedDbAt}::timestamptz + interval '60 seconds'
      RETURNING id`.execute(rt.db);
    expect(aged.rows.length).toBeGreaterThanOrEqual(1);
    await sweepStrandedDeliveries(rt);

    const delivered = () => new Set(hits.filter((h) => h.status === 204).map((h) => h.eventId));
    await until(() => written.every((e) => delivered().has(e.eventId)), 60_000, 'every event delivered');
    await until(async () => (await openDeliveries()).every((d) => d.status === 'succeeded'), 10_000, 'every delivery settled');

    // The at-least-once window: a 2xx answered just before the kill whose outcome was not yet recorded.
    const window = new Set(atKill.filter((d) => d.status !== 'succeeded' && okBeforeKill.has(d.event_id!)).map((d) => d.event_id));
    const twice = written.filter((e) => hits.filter((h) => h.eventId === e.eventId && h.status === 204).length > 1).map((e) => e.eventId);
    expect(twice.filter((id) => !window.has(id))).toEqual([]);
    for (const e of written) {
      const mine = hits.filter((h) => h.eventId === e.eventId);
      // Same bytes on every attempt, the envelope that was written.
      expect(new Set(mine.map((h) => h.body)).size).toBe(1);
      expect(JSON.parse(mine[0]!.body)).toEqual(e);
      // Attempts numbered on from where they were (1, 2 failing, 3 accepted); an attempt
      // in flight at the kill is made again under its number, nothing else repeats.
      const numbers = mine.map((h) => h.attempt);
      if (e.eventId === heldEvent) expect(numbers).toEqual([1, 2, 2, 3]);
      else if (inFlightAtKill.has(e.eventId)) expect(numbers.filter((x, i) => numbers[i - 1] !== x), e.eventId).toEqual([1, 2, 3]);
      else expect(numbers, e.eventId).toEqual([1, 2, 3]);
    }
    // Per order, the second event went out after the first was acknowledged.
    for (const s of subjects) {
      const [first, second] = written.filter((e) => e.serviceOrder?.id === s.serviceOrderId);
      const okAt = (id: string) => hits.find((h) => h.eventId === id && h.status === 204)!.at;
      expect(hits.find((h) => h.eventId === second!.eventId)!.at).toBeGreaterThanOrEqual(okAt(first!.eventId));
    }

    recordReliability(SECTION, { item: 'webhook events written around the kill', figure: `${written.length}`, detail: `${written.length - 4} before the kill (20 failing and retrying, 1 attempt in flight), 4 while the service was down` });
    recordReliability(SECTION, { item: 'events delivered after the restart, with their eventId', figure: `${written.length} of ${written.length}`, detail: `${hits.length} attempts in all; restart to /readyz 200 in ${restartMs} ms; attempts numbered on from where they stopped` });
    recordReliability(SECTION, { item: 'events delivered again after a 2xx', figure: `${twice.length}`, detail: `beyond the documented at-least-once window (a 2xx whose outcome the killed process had not recorded): 0; in that window at this kill: ${window.size}` });
  }, 120_000);
});

describe('kill -9 during a partner poll', () => {
  let stub: PartnerStub;

  it('reads the interrupted batch again from the cursor: every request once, one order each, the cursor at the end', async () => {
    const ITEMS = 60;
    const PAGE = 20;
    const from = Date.parse('2026-03-14T12:00:00.000Z');
    const items = Array.from({ length: ITEMS }, (_, i) => request(`POLL-KILL-${String(i + 1).padStart(3, '0')}`, new Date(from + (i + 1) * 1000).toISOString()));
    stub = await startPartnerStub();
    closers.push(() => stub.close());
    items[29] = { ...items[29], attachments: [{ type: 'photo', url: `${stub.base}/photos/item-30.jpg`, contentType: 'image/jpeg', filename: 'item-30.jpg' }] };
    // Pages of 20 ordered by requestedAt, since exclusive of what was already handed out.
    stub.handle((call) => {
      const since = call.since ? Date.parse(call.since) : -Infinity;
      const rest = items.filter((it) => Date.parse(it.requestedAt as string) > since);
      const page = rest.slice(0, PAGE);
      return { json: { items: page, nextSince: page.length ? page.at(-1)!.requestedAt : call.since, hasMore: rest.length > PAGE } };
    });
    let serving = false;
    const hanging: http.ServerResponse[] = [];
    stub.handleOther((_path, res) => {
      if (!serving) return void hanging.push(res);
      res.setHeader('content-type', 'image/jpeg');
      res.end(Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64, 1)]));
    });

    const p = await makePollingPartner(rt, stub.url, { interval: 1 });
    await reconcilePartnerPolls(rt);
    await until(() => stub.otherCalls.length >= 1, 30_000, 'the download of item 30');
    const stored = async () => (await rt.db.selectFrom('alert').select('protocol_number').where('external_system_id', '=', p.id).execute()).map((a) => a.protocol_number);
    await lumen.kill9();
    for (const res of hanging) res.destroy();
    const atKill = await stored();
    const cursorAtKill = (await findPollState(rt.db, p.id))?.cursor?.toISOString() ?? null;
    // The first page is stored and confirmed; the second was being stored.
    expect(cursorAtKill).toBe(items[PAGE - 1]!.requestedAt);
    expect(atKill.length).toBeGreaterThanOrEqual(PAGE);
    expect(atKill.length).toBeLessThan(30);
    const callsBefore = stub.calls.length;

    serving = true;
    lumen.start();
    await lumen.waitReady();
    // The dead process's poll job: heartbeat silence of 30 s simulated, one supervisor pass.
    const stale = await sql`UPDATE pgboss.job SET heartbeat_on = now() - interval '1 hour' WHERE name = 'partner-poll' AND singleton_key = ${p.id} AND state = 'active'`.execute(rt.db);
    expect(Number(stale.numAffectedRows)).toBe(1);
    const supervisor = new PgBoss({ connectionString: db.url, schema: 'pgboss', supervise: false, schedule: false, migrate: false, monitorIntervalSeconds: 1 });
    supervisor.on('error', () => {});
    await supervisor.start();
    await supervisor.supervise('partner-poll');
    await supervisor.stop({ graceful: false, close: true });
    const recoveredAt = Date.now();

    const last = items.at(-1)!.requestedAt as string;
    await until(async () => (await findPollState(rt.db, p.id))?.cursor?.toISOString() === last && (await stored()).length === ITEMS, 60_000, 'every request stored and the cursor at the end');
    const recoveryMs = Date.now() - recoveredAt;
    const alerts = await rt.db.selectFrom('alert').select(['protocol_number', 'service_order_id', 'status']).where('external_system_id', '=', p.id).execute();
    expect(alerts).toHaveLength(ITEMS);
    expect(new Set(alerts.map((a) => a.protocol_number)).size).toBe(ITEMS);
    expect(new Set(alerts.map((a) => a.service_order_id)).size).toBe(ITEMS);
    expect(alerts.every((a) => a.status === 'Linked')).toBe(true);
    const orders = await rt.db.selectFrom('service_order').select('id').where('tenant_id', '=', p.tenantId).execute();
    expect(orders).toHaveLength(ITEMS);
    // After the restart, reading resumed from the kept cursor.
    expect(stub.calls[callsBefore]!.since).toBe(cursorAtKill);
    const photo = await rt.db
      .selectFrom('alert_attachment')
      .innerJoin('alert', 'alert.id', 'alert_attachment.alert_id')
      .select('alert_attachment.success')
      .where('alert.protocol_number', '=', 'POLL-KILL-030')
      .where('alert.external_system_id', '=', p.id)
      .execute();
    expect(photo.map((x) => x.success)).toEqual([true]);

    recordReliability(SECTION, { item: 'partner requests polled across a kill in the middle of a batch', figure: `${ITEMS} of ${ITEMS} stored once, ${orders.length} orders`, detail: `${atKill.length} stored when killed; the cursor had stayed at the last complete batch and reading resumed there` });
    recordReliability(SECTION, { item: 'poll handed to the restarted process after the heartbeat timeout (simulated)', figure: `${recoveryMs} ms to the last request stored` });
  }, 120_000);
});
