import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { latestRequestedAt, nextCursor, parseBatch, parseDateTime, EnvelopeError } from '../../src/services/partner-poll/envelope.js';
import { parseRetryAfter, pollUrl } from '../../src/services/partner-poll/fetch.js';
import { backoffMs } from '../../src/services/partner-poll/service.js';
import { dueAt } from '../../src/services/partner-poll/schedule.js';
import { canonicalJson, itemHash, protocolNumberOf, storedCopy } from '../../src/services/partner-poll/store.js';
import type { PollStateRow } from '../../src/db/repositories/partner-poll.repository.js';
import { requestedPollEnded, type PartnerPollStatus } from '../../src/services/partner-poll/status.js';

const at = (s: string) => new Date(s);

describe('reading a partner batch (N7 envelopes)', () => {
  it('reads the recommended envelope', () => {
    const b = parseBatch({ items: [{ a: 1 }], nextSince: '2026-03-14T14:02:11.000Z', hasMore: true });
    expect(b).toEqual({ items: [{ a: 1 }], nextSince: at('2026-03-14T14:02:11.000Z'), hasMore: true, listField: 'items' });
  });

  it('reads a bare array, and the list under requests or data', () => {
    expect(parseBatch([{ a: 1 }, { a: 2 }])).toMatchObject({ items: [{ a: 1 }, { a: 2 }], nextSince: null, hasMore: false, listField: 'array' });
    expect(parseBatch({ requests: [{ a: 1 }], hasMore: false })).toMatchObject({ items: [{ a: 1 }], listField: 'requests' });
    expect(parseBatch({ data: [], nextSince: '2026-03-14T11:02:11-03:00' })).toMatchObject({ items: [], nextSince: at('2026-03-14T14:02:11.000Z'), listField: 'data' });
    // items wins when several are present
    expect(parseBatch({ data: [1], items: [2] }).items).toEqual([2]);
  });

  it('treats absent or null hasMore as false and null nextSince as absent', () => {
    expect(parseBatch({ items: [] })).toMatchObject({ hasMore: false, nextSince: null });
    expect(parseBatch({ items: [], hasMore: null, nextSince: null })).toMatchObject({ hasMore: false, nextSince: null });
  });

  it('refuses anything else, saying what is wrong', () => {
    const cases: [unknown, RegExp][] = [
      [null, /null/],
      ['items', /a string/],
      [42, /a number/],
      [{ results: [] }, /no "items" list/],
      [{ items: {} }, /"items" is an object, not an array/],
      [{ items: null }, /"items" is null/],
      [{ items: [], hasMore: 'yes' }, /"hasMore" is a string/],
      [{ items: [], nextSince: 'yesterday' }, /"nextSince" is not an ISO 8601 date-time/],
      [{ items: [], nextSince: '2026-03-14' }, /"nextSince"/],
      [{ items: [], nextSince: '2026-03-14T10:00:00' }, /"nextSince"/],
      [{ items: [], nextSince: 1710410531 }, /"nextSince"/],
    ];
    for (const [body, message] of cases) expect(() => parseBatch(body), JSON.stringify(body)).toThrow(message);
    expect(() => parseBatch(null)).toThrow(EnvelopeError);
  });

  it('parses RFC 3339 date-times with any offset, cutting (never rounding) below milliseconds', () => {
    expect(parseDateTime('2026-03-14T09:30:00.000-03:00')).toEqual(at('2026-03-14T12:30:00.000Z'));
    expect(parseDateTime('2026-03-14T12:30:00Z')).toEqual(at('2026-03-14T12:30:00.000Z'));
    expect(parseDateTime('2026-03-14t12:30:00.9999999z')).toEqual(at('2026-03-14T12:30:00.999Z'));
    expect(parseDateTime('2026-03-14 12:30:00+00:00')).toEqual(at('2026-03-14T12:30:00.000Z'));
    for (const bad of ['2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z', '2026-03-14T24:00:00Z', '14/03/2026', '', 'T', 5, null]) expect(parseDateTime(bad), String(bad)).toBeNull();
  });

  it('moves the cursor to nextSince, else to the largest requestedAt, never back, and keeps it for an empty batch', () => {
    const cur = at('2026-03-14T10:00:00.000Z');
    expect(nextCursor(cur, parseBatch({ items: [{ requestedAt: '2026-03-14T11:00:00Z' }], nextSince: '2026-03-14T10:30:00Z' }))).toEqual(at('2026-03-14T10:30:00.000Z'));
    expect(nextCursor(cur, parseBatch([{ requestedAt: '2026-03-14T09:00:00-03:00' }, { requestedAt: '2026-03-14T11:00:00Z' }, { requestedAt: 'garbage' }, 'x']))).toEqual(at('2026-03-14T12:00:00.000Z'));
    expect(nextCursor(cur, parseBatch([{ requestedAt: '2026-01-01T00:00:00Z' }]))).toEqual(cur);
    expect(nextCursor(cur, parseBatch({ items: [] }))).toEqual(cur);
    expect(nextCursor(null, parseBatch({ items: [] }))).toBeNull();
    expect(latestRequestedAt([{ requestedAt: 7 }, null, []])).toBeNull();
  });
});

