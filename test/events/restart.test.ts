import { afterAll, expect, it } from 'vitest';
import type { Event } from '../../generated/partner/types.gen.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { openRuntime } from '../../src/runtime.js';
import { sweepStrandedDeliveries } from '../../src/services/events/maintenance.js';
import { startTestApp, testEnv, type TestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { emit, makeEventPartner, startReceiver, subjectFor, waitFor } from './support.js';

const ENV = { LUMEN_WEBHOOK_RETRY_SCHEDULE: '400ms,400ms,400ms,400ms' };
let db: TestDatabase;
let app: TestApp | undefined;
let rx: Awaited<ReturnType<typeof startReceiver>> | undefined;

afterAll(async () => {
  await app?.stop();
  await rx?.close();
  await db?.drop();
});

it('loses nothing and repeats nothing after a 2xx when the service restarts in the middle of retries', async () => {
  db = await createTestDatabase();
  // The order whose first two attempts fail, named before its event is written: the
  // attempt may reach the receiver before the writer's commit returns.
  let failingOrder: string | null = null;
  let failures = 0;
  rx = await startReceiver((r) => {
    const order = (JSON.parse(r.raw.toString('utf8')) as Event).serviceOrder?.id;
    if (order !== undefined && order === failingOrder && failures < 2) {
      failures++;
      return { status: 500 };
    }
    return { status: 204 };
  });
  app = await startTestApp({ db, env: ENV });
  const p = await makeEventPartner(app.rt, { webhookUrl: rx.url });
  const statusOf = async (eventId: string) => (await app!.rt.db.selectFrom('webhook_delivery').select('status').where('event_id', '=', eventId).executeTakeFirst())?.status;

  // Two events delivered before the restart...
  const delivered = await emit(app.rt, ['ServiceOrder.Created', await subjectFor(app.rt, p)], ['ServiceOrder.Created', await subjectFor(app.rt, p)]);
  for (const ev of delivered) await waitFor(async () => (await statusOf(ev!.eventId)) === 'succeeded', 5000, 'the first deliveries');

  // ...and one whose first attempt fails just before the service stops.
  const retried = await subjectFor(app.rt, p);
  failingOrder = retried.serviceOrderId;
  const [pending] = await emit(app.rt, ['ServiceOrder.StatusChanged', retried]);
  await waitFor(async () => (await statusOf(pending!.eventId)) === 'failed', 5000, 'a failed first attempt');
  await app.stop();
  app = undefined;

  // While the service is down, an operator action writes another event (as the CLI would).
  const config = loadConfig(testEnv(db.url, ENV));
  const cliRt = await openRuntime(config, createLogger('silent'), { migrate: false, work: false, poolSize: 2 });
  const [whileDown] = await emit(cliRt, ['ServiceOrder.Completed', retried]);
  await cliRt.close();
  expect(rx.received.filter((r) => r.headers['x-lumen-event-id'] === whileDown!.eventId)).toHaveLength(0);

  app = await startTestApp({ db, env: ENV });
  await waitFor(async () => (await statusOf(whileDown!.eventId)) === 'succeeded', 15_000, 'delivery after the restart');
  expect(await statusOf(pending!.eventId)).toBe('succeeded');
  expect(await sweepStrandedDeliveries(app.rt)).toBe(0);

  const byEvent = (ev: Event | null | undefined) => rx!.received.filter((r) => r.headers['x-lumen-event-id'] === ev!.eventId);
  for (const ev of [...delivered, pending, whileDown]) {
    expect(byEvent(ev).filter((r) => r.status === 204), ev!.eventId).toHaveLength(1);
  }
  for (const ev of delivered) expect(byEvent(ev)).toHaveLength(1);
  expect(byEvent(pending).map((r) => [r.headers['x-lumen-delivery-attempt'], r.status])).toEqual([['1', 500], ['2', 500], ['3', 204]]);
  // the order's later event went out only after the retried one succeeded
  const pendingOk = byEvent(pending).find((r) => r.status === 204)!;
  expect(byEvent(whileDown)[0]!.at).toBeGreaterThanOrEqual(pendingOk.at);
});
