/**
 * Recording attempts (settleAttempts) looks at the other open deliveries of each settled
 * delivery's ordering key only, whatever the table's statistics say. Statistics taken
 * while no delivery was open, as autovacuum's ANALYZE of a quiet queue leaves them, once
 * made the planner walk every open delivery for each settled one (bench/FINDINGS.md,
 * "The settle after an ANALYZE").
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { settleAttempts, settleStatement, type SettledAttempt } from '../../src/db/repositories/webhook-delivery.repository.js';
import { emit, makeEventPartner, runtimeWithoutWorkers, subjectFor } from './support.js';

const t = runtimeWithoutWorkers();

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

describe('recording attempts after the statistics of a quiet queue', () => {
  it('probes only the settled keys: it unblocks the next delivery of an ended one, holds back those behind a retry, and reads no other open delivery', async () => {
    const p = await makeEventPartner(t.rt, { webhookUrl: 'http://127.0.0.1:9/never' });
    // A quiet queue: every delivery so far has succeeded, and the table is analyzed so.
    const past = [];
    for (let i = 0; i < 50; i++) past.push(['ServiceOrder.Created', await subjectFor(t.rt, p)] as const);
    await emit(t.rt, ...past);
    await sql`UPDATE webhook_delivery SET status = 'succeeded', attempts = 1, finished_at = now()`.execute(t.rt.db);
    await sql`ANALYZE webhook_delivery`.execute(t.rt.db);

    // Then a burst the statistics know nothing of: two keys with two deliveries each, and
    // 400 other open deliveries.
    const ended = await subjectFor(t.rt, p);
    const retried = await subjectFor(t.rt, p);
    await emit(t.rt, ['ServiceOrder.Created', ended], ['ServiceOrder.Created', retried]);
    await emit(t.rt, ['ServiceOrder.Assigned', ended], ['ServiceOrder.Assigned', retried]);
    const burst = [];
    for (let i = 0; i < 400; i++) burst.push(['ServiceOrder.Created', await subjectFor(t.rt, p)] as const);
    await emit(t.rt, ...burst);

    const open = await t.rt.db
      .selectFrom('webhook_delivery')
      .select(['id', 'ordering_key', 'position', 'blocked'])
      .where('status', '=', 'pending')
      .orderBy('position')
      .execute();
    expect(open).toHaveLength(404);
    const ofKey = (orderId: string) => open.filter((d) => d.ordering_key === orderId);
    const [endedFirst, endedSecond] = ofKey(ended.serviceOrderId!);
    const [retriedFirst, retriedSecond] = ofKey(retried.serviceOrderId!);
    expect(endedSecond && retriedSecond).toBeTruthy();
    // Written behind an open delivery of their key: blocked until it ends.
    await sql`UPDATE webhook_delivery SET blocked = true WHERE id IN (${endedSecond!.id}, ${retriedSecond!.id})`.execute(t.rt.db);
    await sql`UPDATE webhook_delivery SET blocked = false WHERE id = ${retriedSecond!.id}`.execute(t.rt.db);

    const now = new Date();
    const outcomes: SettledAttempt[] = [
      { deliveryId: endedFirst!.id, attempt: 1, startedAt: now, latencyMs: 12, succeeded: true, statusCode: 204, error: null, status: 'succeeded', nextAttemptAt: null },
      { deliveryId: retriedFirst!.id, attempt: 1, startedAt: now, latencyMs: 30, succeeded: false, statusCode: 503, error: 'HTTP 503', status: 'failed', nextAttemptAt: new Date(now.getTime() + 60_000) },
    ];

    // The plan, run and rolled back: each probe of the open-key index is by key, and
    // together they read the two later deliveries of the two keys, not the burst.
    const q = settleStatement(outcomes).compile(t.rt.db);
    const client = await t.rt.pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${q.sql}`, [...q.parameters]);
      // Every read of webhook_delivery but those by primary key (the settled rows, the one unblocked).
      const all = nodes(rows[0]!['QUERY PLAN'][0].Plan);
      expect(all.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'webhook_delivery')).toEqual([]);
      const reads = all.filter((n) => n['Index Name']?.startsWith('webhook_delivery_') && n['Index Name'] !== 'webhook_delivery_pkey');
      expect(reads.length).toBeGreaterThanOrEqual(2);
      for (const read of reads) {
        expect(read['Index Name']).toBe('webhook_delivery_open_key_idx');
        expect(read['Index Cond']).toMatch(/ordering_key/);
      }
      const probes = reads;
      const read = probes.reduce((sum, n) => sum + (n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1), 0);
      expect(read).toBeLessThanOrEqual(4);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }

    // And what it does: the ended key's next delivery may go, the retried key's waits.
    const released = await settleAttempts(t.rt.db, outcomes);
    expect(released.map((r) => r.id)).toEqual([endedSecond!.id]);
    const after = await t.rt.db.selectFrom('webhook_delivery').select(['id', 'status', 'blocked']).where('id', 'in', [endedFirst!.id, endedSecond!.id, retriedFirst!.id, retriedSecond!.id]).execute();
    const state = Object.fromEntries(after.map((d) => [d.id, [d.status, d.blocked]]));
    expect(state[endedFirst!.id]).toEqual(['succeeded', false]);
    expect(state[endedSecond!.id]).toEqual(['pending', false]);
    expect(state[retriedFirst!.id]).toEqual(['failed', false]);
    expect(state[retriedSecond!.id]).toEqual(['pending', true]);
    const attempts = await t.rt.db.selectFrom('webhook_attempt').select(['delivery_id', 'succeeded', 'status_code']).orderBy('status_code').execute();
    expect(attempts).toEqual([
      { delivery_id: endedFirst!.id, succeeded: true, status_code: 204 },
      { delivery_id: retriedFirst!.id, succeeded: false, status_code: 503 },
    ]);
  });
});
