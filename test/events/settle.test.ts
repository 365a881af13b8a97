/**
 * Recording attempts (settleAttempts) looks at the other open deliveries of each settled
 * delivery's ordering key only, whatever the table's statistics say. Statistics taken
 * while no delivery was open, as autovacuum's ANALYZE of a quiet queue leaves them, once
 * made the planner walk every open delivery for each settled one (bench/FINDINGS.md,
 * "The settle after an ANALYZE").
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { recheckKeys, recheckStatement, settleAttempts, settleStatement, type SettledAttempt } from '../../src/db/repositories/webhook-delivery.repository.js';
import { explainNodes } from '../support/plans.js';
import { emit, makeEventPartner, runtimeWithoutWorkers, subjectFor } from './support.js';

const t = runtimeWithoutWorkers();

/**
 * A quiet queue (every delivery so far finished, the table analyzed so), then a burst the
 * statistics know nothing of: two keys with two deliveries each, and 400 other open ones.
 */
async function quietQueueThenBurst() {
  const p = await makeEventPartner(t.rt, { webhookUrl: 'http://127.0.0.1:9/never' });
  const past = [];
  for (let i = 0; i < 50; i++) past.push(['ServiceOrder.Created', await subjectFor(t.rt, p)] as const);
  await emit(t.rt, ...past);
  await sql`UPDATE webhook_delivery SET status = 'succeeded', attempts = attempts + 1, blocked = false, finished_at = now() WHERE status IN ('pending', 'failed')`.execute(t.rt.db);
  await sql`ANALYZE webhook_delivery`.execute(t.rt.db);

  const first = await subjectFor(t.rt, p);
  const second = await subjectFor(t.rt, p);
  await emit(t.rt, ['ServiceOrder.Created', first], ['ServiceOrder.Created', second]);
  await emit(t.rt, ['ServiceOrder.Assigned', first], ['ServiceOrder.Assigned', second]);
  const burst = [];
  for (let i = 0; i < 400; i++) burst.push(['ServiceOrder.Created', await subjectFor(t.rt, p)] as const);
  await emit(t.rt, ...burst);

  const open = await t.rt.db.selectFrom('webhook_delivery').select(['id', 'ordering_key', 'position']).where('status', '=', 'pending').orderBy('position').execute();
  expect(open).toHaveLength(404);
  const ofKey = (orderId: string) => open.filter((d) => d.ordering_key === orderId);
  const [a1, a2] = ofKey(first.serviceOrderId!);
  const [b1, b2] = ofKey(second.serviceOrderId!);
  expect(a2 && b2).toBeTruthy();
  return { partnerId: p.partner.id, a: [a1!, a2!] as const, b: [b1!, b2!] as const };
}

