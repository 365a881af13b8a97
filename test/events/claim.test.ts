/**
 * The claim of due webhook deliveries walks each partner's ready deliveries in order and
 * stops after its batch, even when the deliveries are newer than the table's statistics
 * (a burst): it is a function that turns bitmap scans off (migration 0099), since a
 * bitmap scan reads every due row, probes each and sorts them all to keep the oldest
 * few. A partner the caller holds at its limit is not walked at all, and cannot crowd
 * the other partners out of a claim (migration 0104).
 */
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { claimDueDeliveries } from '../../src/db/repositories/webhook-delivery.repository.js';
import { emit, makeEventPartner, runtimeWithoutWorkers, subjectFor } from './support.js';

const t = runtimeWithoutWorkers();

describe('claiming due webhook deliveries', () => {
  it('plans without bitmap scans, and claims the oldest due first, past the leased ones', async () => {
    const { rows } = await sql<{ config: string[] | null }>`SELECT proconfig AS config FROM pg_proc WHERE proname = 'lumen_claim_webhook_deliveries'`.execute(t.rt.db);
    expect(rows[0]?.config).toContain('enable_bitmapscan=off');

    const p = await makeEventPartner(t.rt, { webhookUrl: 'http://127.0.0.1:9/never' });
    const items = [];
    for (let i = 0; i < 40; i++) items.push(['ServiceOrder.Created', await subjectFor(t.rt, p)] as const);
    await emit(t.rt, ...items);
    const all = await t.rt.db.selectFrom('webhook_delivery').select(['id', 'next_attempt_at', 'position']).where('external_system_id', '=', p.partner.id).orderBy('next_attempt_at').orderBy('position').execute();
    expect(all).toHaveLength(40);
    // Spread the due times so "oldest first" is unambiguous, and lease the five oldest elsewhere.
    await sql`UPDATE webhook_delivery SET next_attempt_at = now() - interval '1 hour' + position * interval '1 second' WHERE external_system_id = ${p.partner.id}`.execute(t.rt.db);
    const ordered = await t.rt.db.selectFrom('webhook_delivery').select('id').where('external_system_id', '=', p.partner.id).orderBy('next_attempt_at').execute();
    await t.rt.db.updateTable('webhook_delivery').set({ lease_until: sql`now() + interval '1 minute'` }).where('id', 'in', ordered.slice(0, 5).map((r) => r.id)).execute();

    const first = await claimDueDeliveries(t.rt.db, 10, 60_000, 100);
    expect(first.map((d) => d.id)).toEqual(ordered.slice(5, 15).map((r) => r.id));
    expect(first[0]).toMatchObject({ external_system_id: p.partner.id, attempts: 0, event_type: 'ServiceOrder.Created', partner_code: p.partner.code });
    expect(JSON.parse(first[0]!.body)).toMatchObject({ eventType: 'ServiceOrder.Created' });
    // The partner counted as holding 95 of at most 100: five more, then none.
    const capped = await claimDueDeliveries(t.rt.db, 10, 60_000, 100, new Map([[p.partner.id, 95]]));
    expect(capped.map((d) => d.id)).toEqual(ordered.slice(15, 20).map((r) => r.id));
    expect(await claimDueDeliveries(t.rt.db, 10, 60_000, 100, new Map([[p.partner.id, 100]]))).toEqual([]);
  });

  it('fills a claim from the other partners when one is capped, and never walks the backlog of a partner held at its limit', async () => {
    await sql`DELETE FROM webhook_delivery`.execute(t.rt.db);
    const busy = await makeEventPartner(t.rt, { webhookUrl: 'http://127.0.0.1:9/busy' });
    const quiet = await makeEventPartner(t.rt, { webhookUrl: 'http://127.0.0.1:9/quiet' });
    const backlog = [];
    for (let i = 0; i < 200; i++) backlog.push(['ServiceOrder.Created', await subjectFor(t.rt, busy)] as const);
    await emit(t.rt, ...backlog);
    const few = [];
    for (let i = 0; i < 5; i++) few.push(['ServiceOrder.Created', await subjectFor(t.rt, quiet)] as const);
    await emit(t.rt, ...few);
    // The busy partner's backlog is older than everything of the quiet one.
    await sql`UPDATE webhook_delivery SET next_attempt_at = now() - interval '1 hour' + position * interval '1 millisecond' WHERE external_system_id = ${busy.partner.id}`.execute(t.rt.db);
    await sql`UPDATE webhook_delivery SET next_attempt_at = now() - interval '1 minute' + position * interval '1 millisecond' WHERE external_system_id = ${quiet.partner.id}`.execute(t.rt.db);
    await sql`ANALYZE webhook_delivery`.execute(t.rt.db);

    // At most 8 per partner, 16 in the claim: the busy partner's 8 oldest and all 5 of the quiet one.
    const claimed = await claimDueDeliveries(t.rt.db, 16, 60_000, 8);
    const byPartner = (id: string) => claimed.filter((d) => d.external_system_id === id).length;
    expect(byPartner(busy.partner.id)).toBe(8);
    expect(byPartner(quiet.partner.id)).toBe(5);
    await sql`UPDATE webhook_delivery SET lease_until = NULL`.execute(t.rt.db);

    // The busy partner held at its limit: the claim reads none of its 200 rows.
    const client = new pg.Client({ connectionString: t.url });
    client.on('error', () => {});
    await client.connect();
    try {
      await client.query("LOAD 'auto_explain'");
      await client.query('SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_analyze = on; SET auto_explain.log_timing = off; SET client_min_messages = log');
      const plans: string[] = [];
      client.on('notice', (n) => plans.push(n.message ?? ''));
      const { rows } = await client.query<{ external_system_id: string }>(
        'SELECT external_system_id FROM lumen_claim_webhook_deliveries(16, 60000, 8, $1::uuid[], $2::int[], $3)',
        [[busy.partner.id], [8], 'Test.Ping'],
      );
      expect(rows.map((r) => r.external_system_id)).toEqual(Array(5).fill(quiet.partner.id));
      // Rows the claim's walks of webhook_delivery handed on (c: a partner's due
      // deliveries, w: the probes for partners), summed over loops: the quiet partner's
      // five and a probe per partner, never the busy partner's backlog.
      const claimPlan = plans.find((m) => m.includes('lumen_claim') === false && m.includes('Update on webhook_delivery'));
      expect(claimPlan).toBeDefined();
      let read = 0;
      for (const m of claimPlan!.matchAll(/Scan[^\n]* on webhook_delivery (?:c|w|w_\d+) [^\n]*\(actual rows=(\d+) loops=(\d+)\)/g)) read += Number(m[1]) * Number(m[2]);
      expect(read).toBeGreaterThanOrEqual(5);
      expect(read).toBeLessThan(20);
    } finally {
      await client.end();
    }
  });

  it('keeps one plan per connection that never scans webhook_delivery, even one made on an empty table (such a plan once made a claim take 40 s)', async () => {
    const { rows } = await sql<{ config: string[] | null }>`SELECT proconfig AS config FROM pg_proc WHERE proname = 'lumen_claim_webhook_deliveries'`.execute(t.rt.db);
    // Planned once per connection (0109): planning the claim cost more than running it.
    expect(rows[0]?.config).toEqual(expect.arrayContaining(['plan_cache_mode=force_generic_plan', 'enable_seqscan=off', 'enable_bitmapscan=off']));

    // One connection, as a delivery worker's: claims while the partner has nothing due
    // (the plan PostgreSQL would keep), then a backlog arrives while the partner is at
    // its limit, so the claim passes over every candidate.
    const client = new pg.Client({ connectionString: t.url });
    client.on('error', () => {});
    await client.connect();
    try {
      await sql`DELETE FROM webhook_delivery`.execute(t.rt.db);
      const p = await makeEventPartner(t.rt, { webhookUrl: 'http://127.0.0.1:9/never' });
      const claim = (held: number) => client.query('SELECT id FROM lumen_claim_webhook_deliveries(128, 60000, 8, $1::uuid[], $2::int[], $3)', [[p.partner.id], [held], 'Lumen.Ping']);
      for (let i = 0; i < 8; i++) expect((await claim(0)).rows).toEqual([]);
      const items = [];
      for (let i = 0; i < 300; i++) items.push(['ServiceOrder.Created', await subjectFor(t.rt, p)] as const);
      await emit(t.rt, ...items);
      // The claim's own plan, as PostgreSQL runs it inside the function.
      await client.query("LOAD 'auto_explain'");
      await client.query("SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET client_min_messages = log");
      const plans: string[] = [];
      client.on('notice', (n) => plans.push(n.message ?? ''));
      expect((await claim(8)).rows).toEqual([]);
      expect((await claim(0)).rows).toHaveLength(8);
      const claims = plans.filter((m) => m.includes('webhook_delivery'));
      expect(claims.length).toBeGreaterThanOrEqual(2);
      for (const plan of claims) expect(plan).not.toMatch(/Seq Scan on webhook_delivery/);
      // The plan kept from the empty table walks the partner's ready range in order.
      const claimPlan = claims.find((m) => m.includes('Update on webhook_delivery'));
      expect(claimPlan).toMatch(/Index Scan using webhook_delivery_ready_partner_idx on webhook_delivery c/);
    } finally {
      await client.end();
    }
  });
});
