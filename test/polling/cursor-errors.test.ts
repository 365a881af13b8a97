import { PLATFORM_ACCESS } from '../../src/services/operators/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPollState } from '../../src/db/repositories/partner-poll.repository.js';
import { reconcilePartnerPolls } from '../../src/services/partner-poll/service.js';
import { getPartnerPollStatus } from '../../src/services/partner-poll/status.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePollingPartner, PARTNER_KEY, request, startPartnerStub, type PartnerStub, type StubReply } from './support.js';

let t: TestApp;
const stubs: PartnerStub[] = [];
beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_POLL_TIMEOUT_MS: '400' } });
});
afterAll(async () => {
  await Promise.all(stubs.map((s) => s.close()));
  await t?.stop();
});

async function stub(...args: Parameters<typeof startPartnerStub>) {
  const s = await startPartnerStub(...args);
  stubs.push(s);
  return s;
}

const cursorOf = async (id: string) => (await findPollState(t.rt.db, id))?.cursor?.toISOString() ?? null;

describe('partner polling: cursor and partner errors', () => {
  it('calls without since first, with the partner-issued key and limit=200, then sends nextSince back as since', async () => {
    const s = await stub((call) =>
      call.n === 1
        ? { json: { items: [request('CUR-1', '2026-03-14T09:30:00.000-03:00')], nextSince: '2026-03-14T12:30:00.000Z', hasMore: false } }
        : { json: { items: [], hasMore: false } },
    );
    const p = await makePollingPartner(t.rt, s.url);
    await reconcilePartnerPolls(t.rt);
    await expect.poll(() => s.calls.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    expect(s.calls[0]).toMatchObject({ since: null, limit: '200', apiKey: PARTNER_KEY });
    expect(s.calls[1]).toMatchObject({ since: '2026-03-14T12:30:00.000Z', limit: '200', apiKey: PARTNER_KEY });
    // An empty batch keeps the cursor.
    await expect.poll(() => s.calls.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    expect(s.calls[2]!.since).toBe('2026-03-14T12:30:00.000Z');
    const status = await getPartnerPollStatus(t.rt, PLATFORM_ACCESS, p.code);
    expect(status).toMatchObject({ polling: true, cursor: '2026-03-14T12:30:00.000Z', lastError: null, consecutiveFailures: 0, totals: { itemsAccepted: 1 } });
    expect(status.lastSuccessAt).not.toBeNull();
    expect(status.lagSeconds).toBeLessThanOrEqual(5);
  });

  it('keeps the cursor while the partner answers 500, records the error, backs off no longer than the interval, and resumes', async () => {
    let failing = true;
    const s = await stub((call) => {
      if (call.n === 1) return { json: { items: [request('ERR-1', '2026-03-14T10:00:00.000Z')], nextSince: '2026-03-14T10:00:00.000Z' } };
      if (failing) return { status: 500, body: 'database is down' };
      return { json: { items: [request('ERR-2', '2026-03-14T10:05:00.000Z')], nextSince: '2026-03-14T10:05:00.000Z' } };
    });
    const p = await makePollingPartner(t.rt, s.url, { interval: 2 });
    await reconcilePartnerPolls(t.rt);
    // Sample the state while the partner fails: every planned retry is within the interval.
    const planned: number[] = [];
    await expect
      .poll(
        async () => {
          const st = await findPollState(t.rt.db, p.id);
          if (st?.last_error_at && st.next_poll_at && st.consecutive_failures > 0) planned.push(st.next_poll_at.getTime() - st.last_error_at.getTime());
          return s.calls.length;
        },
        { timeout: 20_000, interval: 100 },
      )
      .toBeGreaterThanOrEqual(5);
    expect(planned.length).toBeGreaterThan(0);
    for (const delay of planned) expect(delay).toBeLessThanOrEqual(2000);
    for (const c of s.calls.slice(1)) expect(c.since).toBe('2026-03-14T10:00:00.000Z');
    expect(await cursorOf(p.id)).toBe('2026-03-14T10:00:00.000Z');
    const failed = await getPartnerPollStatus(t.rt, PLATFORM_ACCESS, p.code);
    expect(failed.lastError).toMatchObject({ kind: 'http-status', message: expect.stringContaining('500') });
    expect(failed.lastError!.message).toContain('database is down');
    expect(failed.consecutiveFailures).toBeGreaterThanOrEqual(3);

    failing = false;
    await expect.poll(async () => cursorOf(p.id), { timeout: 10_000 }).toBe('2026-03-14T10:05:00.000Z');
    const recovered = await getPartnerPollStatus(t.rt, PLATFORM_ACCESS, p.code);
    expect(recovered.consecutiveFailures).toBe(0);
    expect(Date.parse(recovered.lastSuccessAt!)).toBeGreaterThan(Date.parse(recovered.lastError!.at));
    expect(recovered.totals.pollsFailed).toBeGreaterThanOrEqual(3);
    expect(recovered.totals.itemsAccepted).toBe(2);
  });

  it('honours Retry-After, but never beyond the interval', async () => {
    const s = await stub((call) => (call.n <= 2 ? { status: 429, headers: { 'retry-after': call.n === 1 ? '2' : '3600' } } : { status: 503 }));
    const p = await makePollingPartner(t.rt, s.url, { interval: 3 });
    await reconcilePartnerPolls(t.rt);
    const delays = new Map<number, number>();
    await expect
      .poll(
        async () => {
          const st = await findPollState(t.rt.db, p.id);
          if (st?.last_error_at && st.next_poll_at && st.consecutive_failures > 0) delays.set(st.consecutive_failures, st.next_poll_at.getTime() - st.last_error_at.getTime());
          return delays.has(1) && delays.has(2);
        },
        { timeout: 20_000, interval: 50 },
      )
      .toBe(true);
    // Retry-After 2 s raises the first backoff (0.5-1 s) to 2 s; Retry-After 3600 s is cut to the 3 s interval.
    expect(delays.get(1)).toBe(2000);
    expect(delays.get(2)).toBe(3000);
  });

  it('treats a timeout, invalid JSON and a wrong envelope as failed polls that keep the cursor', async () => {
    const replies: StubReply[] = [
      { json: { items: [request('BAD-1', '2026-03-14T11:00:00.000Z')], nextSince: '2026-03-14T11:00:00.000Z' } },
      { hang: true },
      { body: '{"items": [', headers: { 'content-type': 'application/json' } },
      { json: { results: [] } },
      { json: { items: [], nextSince: 'yesterday' } },
      { json: { items: {} } },
      { status: 302, headers: { location: 'https://elsewhere.example/requests' } },
    ];
    const s = await stub((call) => replies[call.n - 1] ?? { json: { items: [] } });
    const p = await makePollingPartner(t.rt, s.url, { interval: 1 });
    await reconcilePartnerPolls(t.rt);
    const kinds: string[] = [];
    await expect
      .poll(
        async () => {
          const st = await getPartnerPollStatus(t.rt, PLATFORM_ACCESS, p.code);
          if (st.lastError && kinds.at(-1) !== `${st.lastError.kind}@${st.lastError.at}`) kinds.push(`${st.lastError.kind}@${st.lastError.at}`);
          return s.calls.length;
        },
        { timeout: 20_000, interval: 50 },
      )
      .toBeGreaterThanOrEqual(8);
    const seen = new Set(kinds.map((k) => k.split('@')[0]));
    for (const kind of ['timeout', 'invalid-json', 'invalid-envelope', 'redirect']) expect(seen).toContain(kind);
    expect(s.calls.slice(1, 7).every((c) => c.since === '2026-03-14T11:00:00.000Z')).toBe(true);
    expect(await cursorOf(p.id)).toBe('2026-03-14T11:00:00.000Z');
  });
});
