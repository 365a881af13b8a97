import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { createTelemetryKey } from '../../src/services/city-data/index.js';
import { recordReliability } from '../support/reliability.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_RATE_LIMIT_PER_MINUTE: '5' } });
});
afterAll(async () => {
  await t?.stop();
});

describe('rate limits (N10)', () => {
  it('answers 429 problem+json with Retry-After and RateLimit headers once the partner quota is spent', async () => {
    const p = await makePartner(t.rt);
    await t.rt.db.updateTable('external_system').set({ rate_limit_per_minute: 3 }).where('id', '=', p.id).execute();
    // Pin every call into one window: a window boundary between calls would reset the count.
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 4; i++) {
      last = await t.fetch('/api/external/health', { apiKey: p.apiKey });
      statuses.push(last.status);
    }
    if (statuses.filter((s) => s === 429).length === 0) {
      // The minute turned during the loop; the next 4 calls are certainly in one window.
      statuses.length = 0;
      for (let i = 0; i < 4; i++) {
        last = await t.fetch('/api/external/health', { apiKey: p.apiKey });
        statuses.push(last.status);
      }
    }
    expect(statuses.slice(-1)).toEqual([429]);
    const res = last!;
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(res.headers.get('ratelimit-policy')).toBe('"default";q=3;w=60');
    expect(res.headers.get('ratelimit')).toBe(`"default";r=0;t=${retryAfter}`);
    const body = (await res.json()) as { type: string; status: number };
    expect(body).toMatchObject({ type: 'urn:lumen:problem:rate-limited', status: 429 });
    recordReliability('Security: rate limits and TLS', { item: 'per-partner rate limit', figure: '429 after the quota (3/min), with Retry-After, RateLimit-Policy and RateLimit', detail: 'quotas per key, the service default for partners without one; unauthenticated requests not counted; one window shared by every instance (test/e2e/faults/instances.test.ts)' });
  });

  it('counts each partner separately and uses the service default when the partner has none', async () => {
    const a = await makePartner(t.rt);
    const b = await makePartner(t.rt);
    const codes: number[] = [];
    for (let i = 0; i < 7; i++) codes.push((await t.fetch('/api/external/health', { apiKey: a.apiKey })).status);
    expect(codes.filter((c) => c === 200).length).toBeGreaterThanOrEqual(5);
    expect(codes).toContain(429);
    expect((await t.fetch('/api/external/health', { apiKey: b.apiKey })).status).toBe(200);
  });

  it("counts nothing for a wrong secret of a known key id, a call without the operation's scope, or a disabled partner", async () => {
    const p = await makePartner(t.rt, { scopes: ['canCreateAlerts'] });
    const counted = async () => (await sql<{ n: number }>`SELECT coalesce(sum(count), 0) AS n FROM rate_limit_window WHERE subject = ${p.id}`.execute(t.rt.db)).rows[0]!.n;
    // Same key id, another secret: 401, and the partner's quota is untouched.
    const forged = p.apiKey.slice(0, -4) + (p.apiKey.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    for (let i = 0; i < 3; i++) expect((await t.fetch('/api/external/health', { apiKey: forged })).status).toBe(401);
    // Reading city data without canReadCityData: 403, not counted.
    for (let i = 0; i < 3; i++) expect((await t.fetch('/api/external/poles', { apiKey: p.apiKey })).status).toBe(403);
    expect(Number(await counted())).toBe(0);
    expect((await t.fetch('/api/external/health', { apiKey: p.apiKey })).status).toBe(200);
    expect(Number(await counted())).toBe(1);
    await t.rt.db.updateTable('external_system').set({ enabled: false }).where('id', '=', p.id).execute();
    expect((await t.fetch('/api/external/health', { apiKey: p.apiKey })).status).toBe(403);
    expect(Number(await counted())).toBe(1);
  });

  it('counts GET /api/external/events like every endpoint, and an idle poll writes nothing', async () => {
    const p = await makePartner(t.rt, { transport: 'polling' });
    const codes: number[] = [];
    for (let i = 0; i < 12; i++) codes.push((await t.fetch('/api/external/events', { apiKey: p.apiKey })).status);
    // Two windows at most in 12 quick calls: at least 2 refused whatever the minute does.
    expect(codes.filter((c) => c === 429).length).toBeGreaterThanOrEqual(2);

    const idle = await makePartner(t.rt, { transport: 'polling' });
    expect((await t.fetch('/api/external/events', { apiKey: idle.apiKey })).status).toBe(200);
    const version = () => t.rt.db.selectFrom('event_cursor').select(sql<string>`xmin::text`.as('v')).where('external_system_id', '=', idle.id).executeTakeFirstOrThrow();
    const before = await version();
    for (let i = 0; i < 3; i++) {
      const res = await t.fetch(`/api/external/events?since=${encodeURIComponent('1970-01-01T00:00:00.000Z')}`, { apiKey: idle.apiKey });
      if (res.status === 429) break;
      expect(((await res.json()) as { events: unknown[] }).events).toEqual([]);
    }
    expect(await version()).toEqual(before);
  });

  it('limits telemetry keys like partner keys', async () => {
    const tenant = await makeTenant(t.rt);
    const key = await createTelemetryKey(t.rt, { tenantId: tenant.id });
    const codes: number[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await t.fetch('/api/telemetry/reports', { method: 'POST', apiKey: key.apiKey, json: { reports: [{ deviceIdentifier: 'TG-X', online: true, relayOn: true, reportedAt: '2026-03-14T00:00:00Z' }] } });
      codes.push(res.status);
    }
    expect(codes.filter((c) => c === 429).length).toBeGreaterThanOrEqual(2);
    expect(codes.filter((c) => c !== 429).every((c) => c === 200)).toBe(true);
  });

  it('does not count unauthenticated requests against a partner', async () => {
    const p = await makePartner(t.rt);
    for (let i = 0; i < 10; i++) expect((await t.fetch('/api/external/health', { apiKey: 'lmn_test_AAAAAAAA' })).status).toBe(401);
    expect((await t.fetch('/api/external/health', { apiKey: p.apiKey })).status).toBe(200);
  });
});
