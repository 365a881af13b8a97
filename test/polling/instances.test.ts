import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { reconcilePartnerPolls } from '../../src/services/partner-poll/service.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { makePollingPartner, request, startPartnerStub, type PartnerStub } from './support.js';

const apps: TestApp[] = [];
let db: TestDatabase | null = null;
let s: PartnerStub | null = null;
afterAll(async () => {
  await s?.close();
  for (const a of apps) await a.stop().catch(() => {});
  await db?.drop();
});

describe('partner polling across service instances', () => {
  it('polls each partner from one instance at a time, and goes on from the other when one stops', async () => {
    db = await createTestDatabase();
    const a = await startTestApp({ db });
    const b = await startTestApp({ db });
    apps.push(a, b);

    let n = 0;
    // A slow partner (400 ms per answer) polled every second: two pollers would overlap.
    s = await startPartnerStub(() => ({ delayMs: 400, json: { items: [request(`INS-${++n}`, new Date(Date.parse('2026-03-14T12:00:00Z') + n * 1000).toISOString())] } }));
    const p = await makePollingPartner(a.rt, s.url, { interval: 1 });
    // Both instances' reconcilers run (as their minute crons would); still one chain.
    await Promise.all([reconcilePartnerPolls(a.rt), reconcilePartnerPolls(b.rt), reconcilePartnerPolls(a.rt)]);
    const started = Date.now();
    await expect.poll(() => s!.calls.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(6);
    const elapsed = Date.now() - started;
    expect(s.maxConcurrent).toBe(1);
    // One poller: at most one call per interval (1 s) plus its 400 ms answer, never two chains' worth.
    expect(s.calls.length).toBeLessThanOrEqual(Math.ceil(elapsed / 1000) + 1);
    for (let i = 1; i < s.calls.length; i++) expect(s.calls[i]!.at - s.calls[i - 1]!.at).toBeGreaterThanOrEqual(900);

    // Never more than one job of the partner queued or running.
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'partner-poll' AND singleton_key = ${p.id} AND state IN ('created', 'retry', 'active')`.execute(a.rt.db);
    expect(rows[0]!.n).toBe(1);

    // One instance stops; the other keeps polling.
    await a.stop();
    const before = s.calls.length;
    await expect.poll(() => s!.calls.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(before + 3);
    expect(s.maxConcurrent).toBe(1);
    const alerts = await b.rt.db.selectFrom('alert').select('protocol_number').where('external_system_id', '=', p.id).execute();
    const protocols = alerts.map((x) => x.protocol_number);
    expect(new Set(protocols).size).toBe(protocols.length);
  }, 90_000);
});
