/**
 * Partner authentication from the in-process key cache (issue 26): two `lumen serve`
 * processes (tsx src/main.ts serve) on one database answer a key from their caches (the
 * api_key table locked against reads, they still answer); a rotation and a disable made
 * elsewhere hold on both within 1 s; a lost listening connection drops the cache until
 * it is back; the rate limit counted in process holds across both within the documented
 * bound (docs/rate-limits.md).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotatePartnerKey, setPartnerEnabled } from '../../src/services/partners/index.js';
import { TEST_SECRET_KEY } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { freePort } from '../support/free-port.js';
import { serveLumen, type ServedLumen } from '../support/serve.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/lib/logger.js';

/** One `lumen serve` (tsx src/main.ts serve) and its answers' statuses. */
class Serve {
  constructor(private readonly served: ServedLumen) {}
  static async start(env: Record<string, string>): Promise<Serve> {
    return new Serve(await serveLumen(env, await freePort()));
  }
  async status(pathName: string, apiKey: string): Promise<number> {
    return (await fetch(`${this.served.base}${pathName}`, { headers: { 'x-api-key': apiKey }, signal: AbortSignal.timeout(5_000) })).status;
  }
  output() {
    return this.served.output();
  }
  stop() {
    return this.served.stop();
  }
}

/** Polls `check` until truthy, within `timeoutMs` (25 ms between tries). */
async function until<T>(check: () => T | Promise<T>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

let db: TestDatabase;
let rt: Runtime;
let a: Serve;
let b: Serve;
const dataDirs: string[] = [];

function env(extra: Record<string, string> = {}): Record<string, string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lumen-keycache-'));
  dataDirs.push(dir);
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/root',
    DATABASE_URL: db.url,
    LUMEN_DATA_DIR: dir,
    LUMEN_ENVIRONMENT: 'test',
    LUMEN_SECRET_KEY: TEST_SECRET_KEY,
    LUMEN_ALLOW_LOOPBACK: 'true',
    LUMEN_LOG_LEVEL: 'warn',
    LUMEN_AUTH_FAILURES_PER_MINUTE: '0',
    HOST: '127.0.0.1',
    ...extra,
  };
}

beforeAll(async () => {
  db = await createTestDatabase();
  rt = await openRuntime(loadConfig(env()), createLogger('silent'), { migrate: false, work: false, poolSize: 4 });
  [a, b] = await Promise.all([Serve.start(env()), Serve.start(env())]);
}, 120_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await rt?.close();
  await db?.drop().catch(() => {});
  for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
});

/** Runs `work` while a transaction holds api_key locked against every read: a request that reads a key hangs. */
async function withKeysLocked<T>(work: () => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    await c.query('BEGIN');
    await c.query('LOCK TABLE api_key IN ACCESS EXCLUSIVE MODE');
    return await work();
  } finally {
    await c.query('ROLLBACK').catch(() => {});
    await c.end();
  }
}

