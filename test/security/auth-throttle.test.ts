import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthFailureThrottle } from '../../src/http/auth-failures.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner } from '../support/factories.js';
import { recordReliability } from '../support/reliability.js';

describe('failed authentications per address (unit)', () => {
  it('lets an address fail up to the limit in a minute, then answers how long to wait; a new minute starts over', () => {
    const th = new AuthFailureThrottle(3);
    const t0 = 1_000_000;
    for (let i = 0; i < 3; i++) {
      expect(th.retryAfter('10.0.0.1', t0 + i)).toBeNull();
      th.fail('10.0.0.1', t0 + i);
    }
    expect(th.retryAfter('10.0.0.1', t0 + 10)).toBe(60);
    expect(th.retryAfter('10.0.0.1', t0 + 45_000)).toBe(15);
    expect(th.retryAfter('10.0.0.2', t0 + 10)).toBeNull();
    expect(th.retryAfter('10.0.0.1', t0 + 60_000)).toBeNull();
    expect(new AuthFailureThrottle(0).retryAfter('10.0.0.1')).toBeNull();
  });

  it('forgets the oldest addresses past its bound', () => {
    const th = new AuthFailureThrottle(1, 2);
    for (const a of ['a', 'b', 'c']) th.fail(a, 0);
    expect([th.retryAfter('a', 1), th.retryAfter('b', 1), th.retryAfter('c', 1)]).toEqual([null, 60, 60]);
  });
});

describe('failed authentications per address (HTTP)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { LUMEN_AUTH_FAILURES_PER_MINUTE: '5' } });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('after 5 unknown keys from an address, the next call from it is 429 on every surface, before any lookup', async () => {
    const p = await makePartner(t.rt);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await t.fetch('/api/external/health', { apiKey: `lmn_test_Guess${String(i).padStart(4, '0')}${'x'.repeat(32)}` })).status);
    // The address's minute starts at its first failure: the sixth call comes well within it.
    const refused = await t.fetch('/api/external/health', { apiKey: 'lmn_test_AnotherGuess' });
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({ type: 'urn:lumen:problem:rate-limited', status: 429 });
    // The address is held on every surface, also with a real key, until its minute is over.
    expect((await t.fetch('/api/admin/tenants', { headers: { authorization: 'Bearer lmn_adm_guess' } })).status).toBe(429);
    expect((await t.fetch('/api/external/health', { apiKey: p.apiKey })).status).toBe(429);
    recordReliability('Security: rate limits and TLS', {
      item: 'failed authentications per address',
      figure: '429 with Retry-After after 5 failed keys in a minute (LUMEN_AUTH_FAILURES_PER_MINUTE, default 60), before any database lookup',
      detail: 'counted in memory per instance, on the partner, admin, telemetry and sandbox surfaces',
    });
  });
});
