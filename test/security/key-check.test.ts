/**
 * Key checks do not leak by timing. Wall-clock timing is not measurable reliably in
 * CI, so this asserts the properties that make it hold: a key is found by its public
 * id, never by comparing secrets in SQL; a wrong key with a valid id takes exactly
 * the path of the right one (same queries, one constant-time comparison of two
 * SHA-256 hashes); every refusal answers the same bytes.
 */
import * as crypto from 'node:crypto';
import { Kysely, PostgresDialect, type LogEvent } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DB } from '../../src/db/schema.js';
import { authenticateAdmin } from '../../src/http/admin-auth.js';
import { authenticatePartner } from '../../src/http/auth.js';
import { hashKey } from '../../src/lib/api-key.js';
import { AppError } from '../../src/lib/errors.js';
import { createAdminToken } from '../../src/services/operators/tokens.js';
import { cliActor } from '../../src/services/audit/log.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner } from '../support/factories.js';
import { recordReliability } from '../support/reliability.js';

vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const SECTION = 'Security: key checks';
const compare = vi.mocked(crypto.timingSafeEqual);

let t: TestApp;
let queries: { sql: string; parameters: readonly unknown[] }[] = [];
/** The service's database access with every statement recorded. */
let db: Kysely<DB>;

beforeAll(async () => {
  t = await startTestApp();
  db = new Kysely<DB>({
    dialect: new PostgresDialect({ pool: t.rt.pool }),
    log: (e: LogEvent) => {
      if (e.level === 'query') queries.push({ sql: e.query.sql, parameters: e.query.parameters });
    },
  });
});
afterAll(async () => {
  await t?.stop();
});
beforeEach(() => {
  queries = [];
  compare.mockClear();
});

/** The same key id with another secret part: a guess that got the public prefix right. */
function sameIdOtherSecret(key: string): string {
  const last = key.at(-1) === 'A' ? 'B' : 'A';
  return key.slice(0, -1) + last;
}

async function attempt(fn: () => Promise<unknown>) {
  queries = [];
  compare.mockClear();
  let outcome: string;
  try {
    await fn();
    outcome = 'accepted';
  } catch (err) {
    outcome = err instanceof AppError ? err.code : `thrown: ${String(err)}`;
  }
  return { outcome, queries: queries.map((q) => ({ ...q })), compares: compare.mock.calls.map(([a, b]) => [(a as Buffer).length, (b as Buffer).length]) };
}

describe('partner API keys', () => {
  it('looks the key up by its id and compares hashes in constant time: a wrong secret takes the path of the right one', async () => {
    const p = await makePartner(t.rt);
    const right = await attempt(() => authenticatePartner(db, { 'x-api-key': p.apiKey }));
    const wrong = await attempt(() => authenticatePartner(db, { 'x-api-key': sameIdOtherSecret(p.apiKey) }));

    expect(right.outcome).toBe('accepted');
    expect(wrong.outcome).toBe('unauthorized');
    expect(right.queries).toHaveLength(1);
    expect(wrong.queries).toEqual(right.queries);
    expect(right.compares).toEqual([[32, 32]]);
    expect(wrong.compares).toEqual([[32, 32]]);

    // Only the public id reaches the database: never the key, its secret part or its hash.
    const [q] = right.queries;
    expect(q!.parameters).toContain(p.keyPrefix.slice(-8));
    const secretish = [p.apiKey, p.apiKey.slice(-32), hashKey(p.apiKey).toString('hex')];
    for (const s of secretish) expect(JSON.stringify(q!.parameters)).not.toContain(s);
    expect(q!.parameters.some((x) => Buffer.isBuffer(x))).toBe(false);
    expect(q!.sql).not.toMatch(/where[^]*key_hash/i);
    recordReliability(SECTION, { item: 'wrong secret with a valid key id: same queries and comparisons as the right key', figure: 'identical (1 query, 1 timingSafeEqual of 32-byte hashes)', detail: 'partner keys, authenticatePartner' });
  });

  it('refuses unknown ids and malformed keys without comparing, and never looks them up by anything secret', async () => {
    const p = await makePartner(t.rt);
    const unknown = await attempt(() => authenticatePartner(db, { 'x-api-key': `lmn_test_ZZZZZZZZ${'a'.repeat(32)}` }));
    expect(unknown).toMatchObject({ outcome: 'unauthorized', compares: [] });
    expect(unknown.queries.map((q) => q.sql)).toEqual([(await attempt(() => authenticatePartner(db, { 'x-api-key': p.apiKey }))).queries[0]!.sql]);
    for (const malformed of ['', 'x', p.apiKey + 'x', p.apiKey.replace('lmn_test_', 'lmn_adm_').slice(0, -1), `Bearer ${p.apiKey}`]) {
      const r = await attempt(() => authenticatePartner(db, { 'x-api-key': malformed }));
      expect(r, malformed).toMatchObject({ outcome: 'unauthorized', queries: [], compares: [] });
    }
  });

  it('answers every refusal with the same bytes, whatever was wrong with the key', async () => {
    const p = await makePartner(t.rt);
    const bodies = new Set<string>();
    const headerSets = new Set<string>();
    for (const key of [sameIdOtherSecret(p.apiKey), `lmn_test_ZZZZZZZZ${'a'.repeat(32)}`, 'not-a-key', '']) {
      const res = await t.fetch('/api/external/health', { headers: { 'x-api-key': key, 'x-request-id': 'fixed-request-id' } });
      expect(res.status).toBe(401);
      bodies.add(await res.text());
      const headers = [...res.headers.entries()].filter(([k]) => !['date', 'content-length'].includes(k));
      headerSets.add(JSON.stringify(headers));
    }
    expect(bodies.size).toBe(1);
    expect(headerSets.size).toBe(1);
  });
});

const ADMIN_REQUEST = { method: 'get', client: { address: '127.0.0.1', secure: false } };

describe('admin tokens', () => {
  it('checks a wrong token with a valid id exactly as the right one', async () => {
    const issued = await createAdminToken(t.rt, cliActor(), 'key-check');
    const right = await attempt(() => authenticateAdmin(db, t.rt.config, { authorization: `Bearer ${issued.token}` }, ADMIN_REQUEST));
    const wrong = await attempt(() => authenticateAdmin(db, t.rt.config, { authorization: `Bearer ${sameIdOtherSecret(issued.token)}` }, ADMIN_REQUEST));
    expect(right.outcome).toBe('accepted');
    expect(wrong.outcome).toBe('invalid-admin-token');
    expect(wrong.queries).toEqual(right.queries);
    expect(right.compares).toEqual([[32, 32]]);
    expect(wrong.compares).toEqual([[32, 32]]);
    expect(JSON.stringify(right.queries[0]!.parameters)).not.toContain(issued.token.slice(-32));
    recordReliability(SECTION, { item: 'wrong admin token with a valid id: same queries and comparisons as the right one', figure: 'identical (1 query, 1 timingSafeEqual of 32-byte hashes)', detail: 'admin tokens, authenticateAdmin' });
  });
});
