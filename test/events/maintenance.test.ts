import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.js';
import { deleteExpiredEvents, sweepStrandedDeliveries } from '../../src/services/events-maintenance.js';
import { startTestApp, type TestApp } from '../support/app.js';
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

  it('starts a delivery whose job was lost', async () => {
    const p = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    const s = await subjectFor(t.rt, p);
    // A database handle that carries no job queue: the delivery is written, no job.
    const bare = { ...t.rt, db: createDatabase(t.rt.pool) };
    const [ev] = await emit(bare, ['ServiceOrder.Created', s]);
    const row = await t.rt.db.selectFrom('webhook_delivery').selectAll().where('event_id', '=', ev!.eventId).executeTakeFirstOrThrow();
    expect(row.status).toBe('pending');
    expect(await sweepStrandedDeliveries(t.rt)).toBe(0); // not stranded yet: just written

    await t.rt.db.updateTable('webhook_delivery').set({ next_attempt_at: sql<Date>`now() - interval '1 minute'` }).where('id', '=', row.id).execute();
    expect(await sweepStrandedDeliveries(t.rt)).toBe(1);
    await waitFor(() => rx.received.find((r) => r.headers['x-lumen-event-id'] === ev!.eventId), 5000, 'the swept delivery');
  });

  it('schedules the sweeper and the cleanup', async () => {
    const names = (await t.rt.jobs.boss.getSchedules()).map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['webhook-sweep', 'events-cleanup']));
  });
});
