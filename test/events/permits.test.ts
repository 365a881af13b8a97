/**
 * The per-partner limit of webhook attempts on the wire holds across instances: two
 * `lumen serve` on one database never have more than LUMEN_WEBHOOK_MAX_IN_FLIGHT_PER_PARTNER
 * attempts open to one receiver at once (each holds a send permit), and the instance
 * left without permits gives its leases back instead of sitting on them, so nothing
 * waits for it: when the holder stops, the other delivers the rest.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { acquirePermits, releasePermits } from '../../src/db/repositories/webhook-permit.repository.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { emit, makeEventPartner, subjectFor, waitFor } from './support.js';

const LIMIT = 2;
const EVENTS = 120;

/** A receiver that holds every request until told to answer, and counts how many it held at once. */
async function heldReceiver() {
  const held: http.ServerResponse[] = [];
  const ids: string[] = [];
  let open = 0;
  let maxOpen = 0;
  let answered = 0;
  let holding = true;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      ids.push(String(req.headers['webhook-id']));
      open++;
      maxOpen = Math.max(maxOpen, open);
      const done = () => {
        open--;
        answered++;
        res.writeHead(204).end();
      };
      if (holding) held.push(Object.assign(res, { done }));
      else done();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    get open() {
      return open;
    },
    get maxOpen() {
      return maxOpen;
    },
    get answered() {
      return answered;
    },
    ids,
    /** Answers one held request. */
    answerOne() {
      const r = held.shift() as (http.ServerResponse & { done: () => void }) | undefined;
      r?.done();
      return r !== undefined;
    },
    /** Answers everything held and everything that comes from now on. */
    answerAll() {
      holding = false;
      while (this.answerOne());
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let db: TestDatabase | null = null;
const apps: TestApp[] = [];
let receiver: Awaited<ReturnType<typeof heldReceiver>> | null = null;
afterAll(async () => {
  await receiver?.close();
  for (const a of apps) await a.stop().catch(() => {});
  await db?.drop();
});

describe('webhook send permits across instances', () => {
  it('two instances never exceed one partner’s limit together; the one without permits gives its leases back and takes over when the other stops', async () => {
    db = await createTestDatabase();
    receiver = await heldReceiver();
    // Retries a second apart: an attempt that fails on the way (a connection the receiver
    // closed as it was reused, on a loaded machine) is made again within the wait below,
    // not five minutes later as the default schedule's second step would.
    const env = { LUMEN_WEBHOOK_MAX_IN_FLIGHT_PER_PARTNER: String(LIMIT), LUMEN_WEBHOOK_TIMEOUT_MS: '10000', LUMEN_WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s,1s,1s' };
    const a = await startTestApp({ db, env });
    apps.push(a);
    const p = await makeEventPartner(a.rt, { webhookUrl: receiver.url });
    for (let i = 0; i < EVENTS / 10; i++) {
      const items = [];
      for (let j = 0; j < 10; j++) items.push(['ServiceOrder.Created', await subjectFor(a.rt, p)] as const);
      await emit(a.rt, ...items);
    }
    // Instance A holds the partner's permits and has LIMIT attempts held open by the receiver.
    await waitFor(() => receiver!.open >= LIMIT, 10_000, 'instance A’s attempts');
    expect(a.rt.jobs!.deliveryState()!.permits[p.partner.id]).toBe(LIMIT);

    // Instance B starts: its first claim finds the backlog due, but no permit is free.
    const b = await startTestApp({ db, env });
    apps.push(b);
    await waitFor(() => b.rt.jobs!.deliveryState()!.backingOff.includes(p.partner.id), 10_000, 'instance B to find the permits taken');
    expect(receiver.open).toBe(LIMIT);
    expect(b.rt.jobs!.deliveryState()!.sending[p.partner.id] ?? 0).toBe(0);

    // One answer: A sends the next; still LIMIT at once, never more.
    receiver.answerOne();
    await waitFor(() => receiver!.answered >= 1 && receiver!.open >= LIMIT, 10_000, 'A’s next attempt');
    expect(receiver.maxOpen).toBe(LIMIT);

    // A stops (its permits are given back); B delivers everything that is left.
    receiver.answerAll();
    await a.stop();
    await waitFor(async () => {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_delivery WHERE external_system_id = ${p.partner.id} AND status = 'succeeded'`.execute(b.rt.db);
      return rows[0]!.n === EVENTS;
    }, 150_000, 'every delivery to succeed').catch(async (err: Error) => {
      // What the deliveries left were doing, and what B's pump held, said with the failure.
      const { rows } = await sql<Record<string, unknown>>`SELECT status, attempts, last_error, last_status_code, next_attempt_at > now() AS later, lease_until > now() AS leased, blocked, count(*)::int AS n
        FROM webhook_delivery WHERE external_system_id = ${p.partner.id} AND status <> 'succeeded' GROUP BY 1, 2, 3, 4, 5, 6, 7`.execute(b.rt.db);
      throw new Error(`${err.message}; not succeeded: ${JSON.stringify(rows)}; B: ${JSON.stringify(b.rt.jobs!.deliveryState())}`);
    });
    expect(receiver.maxOpen).toBeLessThanOrEqual(LIMIT);
    expect(new Set(receiver.ids).size).toBe(EVENTS);
    // Alone this takes about 4 s; beside other files on a loaded two-core machine once over 60 s.
  }, 180_000);

  it('grants at most the limit to holders asking at once, frees what a holder let lapse, and gives back on request', async () => {
    const t = await startTestApp({ env: { LUMEN_WEBHOOK_MAX_IN_FLIGHT_PER_PARTNER: '3' } });
    apps.push(t);
    const p = await makeEventPartner(t.rt, { webhookUrl: 'http://127.0.0.1:9/never' });
    const id = p.partner.id;
    const holders = ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000003'];
    const got = await Promise.all(holders.map((h) => acquirePermits(t.rt.db, h, new Map([[id, 3]]), 3, 30_000)));
    expect(got.reduce((sum, m) => sum + (m.get(id) ?? 0), 0)).toBe(3);
    // Asking for fewer gives the rest back in the same statement.
    const first = holders.find((_, i) => (got[i]!.get(id) ?? 0) > 0)!;
    const kept = await acquirePermits(t.rt.db, first, new Map([[id, 0]]), 3, 30_000);
    expect(kept.get(id) ?? 0).toBe(0);
    // A lapsed permit is free again.
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_send_permit WHERE external_system_id = ${id} AND holder IS NOT NULL`.execute(t.rt.db);
    await sql`UPDATE webhook_send_permit SET held_until = now() - interval '1 second' WHERE external_system_id = ${id} AND holder IS NOT NULL`.execute(t.rt.db);
    const late = await acquirePermits(t.rt.db, '00000000-0000-4000-8000-000000000009', new Map([[id, 3]]), 3, 30_000);
    expect(late.get(id)).toBe(3);
    expect(rows[0]!.n).toBeLessThan(3);
    await releasePermits(t.rt.db, '00000000-0000-4000-8000-000000000009', [id]);
    const after = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_send_permit WHERE external_system_id = ${id} AND holder IS NOT NULL`.execute(t.rt.db);
    expect(after.rows[0]!.n).toBe(0);
    // A lowered limit grants no slot above it.
    const lowered = await acquirePermits(t.rt.db, holders[0]!, new Map([[id, 3]]), 2, 30_000);
    expect(lowered.get(id)).toBe(2);
  });
});