describe('the poll request', () => {
  it('adds since (UTC, milliseconds) and limit, keeping the query of the registered URL', () => {
    expect(pollUrl('https://p.example/api/lumen?tenant=sp&since=old', at('2026-03-14T09:30:00-03:00'), 200)).toBe('https://p.example/api/lumen?tenant=sp&since=2026-03-14T12%3A30%3A00.000Z&limit=200');
    expect(pollUrl('https://p.example/requests', null, 200)).toBe('https://p.example/requests?limit=200');
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('120')).toBe(120);
    expect(parseRetryAfter(['7'])).toBe(7);
    expect(parseRetryAfter(new Date(Date.parse('2026-03-14T12:00:30Z')).toUTCString(), Date.parse('2026-03-14T12:00:00Z'))).toBe(30);
    expect(parseRetryAfter(undefined)).toBeNull();
    expect(parseRetryAfter('soon')).toBeNull();
  });
});

describe('backoff and due time', () => {
  it('doubles from one second with jitter and never waits longer than the interval, Retry-After included', () => {
    const low = () => 0;
    const high = () => 1;
    expect(backoffMs(1, 180, null, high)).toBe(1000);
    expect(backoffMs(1, 180, null, low)).toBe(500);
    expect(backoffMs(4, 180, null, high)).toBe(8000);
    expect(backoffMs(30, 180, null, high)).toBe(180_000);
    expect(backoffMs(30, 180, null, low)).toBe(90_000);
    expect(backoffMs(1, 180, 60, low)).toBe(60_000);
    expect(backoffMs(1, 180, 3600, low)).toBe(180_000);
    expect(backoffMs(10, 1, null, high)).toBe(1000);
    for (let n = 1; n < 40; n++) expect(backoffMs(n, 5, 999)).toBeLessThanOrEqual(5000);
  });

  it('is due at once without a previous attempt or on request, else by the plan capped at the current interval', () => {
    const now = at('2026-03-14T12:00:00.000Z');
    const state = (over: Partial<PollStateRow>) => ({ last_attempt_at: at('2026-03-14T11:59:50.000Z'), next_poll_at: at('2026-03-14T12:02:50.000Z'), poll_requested_at: null, ...over }) as PollStateRow;
    expect(dueAt(undefined, 180, now)).toEqual(now);
    expect(dueAt(state({ last_attempt_at: null }), 180, now)).toEqual(now);
    expect(dueAt(state({ poll_requested_at: now }), 180, now)).toEqual(now);
    expect(dueAt(state({}), 180, now)).toEqual(at('2026-03-14T12:02:50.000Z'));
    // The interval was shortened to 30 s after the plan was made: due 30 s after the last attempt.
    expect(dueAt(state({}), 30, now)).toEqual(at('2026-03-14T12:00:20.000Z'));
    // Overdue: now.
    expect(dueAt(state({}), 5, now)).toEqual(now);
  });
});

