import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Event, EventsPage } from '../../generated/partner/types.gen.js';
import { emitEvent } from '../../src/services/events/outbox.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { emit, makeEventPartner, subjectFor } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function poll(apiKey: string, query: Record<string, string | number> = {}): Promise<EventsPage> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
  const res = await t.fetch(`/api/external/events${qs ? `?${qs}` : ''}`, { apiKey });
  expect(res.status, await res.clone().text()).toBe(200);
  const page = (await res.json()) as EventsPage;
  expect(page.nextSince).toMatch(ISO_MS);
  return page;
}

const ids = (events: Event[]) => events.map((e) => e.eventId);

describe('GET /api/external/events', () => {
  it('returns the envelopes written by emitEvent, oldest first, and confirms with nextSince', async () => {
    const p = await makeEventPartner(t.rt);
    const a = await subjectFor(t.rt, p);
    const b = await subjectFor(t.rt, p, false);
    const [created] = await emit(t.rt, ['ServiceOrder.Created', a]);
    const [cancelled] = await emit(t.rt, ['Alert.Cancelled', b]);

    const first = await poll(p.partner.apiKey);
    expect(first.events).toEqual([created, cancelled]);
    expect(first.hasMore).toBe(false);
    expect(first.events[0]).toMatchObject({ eventType: 'ServiceOrder.Created', protocolNumber: a.alert.protocol_number, sequence: 1, alert: { id: a.alert.id, status: 'Linked' } });
    expect(first.events[0]!.serviceOrder).toMatchObject({ id: a.serviceOrderId, status: 'OPEN' });
    expect(first.events[1]).toMatchObject({ eventType: 'Alert.Cancelled', serviceOrder: null, sequence: 1 });

    // not confirmed yet: the same events again
    expect(ids((await poll(p.partner.apiKey)).events)).toEqual(ids(first.events));
    // confirmed: never again, not even for an older since
    const after = await poll(p.partner.apiKey, { since: first.nextSince });
    expect(after.events).toEqual([]);
    expect(after.nextSince).toBe(first.nextSince);
    expect((await poll(p.partner.apiKey, { since: '2000-01-01T00:00:00.000Z' })).events).toEqual([]);
    expect((await poll(p.partner.apiKey)).events).toEqual([]);
  });

  it('cuts a batch written by one transaction exactly where the limit falls, without losing or repeating any', async () => {
    const p = await makeEventPartner(t.rt);
    const subjects = await Promise.all([1, 2, 3, 4, 5].map(() => subjectFor(t.rt, p)));
    const written = await emit(t.rt, ...subjects.map((s) => ['ServiceOrder.StatusChanged', s] as const));
    const seen: string[] = [];
    let since: string | undefined;
    const hasMores: boolean[] = [];
    for (let i = 0; i < 3; i++) {
      const page = await poll(p.partner.apiKey, { limit: 2, ...(since ? { since } : {}) });
      seen.push(...ids(page.events));
      hasMores.push(page.hasMore);
      since = page.nextSince;
    }
    expect(seen).toEqual(written.map((e) => e!.eventId));
    expect(hasMores).toEqual([true, true, false]);
    expect((await poll(p.partner.apiKey, { since: since! })).events).toEqual([]);
  });

  it('never skips an event whose transaction commits after a later one was read (out-of-order commit)', async () => {
    const p = await makeEventPartner(t.rt);
    const early = await subjectFor(t.rt, p);
    const late = await subjectFor(t.rt, p);

    // Transaction A writes its event first (earlier created_at) and stays open...
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let written!: (id: string) => void;
    const heldEventId = new Promise<string>((r) => (written = r));
    const txA = t.rt.db.transaction().execute(async (tx) => {
      const ev = await emitEvent(tx, 'ServiceOrder.Completed', early);
      written(ev!.eventId);
      await held;
    });
    const heldId = await heldEventId;

    // ...while transaction B writes a later event and commits, and the partner reads it.
    const [visible] = await emit(t.rt, ['ServiceOrder.Created', late]);
    const first = await poll(p.partner.apiKey);
    expect(ids(first.events)).toEqual([visible!.eventId]);
    const second = await poll(p.partner.apiKey, { since: first.nextSince });
    expect(second.events).toEqual([]);

    // A commits: its event still reaches the partner, after the cursor it already holds.
    release();
    await txA;
    const third = await poll(p.partner.apiKey, { since: second.nextSince });
    expect(ids(third.events)).toEqual([heldId]);
    expect(Date.parse(third.events[0]!.occurredAt)).toBeLessThan(Date.parse(visible!.occurredAt));
    expect(Date.parse(third.nextSince)).toBeGreaterThan(Date.parse(first.nextSince));
    expect((await poll(p.partner.apiKey, { since: third.nextSince })).events).toEqual([]);
  });

  it('confirms no further than what was handed out, whatever since says', async () => {
    const p = await makeEventPartner(t.rt);
    const [e1] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, p)]);
    const first = await poll(p.partner.apiKey);
    expect(ids(first.events)).toEqual([e1!.eventId]);
    const [e2] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, p)]);
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const page = await poll(p.partner.apiKey, { since: future });
    expect(ids(page.events)).toEqual([e2!.eventId]);
  });

  it('cuts limit above 200 down to 200 and reports hasMore', async () => {
    const p = await makeEventPartner(t.rt);
    const s = await subjectFor(t.rt, p);
    await emit(t.rt, ...Array.from({ length: 201 }, () => ['ServiceOrder.StatusChanged', s] as const));
    const page = await poll(p.partner.apiKey, { limit: 1000 });
    expect(page.events).toHaveLength(200);
    expect(page.hasMore).toBe(true);
    expect(page.events.map((e) => e.sequence)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    const rest = await poll(p.partner.apiKey, { since: page.nextSince });
    expect(rest.events.map((e) => e.sequence)).toEqual([201]);
    expect(rest.hasMore).toBe(false);
  });

  it('shows each partner only its own events', async () => {
    const p = await makeEventPartner(t.rt);
    const q = await makeEventPartner(t.rt);
    const [mine] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, p)]);
    const [theirs] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, q)]);
    expect(ids((await poll(p.partner.apiKey)).events)).toEqual([mine!.eventId]);
    expect(ids((await poll(q.partner.apiKey)).events)).toEqual([theirs!.eventId]);
  });

  it('writes nothing for an event type the partner is not subscribed to', async () => {
    const p = await makeEventPartner(t.rt);
    await t.rt.db.updateTable('external_system').set({ event_types: ['ServiceOrder.Completed'] }).where('id', '=', p.partner.id).execute();
    const s = await subjectFor(t.rt, p);
    const [created, completed] = await emit(t.rt, ['ServiceOrder.Created', s], ['ServiceOrder.Completed', s]);
    expect(created).toBeNull();
    expect(completed).toMatchObject({ eventType: 'ServiceOrder.Completed', sequence: 2 });
    const rows = await t.rt.db.selectFrom('event').select('event_type').where('external_system_id', '=', p.partner.id).execute();
    expect(rows).toEqual([{ event_type: 'ServiceOrder.Completed' }]);
    expect((await poll(p.partner.apiKey)).events.map((e) => e.eventType)).toEqual(['ServiceOrder.Completed']);
  });

  it('writes nothing when nothing moved: ten polls with nothing new leave the cursor row as it was', async () => {
    const p = await makeEventPartner(t.rt);
    const s = await subjectFor(t.rt, p);
    // Another partner's events keep arriving meanwhile: they move nothing of this one.
    const other = await makeEventPartner(t.rt);
    await emit(t.rt, ['ServiceOrder.Created', s]);
    let page = await poll(p.partner.apiKey);
    page = await poll(p.partner.apiKey, { since: page.nextSince });
    expect(page.events).toEqual([]);
    /** The row version of the partner's cursor: an UPDATE, even of equal values, makes a new one. */
    const version = async () => (await t.rt.pool.query<{ xmin: string }>('SELECT xmin::text FROM event_cursor WHERE external_system_id = $1', [p.partner.id])).rows[0]!.xmin;
    const before = await version();
    for (let i = 0; i < 10; i++) {
      await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, other)]);
      page = await poll(p.partner.apiKey, { since: page.nextSince });
      expect(page.events).toEqual([]);
    }
    expect(await version()).toBe(before);
    // A new event of its own moves it again, and is served.
    const [next] = await emit(t.rt, ['ServiceOrder.StatusChanged', s]);
    expect(ids((await poll(p.partner.apiKey, { since: page.nextSince })).events)).toEqual([next!.eventId]);
    expect(await version()).not.toBe(before);
  });

  it('answers 429 with Retry-After to a call inside the minimum interval only after hasMore was false, confirming nothing', async () => {
    const p = await makeEventPartner(t.rt);
    await t.rt.db.updateTable('external_system').set({ events_min_interval_seconds: 60 }).where('id', '=', p.partner.id).execute();
    const s = await subjectFor(t.rt, p);
    await emit(t.rt, ['ServiceOrder.Created', s], ['ServiceOrder.StatusChanged', s]);

    const first = await poll(p.partner.apiKey, { limit: 1 });
    expect(first.hasMore).toBe(true);
    const second = await poll(p.partner.apiKey, { limit: 1, since: first.nextSince }); // at once: allowed
    expect(second.hasMore).toBe(false);

    const res = await t.fetch(`/api/external/events?since=${encodeURIComponent(second.nextSince)}`, { apiKey: p.partner.apiKey, headers: { 'accept-language': 'en' } });
    expect(res.status).toBe(429);
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(res.headers.get('ratelimit-policy')).toBe('"poll-interval";q=1;w=60');
    expect(res.headers.get('ratelimit')).toBe(`"poll-interval";r=0;t=${retryAfter}`);
    expect(await res.json()).toMatchObject({ type: 'urn:lumen:problem:rate-limited', status: 429 });

    const cursor = await t.rt.db.selectFrom('event_cursor').selectAll().where('external_system_id', '=', p.partner.id).executeTakeFirstOrThrow();
    expect(cursor.confirmed_at?.toISOString()).toBe(first.nextSince);

    // once the interval has passed the call is answered again
    await t.rt.db.updateTable('event_cursor').set({ last_poll_at: new Date(Date.now() - 61_000) }).where('external_system_id', '=', p.partner.id).execute();
    expect((await poll(p.partner.apiKey, { since: second.nextSince })).events).toEqual([]);
  });

  it('reports an undoable action whose window has passed before doing anything, so the call releases it first', async () => {
    const p = await makeEventPartner(t.rt);
    const s = await subjectFor(t.rt, p);
    const [created] = await emit(t.rt, ['ServiceOrder.Created', s]);
    // In a transaction of the test's own, rolled back: the webhook pump never sees the action.
    await t.rt.db
      .transaction()
      .execute(async (tx) => {
        await sql`INSERT INTO undoable_action (tenant_id, kind, actor, release_at, before, after)
          VALUES (${p.tenantId}, 'discard', 'test', now() - interval '1 second', '{}', '{}')`.execute(tx);
        const call = (check: boolean) =>
          sql<{ due: boolean | null; next_since: Date | null; event_write_seq: number | null }>`SELECT * FROM lumen_poll_events(${p.partner.id}::uuid, NULL, 10, true, ${check})`.execute(tx);
        const due = (await call(true)).rows;
        expect(due).toHaveLength(1);
        expect(due[0]!.due).toBe(true);
        // Nothing done: no cursor, no position.
        expect(await tx.selectFrom('event_cursor').select('external_system_id').where('external_system_id', '=', p.partner.id).execute()).toEqual([]);
        expect(await tx.selectFrom('event_position').select('write_seq').where('external_system_id', '=', p.partner.id).execute()).toEqual([]);
        // Called again without the check (after the release): the page.
        const page = (await call(false)).rows;
        expect(page.map((r) => r.due)).toEqual([false, null]);
        expect(page[0]!.next_since).toBeInstanceOf(Date);
        throw new Error('rolled back');
      })
      .catch((e: Error) => expect(e.message).toBe('rolled back'));
    expect(ids((await poll(p.partner.apiKey)).events)).toEqual([created!.eventId]);
  });

  it('answers 400 to a limit below 1 and to a since that is not a date-time', async () => {
    const p = await makeEventPartner(t.rt);
    for (const q of ['limit=0', 'limit=abc', 'since=yesterday']) {
      const res = await t.fetch(`/api/external/events?${q}`, { apiKey: p.partner.apiKey });
      expect(res.status, q).toBe(400);
      expect(((await res.json()) as { type: string }).type).toBe('urn:lumen:problem:invalid-parameter');
    }
  });

  it('answers 401 without a key', async () => {
    expect((await t.fetch('/api/external/events')).status).toBe(401);
  });
});
