import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Event, EventsPage } from '../../generated/partner/types.gen.js';
import { deleteExpiredEvents } from '../../src/services/events/maintenance.js';
import { emitEvent, type EventSubject } from '../../src/services/events/outbox.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { emit, makeEventPartner, subjectFor } from './support.js';

/**
 * How positions are given (migration 0011): only about what a call returns, starting
 * after the last positioned write_seq, with late commits found by their writer's
 * transaction id. polling.test.ts holds the contract's proofs; these pin the edges of
 * the positioning itself.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

async function poll(apiKey: string, query: Record<string, string | number> = {}): Promise<EventsPage> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
  const res = await t.fetch(`/api/external/events${qs ? `?${qs}` : ''}`, { apiKey });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as EventsPage;
}

const ids = (events: (Event | null)[]) => events.map((e) => e!.eventId);

async function positionedCount(partnerId: string): Promise<number> {
  const r = await t.rt.db.selectFrom('event_position').select((eb) => eb.fn.countAll<number>().as('n')).where('external_system_id', '=', partnerId).executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Drains with `limit`, confirming each page; returns the ids seen and each page's hasMore. */
async function drain(apiKey: string, limit: number, since?: string) {
  const seen: string[] = [];
  const hasMores: boolean[] = [];
  for (let i = 0; i < 50; i++) {
    const page = await poll(apiKey, { limit, ...(since ? { since } : {}) });
    seen.push(...ids(page.events));
    hasMores.push(page.hasMore);
    since = page.nextSince;
    if (!page.hasMore) break;
  }
  return { seen, hasMores, since: since! };
}

/** Opens a transaction that writes events and stays open until `commit()` is called. */
async function holdOpen(subjects: EventSubject[]) {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let written!: (events: string[]) => void;
  const eventIds = new Promise<string[]>((r) => (written = r));
  const tx = t.rt.db.transaction().execute(async (trx) => {
    const out: string[] = [];
    for (const s of subjects) out.push((await emitEvent(trx, 'ServiceOrder.StatusChanged', s))!.eventId);
    written(out);
    await held;
  });
  const heldIds = await eventIds;
  return {
    ids: heldIds,
    async commit() {
      release();
      await tx;
    },
  };
}

