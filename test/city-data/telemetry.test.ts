import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTelemetryKey, ingestReports, telemetryBatchesInProgress } from '../../src/services/city-data/telemetry.js';
import { startTestApp, type TestApp, cliJson } from '../support/app.js';
import { makeCityPole, makePartner, makeTenant } from '../support/factories.js';
import { getPage, maxUpdatedAt, problemOf, settle, type PoleItem } from './support.js';

let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await startTestApp();
  dir = mkdtempSync(path.join(os.tmpdir(), 'lumen-telemetry-'));
});
afterAll(async () => {
  await t?.stop();
});

const json = cliJson;

async function city() {
  const tenant = await makeTenant(t.rt);
  const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] });
  const key = await createTelemetryKey(t.rt, { tenantId: tenant.id, name: 'network' });
  return { tenantId: tenant.id, apiKey: partner.apiKey, telemetryKey: key.apiKey };
}

const post = (key: string | undefined, body: unknown) => t.fetch('/api/telemetry/reports', { method: 'POST', apiKey: key, json: body });

describe('POST /api/telemetry/reports', () => {
  it('applies the newest report per device, never moves state backwards, and lists unknown devices', async () => {
    const c = await city();
    const pole = await makeCityPole(t.rt, { tenantId: c.tenantId, code: 'TP-1', device: 'TG-1' });
    await makeCityPole(t.rt, { tenantId: c.tenantId, code: 'TP-2', device: 'TG-2' });
    const res = await post(c.telemetryKey, {
      reports: [
        { deviceIdentifier: 'TG-1', online: true, relayOn: false, reportedAt: '2026-03-14T20:00:00.000Z' },
        { deviceIdentifier: 'TG-1', online: true, relayOn: true, reportedAt: '2026-03-14T21:00:00.000-03:00' },
        { deviceIdentifier: 'TG-1', online: false, relayOn: null, reportedAt: '2026-03-14T22:00:00.000Z' },
        { deviceIdentifier: 'TG-404', online: true, relayOn: true, reportedAt: '2026-03-14T22:00:00.000Z' },
        { deviceIdentifier: 'TG-2', online: true, relayOn: true, reportedAt: '2999-01-01T00:00:00.000Z' },
      ],
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      received: 5,
      applied: 1,
      stale: 2,
      unknownDevices: ['TG-404'],
      rejected: [{ index: 4, deviceIdentifier: 'TG-2', reason: 'reportedAt is more than 5 minutes in the future' }],
    });
    // 21:00-03:00 is 00:00Z the next day: the newest report.
    await settle(t);
    let items = (await getPage<PoleItem>(t, '/api/external/poles', c.apiKey)).items;
    expect(items.find((p) => p.id === pole.id)!.device).toMatchObject({ identifier: 'TG-1', online: true, relayOn: true, lastCommunicationAt: '2026-03-15T00:00:00.000Z' });
    expect(items.find((p) => p.code === 'TP-2')!.device).toMatchObject({ online: null, relayOn: null, lastCommunicationAt: null });

    // An older report later changes nothing; the same report again changes nothing.
    const older = await post(c.telemetryKey, { reports: [{ deviceIdentifier: 'TG-1', online: false, relayOn: false, reportedAt: '2026-03-14T23:59:59.999Z' }] });
    expect(await older.json()).toMatchObject({ applied: 0, stale: 1 });
    const same = await post(c.telemetryKey, { reports: [{ deviceIdentifier: 'TG-1', online: false, relayOn: false, reportedAt: '2026-03-15T00:00:00.000Z' }] });
    expect(await same.json()).toMatchObject({ applied: 0, stale: 1 });
    await settle(t);
    items = (await getPage<PoleItem>(t, '/api/external/poles', c.apiKey)).items;
    expect(items.find((p) => p.id === pole.id)!.device).toMatchObject({ online: true, relayOn: true, lastCommunicationAt: '2026-03-15T00:00:00.000Z' });
  });

  it('applies at most LUMEN_TELEMETRY_BATCHES batches at once; the others wait their turn, then are applied', async () => {
    const c = await city();
    await makeCityPole(t.rt, { tenantId: c.tenantId, code: 'BP-1', device: 'TG-BP-1' });
    const limit = t.rt.config.telemetryBatches;
    expect(limit).toBe(2);
    // A transaction of the test's own holds the device's row: a batch that reaches the database waits there.
    const holder = await t.rt.pool.connect();
    try {
      const holderPid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM telegestor WHERE tenant_id = $1 AND identifier = 'TG-BP-1' FOR UPDATE`, [c.tenantId]);
      const sent = Array.from({ length: limit + 2 }, (_, i) =>
        post(c.telemetryKey, { reports: [{ deviceIdentifier: 'TG-BP-1', online: i % 2 === 0, relayOn: true, reportedAt: new Date(Date.UTC(2026, 2, 14, 20, i)).toISOString() }] }),
      );
      const blockedInDatabase = async () =>
        (
          await t.rt.pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%from telegestor%for update%' AND pid <> $1`,
            [holderPid],
          )
        ).rows[0]!.n;
      await expect.poll(blockedInDatabase).toBe(limit);
      await expect.poll(() => telemetryBatchesInProgress(t.rt.config)).toEqual({ applying: limit, waiting: 2, limit });
      // Still no more than the limit in the database once the others have queued.
      expect(await blockedInDatabase()).toBe(limit);
      await holder.query('ROLLBACK');
      const answers = await Promise.all(sent);
      expect(answers.map((r) => r.status)).toEqual(Array(limit + 2).fill(200));
      expect(telemetryBatchesInProgress(t.rt.config)).toEqual({ applying: 0, waiting: 0, limit });
    } finally {
      holder.release();
    }
  });

  it('makes the pole reappear for a partner pulling by updatedSince (4.3 rule 3)', async () => {
    const c = await city();
    await makeCityPole(t.rt, { tenantId: c.tenantId, code: 'RP-1', device: 'TG-RP-1' });
    await makeCityPole(t.rt, { tenantId: c.tenantId, code: 'RP-2', device: 'TG-RP-2' });
    await settle(t);
    const round1 = (await getPage<PoleItem>(t, '/api/external/poles', c.apiKey)).items;
    const cursor = maxUpdatedAt(round1, null)!;
    const quiet = (await getPage<PoleItem>(t, '/api/external/poles', c.apiKey, { updatedSince: cursor })).items;
    expect(quiet.every((p) => p.updatedAt === cursor)).toBe(true);

    const res = await post(c.telemetryKey, { reports: [{ deviceIdentifier: 'TG-RP-1', online: true, relayOn: true, reportedAt: new Date().toISOString() }] });
    expect(((await res.json()) as { applied: number }).applied).toBe(1);
    await settle(t);
    const round2 = (await getPage<PoleItem>(t, '/api/external/poles', c.apiKey, { updatedSince: cursor })).items;
    const rp1 = round2.find((p) => p.code === 'RP-1')!;
    expect(rp1.updatedAt > cursor).toBe(true);
    expect(rp1.device).toMatchObject({ online: true, relayOn: true });
    // A stale report does not move the pole.
    const before = rp1.updatedAt;
    await post(c.telemetryKey, { reports: [{ deviceIdentifier: 'TG-RP-1', online: false, relayOn: false, reportedAt: '2020-01-01T00:00:00Z' }] });
    await settle(t);
    const round3 = (await getPage<PoleItem>(t, '/api/external/poles', c.apiKey, { updatedSince: before })).items;
    expect(round3.find((p) => p.code === 'RP-1')!.updatedAt).toBe(before);
  });

  it('takes batches from concurrent senders over the same devices without deadlock: the newest report of each device wins, each pole once more in updatedSince', async () => {
    const c = await city();
    const devices: string[] = [];
    for (let i = 0; i < 40; i++) {
      devices.push(`TG-C-${i}`);
      await makeCityPole(t.rt, { tenantId: c.tenantId, code: `CP-${i}`, device: `TG-C-${i}` });
    }
    await settle(t);
    const cursor = maxUpdatedAt((await getPage<PoleItem>(t, '/api/external/poles', c.apiKey, { pageSize: 100 })).items, null)!;
    // Four senders, each with every device in its own order, dated sender by sender: the last sender's reports are the newest.
    const base = Date.now() - 60_000;
    const batches = [0, 1, 2, 3].map((s) => {
      const order = s % 2 === 0 ? devices : [...devices].reverse();
      return order.map((d, i) => ({ deviceIdentifier: d, online: true, relayOn: (s + i) % 2 === 0, reportedAt: new Date(base + s * 1000).toISOString() }));
    });
    const answers = await Promise.all(batches.map(async (reports) => (await post(c.telemetryKey, { reports })).json() as Promise<{ applied: number; stale: number }>));
    // Every device took its newest report exactly once; what lost to it counts as stale.
    expect(answers.reduce((n, a) => n + a.applied + a.stale, 0)).toBe(4 * devices.length);
    await settle(t);
    const after = (await getPage<PoleItem>(t, '/api/external/poles', c.apiKey, { pageSize: 100, updatedSince: cursor })).items;
    expect(after).toHaveLength(devices.length);
    const newest = new Date(base + 3000).toISOString();
    for (const p of after) {
      const i = Number(p.code.slice(3));
      expect(p.updatedAt > cursor, p.code).toBe(true);
      expect(p.device, p.code).toMatchObject({ lastCommunicationAt: newest, relayOn: (3 + (devices.length - 1 - i)) % 2 === 0 });
    }
  });

  it('answers 401 without a key, with a partner key or a revoked key, and 422 for a bad batch', async () => {
    const c = await city();
    expect((await post(undefined, { reports: [] })).status).toBe(401);
    const partnerKey = await post(c.apiKey, { reports: [{ deviceIdentifier: 'X', online: true, relayOn: true, reportedAt: '2026-03-14T00:00:00Z' }] });
    expect(partnerKey.status).toBe(401);
    expect((await problemOf(partnerKey)).type).toBe('urn:lumen:problem:unauthorized');
    // Telemetry keys are not partner keys either.
    expect((await t.fetch('/api/external/health', { apiKey: c.telemetryKey })).status).toBe(401);

    const bad = await post(c.telemetryKey, { reports: [{ deviceIdentifier: 'X', online: 'yes', relayOn: true }] });
    expect(bad.status).toBe(422);
    const body = await problemOf(bad);
    expect(body.errors!.map((e) => e.pointer).sort()).toEqual(['/reports/0/online', '/reports/0/reportedAt']);
    expect((await post(c.telemetryKey, { reports: [] })).status).toBe(422);

    const revoked = await t.cli('telemetry', 'key', 'revoke', c.telemetryKey.slice(0, 16), '--json');
    expect(json(revoked).revokedAt).toEqual(expect.any(String));
    expect((await post(c.telemetryKey, { reports: [{ deviceIdentifier: 'X', online: true, relayOn: true, reportedAt: '2026-03-14T00:00:00Z' }] })).status).toBe(401);
  });

  it('keeps tenants apart: a key only reaches its own tenant devices', async () => {
    const a = await city();
    const b = await city();
    await makeCityPole(t.rt, { tenantId: b.tenantId, code: 'ONLY-B', device: 'TG-SHARED' });
    const res = await post(a.telemetryKey, { reports: [{ deviceIdentifier: 'TG-SHARED', online: true, relayOn: true, reportedAt: '2026-03-14T00:00:00Z' }] });
    expect(await res.json()).toMatchObject({ applied: 0, unknownDevices: ['TG-SHARED'] });
    await settle(t);
    expect((await getPage<PoleItem>(t, '/api/external/poles', b.apiKey)).items[0]!.device).toMatchObject({ online: null });
  });

  it('answers 503 with Retry-After while a pole import of the tenant holds the lock', async () => {
    const c = await city();
    await makeCityPole(t.rt, { tenantId: c.tenantId, code: 'L-1', device: 'TG-L-1' });
    const client = await t.rt.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`lumen:pole-writes:${c.tenantId}`]);
      const res = await post(c.telemetryKey, { reports: [{ deviceIdentifier: 'TG-L-1', online: true, relayOn: true, reportedAt: '2026-03-14T00:00:00Z' }] });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('10');
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    const direct = await ingestReports(t.rt, c.tenantId, [{ deviceIdentifier: 'TG-L-1', online: true, relayOn: true, reportedAt: '2026-03-14T00:00:00Z' }]);
    expect(direct.applied).toBe(1);
  });

  it('waits for a running pole import when asked to (the CLI), then applies the batch', async () => {
    const c = await city();
    await makeCityPole(t.rt, { tenantId: c.tenantId, code: 'W-1', device: 'TG-W-1' });
    const client = await t.rt.pool.connect();
    try {
      const importPid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await client.query('BEGIN');
      await client.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`lumen:pole-writes:${c.tenantId}`]);
      let settled = false;
      const waiting = ingestReports(t.rt, c.tenantId, [{ deviceIdentifier: 'TG-W-1', online: false, relayOn: null, reportedAt: '2026-03-14T00:00:00Z' }], { waitForImport: true }).finally(() => {
        settled = true;
      });
      // The batch waits on the import's lock in the database (it is not refused, nor applied).
      await expect
        .poll(async () => (await t.rt.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND pid <> $1`, [importPid])).rows[0]!.n)
        .toBe(1);
      expect(settled).toBe(false);
      await client.query('ROLLBACK');
      expect((await waiting).applied).toBe(1);
    } finally {
      client.release();
    }
  });
});

describe('lumen telemetry', () => {
  it('creates and lists keys, and ingests an NDJSON file with line-numbered errors', async () => {
    const tenant = await makeTenant(t.rt);
    const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] });
    await makeCityPole(t.rt, { tenantId: tenant.id, code: 'N-1', device: 'TG-N-1' });
    await makeCityPole(t.rt, { tenantId: tenant.id, code: 'N-2', device: 'TG-N-2' });

    const created = json(await t.cli('telemetry', 'key', 'create', '--tenant', tenant.id, '--name', 'city network', '--json'));
    expect(created).toMatchObject({ tenantId: tenant.id, name: 'city network', revokedAt: null });
    expect(created.apiKey).toMatch(/^lmn_tel_[A-Za-z0-9]{40}$/);
    expect(created.keyPrefix).toBe(created.apiKey.slice(0, 16));
    const listed = json(await t.cli('telemetry', 'key', 'list', '--tenant', tenant.id, '--json'));
    expect(listed.keys).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toContain(created.apiKey);
    const human = await t.cli('telemetry', 'key', 'create', '--tenant', tenant.id);
    expect(human.stdout).toContain('lmn_tel_');

    const file = path.join(dir, 'reports.ndjson');
    writeFileSync(
      file,
      [
        JSON.stringify({ deviceIdentifier: 'TG-N-1', online: true, relayOn: true, reportedAt: '2026-03-14T20:00:00Z' }),
        '',
        '{not json',
        JSON.stringify({ deviceIdentifier: 'TG-N-2', online: 'maybe', relayOn: true, reportedAt: '2026-03-14T20:00:00Z' }),
        JSON.stringify({ deviceIdentifier: 'TG-N-2', online: false, relayOn: null, reportedAt: '2026-03-14T20:00:00Z' }),
        JSON.stringify({ deviceIdentifier: 'TG-N-1', online: true, relayOn: false, reportedAt: '2026-03-14T19:00:00Z' }),
        JSON.stringify({ deviceIdentifier: 'TG-NOPE', online: true, relayOn: false, reportedAt: '2026-03-14T19:00:00Z' }),
      ].join('\n') + '\n',
    );
    const summary = json(await t.cli('telemetry', 'ingest', '--tenant', tenant.id, file, '--json'));
    expect(summary).toEqual({
      lines: 7,
      received: 4,
      applied: 2,
      stale: 1,
      unknown: 1,
      invalid: 2,
      unknownDevices: ['TG-NOPE'],
      errors: [
        { line: 3, message: 'not valid JSON' },
        { line: 4, message: 'online must be true or false' },
      ],
      doneThroughLine: 7,
      stopped: false,
    });
    await settle(t);
    const poles = (await getPage<PoleItem>(t, '/api/external/poles', partner.apiKey)).items;
    expect(poles.find((p) => p.code === 'N-2')!.device).toMatchObject({ online: false, relayOn: null, lastCommunicationAt: '2026-03-14T20:00:00.000Z' });

    const text = await t.cli('telemetry', 'ingest', '--tenant', tenant.id, file);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('line 3: not valid JSON');
    const missing = await t.cli('telemetry', 'ingest', '--tenant', tenant.id, path.join(dir, 'nope.ndjson'));
    expect(missing.code).toBe(1);
  });
});