describe('the partner key cache on two instances', () => {
  it('answers from the cache on both, and neither accepts a rotated-away key or a disabled partner 1 s later', async () => {
    const tenant = await makeTenant(rt, { name: 'Porto Alegre' });
    const p = await makePartner(rt, { tenantId: tenant.id, scopes: ['canReadCityData'] });
    for (const s of [a, b]) expect(await s.status('/api/external/health', p.apiKey)).toBe(200);
    // From the cache: with api_key locked, a database lookup would wait for the lock.
    await withKeysLocked(async () => {
      for (const s of [a, b]) for (let i = 0; i < 3; i++) expect(await s.status('/api/external/health', p.apiKey)).toBe(200);
    });

    const rotated = await rotatePartnerKey(rt, p.code);
    await until(async () => (await a.status('/api/external/health', p.apiKey)) === 401 && (await b.status('/api/external/health', p.apiKey)) === 401, 1_000, 'old key refused on both');
    for (const s of [a, b]) expect(await s.status('/api/external/health', rotated.apiKey)).toBe(200);
    // The new key is cached now too.
    await withKeysLocked(async () => {
      for (const s of [a, b]) expect(await s.status('/api/external/health', rotated.apiKey)).toBe(200);
    });

    await setPartnerEnabled(rt, p.code, false);
    await until(async () => (await a.status('/api/external/health', rotated.apiKey)) === 403 && (await b.status('/api/external/health', rotated.apiKey)) === 403, 1_000, 'disabled partner refused on both');
    await setPartnerEnabled(rt, p.code, true);
    await until(async () => (await a.status('/api/external/health', rotated.apiKey)) === 200 && (await b.status('/api/external/health', rotated.apiKey)) === 200, 1_000, 'enabled again on both');

    // A scope removed by hand (SQL): the trigger notifies as well.
    await rt.db.updateTable('external_system').set({ scopes: [] }).where('id', '=', p.id).execute();
    await until(async () => (await a.status('/api/external/poles', rotated.apiKey)) === 403 && (await b.status('/api/external/poles', rotated.apiKey)) === 403, 1_000, 'scope removal on both');
  }, 60_000);

  it('drops the cache while the listening connection is lost, and reads the database until it is back', async () => {
    const tenant = await makeTenant(rt, { name: 'Manaus' });
    const p = await makePartner(rt, { tenantId: tenant.id });
    for (const s of [a, b]) expect(await s.status('/api/external/health', p.apiKey)).toBe(200);
    // Cut every listening connection and disable the partner before they can be back:
    // the notification is lost, yet neither instance may answer from what it cached.
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      await admin.query('BEGIN');
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'lumen-listen'`);
      await admin.query('UPDATE external_system SET enabled = false WHERE id = $1', [p.id]);
      await admin.query('COMMIT');
    } finally {
      await admin.end();
    }
    await until(async () => (await a.status('/api/external/health', p.apiKey)) === 403 && (await b.status('/api/external/health', p.apiKey)) === 403, 1_000, 'disabled partner refused on both after the listeners were cut');
    // Back to the cache once listening again.
    await rt.db.updateTable('external_system').set({ enabled: true }).where('id', '=', p.id).execute();
    await until(async () => (await a.status('/api/external/health', p.apiKey)) === 200 && (await b.status('/api/external/health', p.apiKey)) === 200, 5_000, 'enabled again');
    await until(
      () =>
        withKeysLocked(async () => {
          const statuses = await Promise.all([a, b].map((s) => s.status('/api/external/health', p.apiKey).catch(() => 0)));
          return statuses.every((x) => x === 200);
        }),
      20_000,
      'both answering from the cache again',
    );
  }, 60_000);

  it('counts the rate limit in process on both instances, within the documented overshoot', async () => {
    const tenant = await makeTenant(rt, { name: 'Curitiba' });
    const p = await makePartner(rt, { tenantId: tenant.id });
    await rt.db.updateTable('external_system').set({ rate_limit_per_minute: 20 }).where('id', '=', p.id).execute();
    // Within one minute window: 30 requests, alternating instances, one after the other.
    const windowOf = () => Math.floor(Date.now() / 60_000);
    let statuses: number[] = [];
    for (let round = 0; round < 2; round++) {
      const w = windowOf();
      statuses = [];
      for (let i = 0; i < 30; i++) statuses.push(await (i % 2 ? a : b).status('/api/external/health', p.apiKey));
      if (windowOf() === w) break;
    }
    const admitted = statuses.filter((s) => s === 200).length;
    // One request at a time: each instance learns the other's count at every reconciliation;
    // the bound for requests one after the other is the limit plus one in-flight reconciliation per other instance.
    expect(admitted).toBeGreaterThanOrEqual(20);
    expect(admitted).toBeLessThanOrEqual(22);
    expect(statuses.slice(-5)).toEqual([429, 429, 429, 429, 429]);
    // Every counted request reaches the table (the reconciliation), 30 in all.
    await until(async () => {
      const { rows } = await rt.pool.query<{ n: number }>('SELECT coalesce(sum(count), 0)::int AS n FROM rate_limit_window WHERE subject = $1', [p.id]);
      return rows[0]!.n >= 30;
    }, 2_000, 'the counts reconciled');
  }, 60_000);
});