/** The statement's plan, run and rolled back: every read of webhook_delivery but by primary key, and the index entries they read. */
async function readsOf(statement: { compile: (db: typeof t.rt.db) => { sql: string; parameters: readonly unknown[] } }) {
  const q = statement.compile(t.rt.db);
  const client = await t.rt.pool.connect();
  try {
    await client.query('BEGIN');
    const all = await explainNodes(client, q, { analyze: true });
    const seqScans = all.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'webhook_delivery');
    const reads = all.filter((n) => n['Index Name']?.startsWith('webhook_delivery_') && n['Index Name'] !== 'webhook_delivery_pkey');
    // What each read returned and what it read and left (by a filter), over all its loops.
    const entries = reads.reduce((sum, n) => sum + ((n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0)) * (n['Actual Loops'] ?? 1), 0);
    return { seqScans, reads, entries };
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

describe('recording attempts after the statistics of a quiet queue', () => {
  it('probes only the settled keys: it unblocks the next delivery of an ended one, holds back those behind a retry, and reads no other open delivery', async () => {
    const { a, b } = await quietQueueThenBurst();
    const [endedFirst, endedSecond] = a;
    const [retriedFirst, retriedSecond] = b;
    // The ended key's second delivery waits blocked behind its first; the retried key's is
    // not blocked yet: the settle holds it back behind the retry.
    await sql`UPDATE webhook_delivery SET blocked = (id = ${endedSecond.id}) WHERE id IN (${endedSecond.id}, ${retriedSecond.id})`.execute(t.rt.db);

    const now = new Date();
    const outcomes: SettledAttempt[] = [
      { deliveryId: endedFirst.id, attempt: 1, startedAt: now, latencyMs: 12, succeeded: true, statusCode: 204, error: null, status: 'succeeded', nextAttemptAt: null },
      { deliveryId: retriedFirst.id, attempt: 1, startedAt: now, latencyMs: 30, succeeded: false, statusCode: 503, error: 'HTTP 503', status: 'failed', nextAttemptAt: new Date(now.getTime() + 60_000) },
    ];

    // Each probe of the open-key index is by key, and together they read the two later
    // deliveries of the two keys, not the burst.
    const plan = await readsOf(settleStatement(outcomes));
    expect(plan.seqScans).toEqual([]);
    expect(plan.reads.length).toBeGreaterThanOrEqual(2);
    for (const read of plan.reads) {
      expect(read['Index Name']).toBe('webhook_delivery_open_key_idx');
      expect(read['Index Cond']).toMatch(/ordering_key/);
    }
    expect(plan.entries).toBeLessThanOrEqual(4);

    // And what it does: the ended key's next delivery may go, the retried key's waits.
    const released = await settleAttempts(t.rt.db, outcomes);
    expect(released.map((r) => r.id)).toEqual([endedSecond.id]);
    const after = await t.rt.db.selectFrom('webhook_delivery').select(['id', 'status', 'blocked']).where('id', 'in', [endedFirst.id, endedSecond.id, retriedFirst.id, retriedSecond.id]).execute();
    const state = Object.fromEntries(after.map((d) => [d.id, [d.status, d.blocked]]));
    expect(state[endedFirst.id]).toEqual(['succeeded', false]);
    expect(state[endedSecond.id]).toEqual(['pending', false]);
    expect(state[retriedFirst.id]).toEqual(['failed', false]);
    expect(state[retriedSecond.id]).toEqual(['pending', true]);
    const attempts = await t.rt.db.selectFrom('webhook_attempt').select(['delivery_id', 'succeeded', 'status_code']).where('delivery_id', 'in', [endedFirst.id, retriedFirst.id]).orderBy('status_code').execute();
    expect(attempts).toEqual([
      { delivery_id: endedFirst.id, succeeded: true, status_code: 204 },
      { delivery_id: retriedFirst.id, succeeded: false, status_code: 503 },
    ]);
  });

  it('rechecks only the keys it is given: it unblocks a delivery whose key has nothing open before it, and reads no other open delivery', async () => {
    const { partnerId, a, b } = await quietQueueThenBurst();
    // Both second deliveries wait blocked; the first of a has ended since, the first of b has not.
    await sql`UPDATE webhook_delivery SET blocked = true WHERE id IN (${a[1].id}, ${b[1].id})`.execute(t.rt.db);
    await sql`UPDATE webhook_delivery SET status = 'succeeded', attempts = 1, finished_at = now() WHERE id = ${a[0].id}`.execute(t.rt.db);
    const keys = [a, b].map(([first]) => ({ external_system_id: partnerId, ordering_key: first.ordering_key }));

    const plan = await readsOf(recheckStatement(keys));
    expect(plan.seqScans).toEqual([]);
    for (const read of plan.reads) {
      expect(read['Index Name']).toBe('webhook_delivery_open_key_idx');
      expect(read['Index Cond']).toMatch(/ordering_key/);
    }
    expect(plan.entries).toBeLessThanOrEqual(6);

    expect((await recheckKeys(t.rt.db, keys)).map((r) => r.id)).toEqual([a[1].id]);
    const blocked = await t.rt.db.selectFrom('webhook_delivery').select(['id', 'blocked']).where('id', 'in', [a[1].id, b[1].id]).execute();
    expect(Object.fromEntries(blocked.map((d) => [d.id, d.blocked]))).toEqual({ [a[1].id]: false, [b[1].id]: true });
  });
});
