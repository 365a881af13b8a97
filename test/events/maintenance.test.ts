import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { openRuntime } from '../../src/runtime.js';
import { deleteExpiredEvents, sweepStrandedDeliveries } from '../../src/services/events/maintenance.js';
import { emitEvent } from '../../src/services/events/outbox.js';
import { startTestApp, testEnv, type TestApp } from '../support/app.js';
import { createTestDatabase } from '../support/database.js';
import { emit, makeEventPartner, startReceiver, subjectFor, waitFor } from './support.js';

let t: TestApp;
let rx: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  t = await startTestApp();
  rx = await startReceiver();
});
afterAll(async () => {
  await t?.stop();
  await rx?.close();
});

describe('events maintenance', () => {
  it('removes events older than the retention with their deliveries, and keeps the rest', async () => {
    const p = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    const [old, recent] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, p)], ['ServiceOrder.Created', await subjectFor(t.rt, p)]);
    await waitFor(async () => (await t.rt.db.selectFrom('webhook_delivery').select('id').where('event_id', '=', old!.eventId).where('status', '=', 'succeeded').executeTakeFirst()) !== undefined, 5000, 'delivery');
    await t.rt.db.updateTable('event').set({ created_at: sql<Date>`now() - interval '31 days'` }).where('id', '=', old!.eventId).execute();

    expect(await deleteExpiredEvents(t.rt)).toBe(1);
    const left = await t.rt.db.selectFrom('event').select('id').where('external_system_id', '=', p.partner.id).execute();
    expect(left.map((r) => r.id)).toEqual([recent!.eventId]);
    expect(await t.rt.db.selectFrom('webhook_delivery').select('id').where('event_id', '=', old!.eventId).execute()).toEqual([]);
    expect(await deleteExpiredEvents(t.rt)).toBe(0);
  });

  it('starts a delivery left blocked although the deliveries ahead of it in its order have ended', async () => {
    const p = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    const s = await subjectFor(t.rt, p);
    // What a write racing the settle of the delivery ahead of it leaves: blocked, with nothing ahead.
    const ev = await t.rt.db.transaction().execute(async (tx) => {
      const written = await emitEvent(tx, 'ServiceOrder.Created', s);
      await tx.updateTable('webhook_delivery').set({ blocked: true }).where('event_id', '=', written!.eventId).execute();
      return written!;
    });
    expect(await sweepStrandedDeliveries(t.rt)).toBe(1);
    await waitFor(() => rx.received.find((r) => r.headers['x-lumen-event-id'] === ev.eventId), 5000, 'the unblocked delivery');
    await waitFor(async () => (await t.rt.db.selectFrom('webhook_delivery').select('status').where('event_id', '=', ev.eventId).executeTakeFirstOrThrow()).status === 'succeeded', 5000, 'its record');
    expect(await sweepStrandedDeliveries(t.rt)).toBe(0);
  });

  it('attempts a due delivery that no notification announced (the delivery workers also poll)', async () => {
    const p = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    const [ev] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, p)]);
    await waitFor(() => rx.received.some((r) => r.headers['x-lumen-event-id'] === ev!.eventId), 5000, 'the first delivery');
    // Written without waking anyone, as a lost notification would leave it.
    await t.rt.db.insertInto('webhook_delivery').values({ event_id: ev!.eventId, external_system_id: p.partner.id, ordering_key: ev!.serviceOrder!.id }).execute();
    await waitFor(() => rx.received.filter((r) => r.headers['x-lumen-event-id'] === ev!.eventId).length === 2, 10_000, 'the unannounced delivery');
  });

  it('counts deliveries overdue while no delivery worker runs, and the first serving process delivers them', async () => {
    const db = await createTestDatabase();
    try {
      const cli = await openRuntime(loadConfig(testEnv(db.url)), createLogger('silent'), { migrate: false, work: false, poolSize: 2 });
      let eventId: string;
      try {
        const p = await makeEventPartner(cli, { webhookUrl: rx.url });
        const [ev] = await emit(cli, ['ServiceOrder.Created', await subjectFor(cli, p)]);
        eventId = ev!.eventId;
        expect(await sweepStrandedDeliveries(cli)).toBe(0); // due just now: not overdue yet
        await cli.db.updateTable('webhook_delivery').set({ next_attempt_at: sql<Date>`now() - interval '1 minute'` }).where('event_id', '=', eventId).execute();
        expect(await sweepStrandedDeliveries(cli)).toBe(1);
      } finally {
        await cli.close();
      }
      const app = await startTestApp({ db });
      try {
        await waitFor(() => rx.received.find((r) => r.headers['x-lumen-event-id'] === eventId), 5000, 'the overdue delivery');
      } finally {
        await app.stop();
      }
    } finally {
      await db.drop();
    }
  });

  it('schedules the sweeper and the cleanup', async () => {
    const names = (await t.rt.jobs.boss.getSchedules()).map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['webhook-sweep', 'events-cleanup']));
  });
});