describe('rejected items', () => {
  it('hashes items by canonical JSON, keeps a shortened copy and reads a usable protocolNumber', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}');
    expect(itemHash({ a: 1, b: 2 }).equals(itemHash({ b: 2, a: 1 }))).toBe(true);
    expect(itemHash({ a: 1 }).equals(itemHash({ a: 2 }))).toBe(false);
    const big = 'A'.repeat(20_000);
    expect(storedCopy({ attachments: [{ contentBase64: big, type: 'photo' }] })).toEqual({ attachments: [{ contentBase64: '[20000 characters not kept]', type: 'photo' }] });
    expect(protocolNumberOf({ protocolNumber: '156-1' })).toBe('156-1');
    for (const v of [{ protocolNumber: 12 }, { protocolNumber: ' ' }, null, [], 'x']) expect(protocolNumberOf(v)).toBeNull();
  });
});

describe('polling configuration', () => {
  const base = { LUMEN_SECRET_KEY: '22'.repeat(32), LUMEN_ENVIRONMENT: 'test' };
  it('defaults to a 30 s timeout and a 64 MiB answer, and reads LUMEN_POLL_TIMEOUT_MS and LUMEN_POLL_MAX_RESPONSE', () => {
    expect(loadConfig(base)).toMatchObject({ pollTimeoutMs: 30_000, pollMaxResponseBytes: 64 * 1024 * 1024 });
    expect(loadConfig({ ...base, LUMEN_POLL_TIMEOUT_MS: '1500', LUMEN_POLL_MAX_RESPONSE: '8MiB' })).toMatchObject({ pollTimeoutMs: 1500, pollMaxResponseBytes: 8 * 1024 * 1024 });
  });

  it('names every bad polling variable at once', () => {
    expect(() => loadConfig({ ...base, LUMEN_POLL_TIMEOUT_MS: '5', LUMEN_POLL_MAX_RESPONSE: 'lots' })).toThrow(ConfigError);
    try {
      loadConfig({ ...base, LUMEN_POLL_TIMEOUT_MS: '5', LUMEN_POLL_MAX_RESPONSE: 'lots' });
    } catch (err) {
      const problems = (err as ConfigError).problems.join('\n');
      expect(problems).toContain('LUMEN_POLL_TIMEOUT_MS');
      expect(problems).toContain('LUMEN_POLL_MAX_RESPONSE');
    }
  });
});

describe('when a requested poll has ended (poll-now --wait)', () => {
  const base = { pollRequestedAt: null, lastAttemptAt: '2026-03-14T12:00:01.000Z', lastError: null } as const;
  const status = (over: Record<string, unknown>) => ({ ...base, ...over }) as unknown as PartnerPollStatus;

  it('not while the run is under way, though its first page already recorded a success', () => {
    expect(requestedPollEnded(status({ lastSuccessAt: '2026-03-14T12:00:01.200Z', nextPollAt: '2026-03-14T12:00:00.900Z' }))).toBe(false);
  });
  it('once the run handed the chain over (next poll at or after the attempt), or the partner stopped being polled', () => {
    expect(requestedPollEnded(status({ lastSuccessAt: '2026-03-14T12:00:01.300Z', nextPollAt: '2026-03-14T12:03:01.000Z' }))).toBe(true);
    expect(requestedPollEnded(status({ lastSuccessAt: '2026-03-14T12:00:01.300Z', nextPollAt: null }))).toBe(true);
  });
  it('not while the request is pending, and not before any attempt', () => {
    expect(requestedPollEnded(status({ pollRequestedAt: '2026-03-14T12:00:02.000Z', lastSuccessAt: '2026-03-14T12:00:01.300Z', nextPollAt: '2026-03-14T12:00:02.000Z' }))).toBe(false);
    expect(requestedPollEnded(status({ lastAttemptAt: null, lastSuccessAt: null, nextPollAt: '2026-03-14T12:00:02.000Z' }))).toBe(false);
  });
});