describe('events polling: positions', () => {
  it('answers hasMore exactly at batch boundaries: limit, limit + 1 and 2 × limit events', async () => {
    for (const [n, expected] of [
      [3, [false]],
      [4, [true, false]],
      [6, [true, false]],
      [7, [true, true, false]],
    ] as const) {
      const p = await makeEventPartner(t.rt);
      const s = await subjectFor(t.rt, p);
      const written = await emit(t.rt, ...Array.from({ length: n }, () => ['ServiceOrder.StatusChanged', s] as const));
      const { seen, hasMores } = await drain(p.partner.apiKey, 3);
      expect(hasMores, `${n} events`).toEqual(expected);
      expect(seen, `${n} events`).toEqual(ids(written));
    }
  });

  it('positions only what a call returns plus the one event that tells hasMore', async () => {
    const p = await makeEventPartner(t.rt);
    const s = await subjectFor(t.rt, p);
    await emit(t.rt, ...Array.from({ length: 10 }, () => ['ServiceOrder.StatusChanged', s] as const));
    const first = await poll(p.partner.apiKey, { limit: 3 });
    expect(first.events).toHaveLength(3);
    expect(await positionedCount(p.partner.id)).toBe(4);
    // the same page again (not confirmed): nothing more is positioned
    expect(ids((await poll(p.partner.apiKey, { limit: 3 })).events)).toEqual(ids(first.events));
    expect(await positionedCount(p.partner.id)).toBe(4);
    await poll(p.partner.apiKey, { limit: 3, since: first.nextSince });
    expect(await positionedCount(p.partner.id)).toBe(7);
  });

  it('lets no since confirm an event that was positioned but not yet returned', async () => {
    const p = await makeEventPartner(t.rt);
    const s = await subjectFor(t.rt, p);
    const [e1, e2] = await emit(t.rt, ['ServiceOrder.StatusChanged', s], ['ServiceOrder.StatusChanged', s]);
    const first = await poll(p.partner.apiKey, { limit: 1 });
    expect(ids(first.events)).toEqual([e1!.eventId]);
    expect(first.hasMore).toBe(true); // e2 holds a position already
    const future = new Date(Date.now() + 86_400_000).toISOString();
    expect(ids((await poll(p.partner.apiKey, { since: future })).events)).toEqual([e2!.eventId]);
  });

  it('still returns events whose transaction commits after positions moved past them, also more than one batch of them', async () => {
    const p = await makeEventPartner(t.rt);
    // (two orders: A holds its order's row lock until it commits)
    const [sa, sb] = [await subjectFor(t.rt, p), await subjectFor(t.rt, p)];
    // A writes five events first (the lowest write_seq) and stays open...
    const a = await holdOpen(Array.from({ length: 5 }, () => sa));
    // ...while later events are written, committed and drained over several calls.
    const later = await emit(t.rt, ...Array.from({ length: 4 }, () => ['ServiceOrder.StatusChanged', sb] as const));
    const before = await drain(p.partner.apiKey, 1);
    expect(before.seen).toEqual(ids(later));
    const cursor = await t.rt.db.selectFrom('event_cursor').select('positioned_seq').where('external_system_id', '=', p.partner.id).executeTakeFirstOrThrow();
    const heldSeqs = await t.rt.db.selectFrom('event').select('write_seq').where('id', 'in', a.ids).execute();
    expect(Math.max(...heldSeqs.map((r) => r.write_seq))).toBeLessThan(cursor.positioned_seq!);

    // A commits: its five events come after the cursor the partner holds, in write
    // order, though each call can position only part of them (limit 2: batches of 3).
    await a.commit();
    const after = await drain(p.partner.apiKey, 2, before.since);
    expect(after.seen).toEqual(a.ids);
    expect(after.hasMores).toEqual([true, true, false]);
    expect(Date.parse(after.since)).toBeGreaterThan(Date.parse(before.since));
    expect((await poll(p.partner.apiKey, { since: after.since })).events).toEqual([]);
  });

  it('takes every event without a position when the stored snapshot is from another cluster (a logical restore)', async () => {
    const p = await makeEventPartner(t.rt);
    const s = await subjectFor(t.rt, p);
    const written = await emit(t.rt, ['ServiceOrder.StatusChanged', s], ['ServiceOrder.StatusChanged', s]);
    await poll(p.partner.apiKey, { limit: 1 }); // creates the cursor, positions both
    // As restored elsewhere: unpositioned events at or before positioned_seq, and a
    // snapshot beyond every transaction id of this cluster (which would see them all).
    await t.rt.db.deleteFrom('event_position').where('external_system_id', '=', p.partner.id).execute();
    await sql`UPDATE event_cursor SET confirmed_at = NULL, last_published_at = NULL, last_returned_at = NULL,
      positioned_snapshot = (x || ':' || x || ':')::pg_snapshot
      FROM (SELECT (pg_snapshot_xmax(pg_current_snapshot())::text::numeric + 1000000)::text AS x) f
      WHERE external_system_id = ${p.partner.id}`.execute(t.rt.db);
    expect((await drain(p.partner.apiKey, 200)).seen).toEqual(ids(written));
  });

  it('finds an event left without a position by the upgrade, as migration 0011 marks it', async () => {
    const p = await makeEventPartner(t.rt);
    const s = await subjectFor(t.rt, p);
    const [e1, e2] = await emit(t.rt, ['ServiceOrder.StatusChanged', s], ['ServiceOrder.StatusChanged', s]);
    const first = await poll(p.partner.apiKey, { limit: 1 }); // positions both, returns e1
    // As the migration leaves a late commit that had no position yet: its writer id is
    // the migration's, which the cursor's snapshot (xmin = xmax = that id) does not see.
    await t.rt.db.deleteFrom('event_position').where('published_at', '>', new Date(first.nextSince)).where('external_system_id', '=', p.partner.id).execute();
    await sql`UPDATE event_cursor SET last_published_at = ${first.nextSince}::timestamptz, last_returned_at = ${first.nextSince}::timestamptz,
      positioned_snapshot = (x || ':' || x || ':')::pg_snapshot
      FROM (SELECT pg_current_xact_id()::text AS x) f WHERE external_system_id = ${p.partner.id}`.execute(t.rt.db);
    await sql`UPDATE event SET write_xid = pg_current_xact_id() WHERE id = ${e2!.eventId}`.execute(t.rt.db);
    const rest = await drain(p.partner.apiKey, 200, first.nextSince);
    expect(rest.seen).toEqual([e2!.eventId]);
    expect(ids(first.events)).toEqual([e1!.eventId]);
  });

  it('drops an event\'s position with the event (retention)', async () => {
    const p = await makeEventPartner(t.rt);
    const s = await subjectFor(t.rt, p, false);
    const [gone, kept] = await emit(t.rt, ['Alert.Cancelled', s], ['Alert.Cancelled', s]);
    await poll(p.partner.apiKey);
    expect(await positionedCount(p.partner.id)).toBe(2);
    await t.rt.db.updateTable('event').set({ created_at: sql<Date>`now() - interval '31 days'` }).where('id', '=', gone!.eventId).execute();
    expect(await deleteExpiredEvents(t.rt)).toBe(1);
    const left = await t.rt.db.selectFrom('event_position').select('write_seq').where('external_system_id', '=', p.partner.id).execute();
    const keptSeq = await t.rt.db.selectFrom('event').select('write_seq').where('id', '=', kept!.eventId).executeTakeFirstOrThrow();
    expect(left).toEqual([keptSeq]);
  });

  it('counts a position whose event is gone, so no later position is served in its place', async () => {
    const p = await makeEventPartner(t.rt);
    const s = await subjectFor(t.rt, p, false);
    const written = await emit(t.rt, ...Array.from({ length: 7 }, () => ['Alert.Cancelled', s] as const));
    expect((await poll(p.partner.apiKey, { limit: 5 })).events).toHaveLength(5); // six positioned, none confirmed
    // Two events deleted in the instant they were positioned: their positions outlive them.
    await t.rt.db.transaction().execute(async (tx) => {
      await sql`SET LOCAL session_replication_role = replica`.execute(tx); // no triggers
      await tx.deleteFrom('event').where('id', 'in', ids(written.slice(0, 2))).execute();
    });
    expect(await positionedCount(p.partner.id)).toBe(6);
    expect((await drain(p.partner.apiKey, 2)).seen).toEqual(ids(written.slice(2)));
  });

  it('serves the stored envelope text, and the jsonb copy only for an event without it', async () => {
    const p = await makeEventPartner(t.rt);
    const s = await subjectFor(t.rt, p);
    const [a, b] = await emit(t.rt, ['ServiceOrder.StatusChanged', s], ['ServiceOrder.StatusChanged', s]);
    await t.rt.db.updateTable('event').set({ body: null }).where('id', '=', b!.eventId).execute();
    expect((await poll(p.partner.apiKey)).events).toEqual([a, b]);
  });
});
