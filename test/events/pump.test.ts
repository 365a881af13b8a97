import { randomUUID } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import type { AddressInfo } from 'node:net';
import { afterAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { acquirePermits } from '../../src/db/repositories/webhook-permit.repository.js';
import { WebhookPump } from '../../src/jobs/webhook-pump.js';
import { createLogger } from '../../src/lib/logger.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { testEnv } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { emit, makeEventPartner, startReceiver, subjectFor, waitFor } from './support.js';

let db: TestDatabase | undefined;
let rt: Runtime | undefined;
let rx: http.Server | undefined;
afterAll(async () => {
  rx?.closeAllConnections();
  await new Promise((resolve) => (rx ? rx.close(resolve) : resolve(undefined)));
  await rt?.close();
  await db?.drop();
});

it('a stopping delivery worker finishes and records the attempts in flight, and gives back the leases of those it had not started', async () => {
  db = await createTestDatabase();
  // No workers of its own: the only delivery worker is the one under test.
  rt = await openRuntime(loadConfig(testEnv(db.url)), createLogger('silent'), { migrate: false, work: false, poolSize: 4 });
  const held: http.ServerResponse[] = [];
  rx = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => held.push(res));
  });
  await new Promise<void>((resolve) => rx!.listen(0, '127.0.0.1', resolve));
  const p = await makeEventPartner(rt, { webhookUrl: `http://127.0.0.1:${(rx.address() as AddressInfo).port}/hooks` });
  // Three orders: nothing orders them against each other.
  for (let i = 0; i < 3; i++) await emit(rt, ['ServiceOrder.Created', await subjectFor(rt, p)]);
  const deliveries = () => rt!.db.selectFrom('webhook_delivery').select(['id', 'status', 'attempts', 'lease_until']).where('external_system_id', '=', p.partner.id).execute();

  // One attempt at a time: one in flight (held by the receiver), the other two leased and waiting.
  const pump = await WebhookPump.start(rt, { url: db.url, concurrency: 1, pollMs: 60_000 });
  await waitFor(async () => held.length === 1 && (await deliveries()).filter((d) => d.lease_until !== null).length === 3, 10_000, 'one attempt in flight and two waiting');

  const stopped = pump.stop();
  await waitFor(async () => (await deliveries()).filter((d) => d.lease_until !== null).length === 1, 10_000, 'the waiting leases given back');
  held[0]!.writeHead(204).end();
  await stopped;

  const after = await deliveries();
  expect(after.filter((d) => d.status === 'succeeded').map((d) => [d.attempts, d.lease_until])).toEqual([[1, null]]);
  expect(after.filter((d) => d.status === 'pending').map((d) => [d.attempts, d.lease_until])).toEqual([
    [0, null],
    [0, null],
  ]);
  expect(held).toHaveLength(1);
});

it('a fan-out to one partner claims again only when there is a reason to: a claim that came back short is not followed by an empty one', async () => {
  db ??= await createTestDatabase();
  rt ??= await openRuntime(loadConfig(testEnv(db.url)), createLogger('silent'), { migrate: false, work: false, poolSize: 4 });
  const receiver = await startReceiver();
  // The rows each claim of the pump returned, in order.
  const claims: number[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const result = (original as (...a: unknown[]) => unknown).apply(this, args);
    const first = args[0] as string | { text?: string } | undefined;
    const text = typeof first === 'string' ? first : first?.text;
    if (text?.includes('lumen_claim_webhook_deliveries') && result instanceof Promise) {
      result.then((r: pg.QueryResult) => claims.push(r.rows.length), () => {});
    }
    return result;
  } as typeof pg.Client.prototype.query;
  try {
    // Nothing left from the test before: this partner's deliveries are the only ones.
    await rt.db.deleteFrom('webhook_delivery').execute();
    const p = await makeEventPartner(rt, { webhookUrl: receiver.url });
    const items = [];
    for (let i = 0; i < 400; i++) items.push(['ServiceOrder.Created', await subjectFor(rt, p)] as const);
    await emit(rt, ...items);
    // 64 attempts in flight and claims of 128 (the defaults); the partner may hold 128
    // leases here and is claimed for again once fewer than 64 are left. No poll inside the test.
    const pump = await WebhookPump.start(rt, { url: db.url, concurrency: 64, pollMs: 600_000 });
    try {
      await waitFor(async () => {
        const open = await rt!.db.selectFrom('webhook_delivery').select((eb) => eb.fn.countAll<number>().as('n')).where('external_system_id', '=', p.partner.id).where('status', '!=', 'succeeded').executeTakeFirstOrThrow();
        return Number(open.n) === 0;
      }, 30_000, 'every delivery made');
    } finally {
      await pump.stop();
    }
    expect(receiver.received).toHaveLength(400);
    expect(claims.reduce((a, b) => a + b, 0)).toBe(400);
    // The first claim is full (nothing held yet), so one empty claim may follow it, and
    // one at the end finds nothing left; a claim that came back short of 128 is followed
    // by a record, never by a claim that finds the partner at its limit.
    expect(claims.filter((n) => n === 0).length).toBeLessThanOrEqual(2);
    expect(claims.length).toBeLessThanOrEqual(claims.filter((n) => n > 0).length + 2);
  } finally {
    pg.Client.prototype.query = original;
    await receiver.close();
  }
});

it("a partner whose permits another instance holds is claimed for again when they lapse, also when the backoff's timer fires before the time it noted", async () => {
  db ??= await createTestDatabase();
  rt ??= await openRuntime(loadConfig(testEnv(db.url)), createLogger('silent'), { migrate: false, work: false, poolSize: 4 });
  await rt.db.deleteFrom('webhook_delivery').execute();
  const receiver = await startReceiver();
  const realNow = Date.now;
  try {
    const p = await makeEventPartner(rt, { webhookUrl: receiver.url });
    // Another instance holds every permit of the partner, for 1.5 s more.
    const limit = rt.config.webhookMaxInFlightPerPartner;
    expect((await acquirePermits(rt.db, randomUUID(), new Map([[p.partner.id, limit]]), limit, 1500)).get(p.partner.id)).toBe(limit);
    await emit(rt, ['ServiceOrder.Created', await subjectFor(rt, p)]);
    // The clock reads 100 ms ahead while the pump first backs off, then not: its timer,
    // counted from the event loop's clock, fires before the end of the backoff it noted,
    // as it can by a few ms on a busy machine. No poll inside the test.
    Date.now = () => realNow() + 100;
    const pump = await WebhookPump.start(rt, { url: db.url, concurrency: 8, pollMs: 600_000 });
    try {
      await waitFor(() => pump.state().backingOff.includes(p.partner.id), 10_000, 'the pump backing off');
      Date.now = realNow;
      await waitFor(() => receiver.received.length === 1, 15_000, 'the event delivered once the other instance’s permits lapsed');
    } finally {
      Date.now = realNow;
      await pump.stop();
    }
  } finally {
    Date.now = realNow;
    await receiver.close();
  }
});
