/**
 * Partner reads on a streaming replica (LUMEN_READ_DATABASE_URL): a real primary and
 * a replica made from it by PostgreSQL's own replication, started here once for the
 * whole file. The guarantees hold on the replica (no change skipped by a partner
 * following updatedSince or the cursor, whatever the lag and the commit order on the
 * primary), writes a read needs go to the primary without waiting for the replica,
 * and a replica too far behind or gone sends reads to the primary, as /readyz says.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Event, EventsPage } from '../../generated/partner/types.gen.js';
import { migrate } from '../../src/db/migrator.js';
import { Jobs } from '../../src/jobs/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeCityPole, makePartner, makeTenant } from '../support/factories.js';
import { startReplicaPair, type ReplicaPair } from '../support/replication.js';
import { emit, makeEventPartner, subjectFor, waitFor } from '../events/support.js';
import { getPage, maxUpdatedAt, walkCursor, walkPages, type PoleItem } from '../city-data/support.js';

let pair: ReplicaPair;
/** Reads on the replica, which may fall a minute behind. */
let a: TestApp;
/** Reads on the replica only while it is at most 300 ms behind. */
let b: TestApp;
let primary: pg.Client;
let replica: pg.Client;

const DATABASE = 'lumen';

beforeAll(async () => {
  pair = await startReplicaPair();
  const admin = new pg.Client({ connectionString: pair.primaryUrl('postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${DATABASE}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: pair.primaryUrl(DATABASE), max: 2 });
  await migrate(pool);
  await pool.end();
  const jobs = await Jobs.start({ url: pair.primaryUrl(DATABASE), log: createLogger('silent'), work: false });
  await jobs.stop();
  await pair.caughtUp();

  const db = { name: DATABASE, url: pair.primaryUrl(DATABASE), drop: async () => {} };
  a = await startTestApp({ db, env: { LUMEN_READ_DATABASE_URL: pair.replicaUrl(DATABASE), LUMEN_READ_MAX_LAG: '60s' } });
  b = await startTestApp({ db, env: { LUMEN_READ_DATABASE_URL: pair.replicaUrl(DATABASE), LUMEN_READ_MAX_LAG: '300ms' } });
  primary = new pg.Client({ connectionString: pair.primaryUrl(DATABASE), application_name: 'psql' });
  await primary.connect();
  replica = new pg.Client({ connectionString: pair.replicaUrl(DATABASE) });
  // The last test stops the replica under this connection.
  replica.on('error', () => {});
  await replica.connect();
  await waitFor(() => a.rt.reads.status().state === 'in-use' && b.rt.reads.status().state === 'in-use', 15_000, 'reads on the replica');
}, 90_000);

afterAll(async () => {
  await primary?.end().catch(() => {});
  await replica?.end().catch(() => {});
  await a?.stop().catch(() => {});
  await b?.stop().catch(() => {});
  await pair?.stop();
});

async function readyz(t: TestApp): Promise<{ status: string; reads?: { on: string; replica: string; lagSeconds: number | null } }> {
  const res = await t.fetch('/readyz');
  expect(res.status).toBe(200);
  return (await res.json()) as { status: string; reads?: { on: string; replica: string; lagSeconds: number | null } };
}

async function cityPartner(t: TestApp, poles: number) {
  const tenant = await makeTenant(t.rt);
  const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] });
  const ids: string[] = [];
  for (let i = 0; i < poles; i++) ids.push((await makeCityPole(t.rt, { tenantId: tenant.id })).id);
  return { tenantId: tenant.id, apiKey: partner.apiKey, ids };
}

/** A connection to the primary that is not Lumen's. */
async function otherWriter(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: pair.primaryUrl(DATABASE), application_name: 'gis-sync' });
  await c.connect();
  return c;
}

async function poll(t: TestApp, apiKey: string, since?: string): Promise<EventsPage> {
  const res = await t.fetch(`/api/external/events${since ? `?since=${encodeURIComponent(since)}` : ''}`, { apiKey });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as EventsPage;
}

describe('partner reads on a streaming replica', () => {
  it('bounds the horizon by what the replica has replayed, so a change held open on the primary by another tool is not skipped', async () => {
    const city = await cityPartner(a, 3);
    const [p1, p2] = city.ids;
    await pair.caughtUp();
    let cursor: string | null = null;
    await waitFor(async () => {
      const all = await walkCursor<PoleItem>(a, '/api/external/poles', city.apiKey, null, 10);
      cursor = maxUpdatedAt(all, null);
      return all.length === 3;
    }, 10_000, 'the poles below the replica horizon');

    // A GIS sync changes P1 and holds its transaction; a tick is written after it took its id.
    const held = await otherWriter();
    const quick = await otherWriter();
    try {
      await held.query('BEGIN');
      await held.query(`UPDATE pole SET address = 'held' WHERE id = $1`, [p1]);
      const { rows } = await held.query<{ xid: string; stamp: string }>(`SELECT pg_current_xact_id()::text AS xid, lumen_write_stamp()::text AS stamp`);
      await waitFor(async () => (await primary.query<{ ok: boolean }>(`SELECT max(xid) > $1::xid8 AS ok FROM lumen_xid_clock`, [rows[0]!.xid])).rows[0]!.ok, 5_000, 'a tick after the held transaction');
      // Another change commits at once, after it in time.
      await quick.query(`UPDATE pole SET address = 'quick' WHERE id = $1`, [p2]);
      await pair.caughtUp();

      // The replica's snapshot lists no running transaction (its sub-transaction array has them), so only its xmin bounds the horizon.
      const standby = await replica.query<{ xip: number; horizon_ok: boolean; standby: boolean }>(
        `SELECT (SELECT count(*) FROM pg_snapshot_xip(pg_current_snapshot()))::int AS xip, lumen_visibility_horizon() <= $1::timestamptz AS horizon_ok, pg_is_in_recovery() AS standby`,
        [rows[0]!.stamp],
      );
      expect(standby.rows[0]).toEqual({ xip: 0, horizon_ok: true, standby: true });

      const seen: PoleItem[] = [];
      const round = async () => {
        const items = await walkCursor<PoleItem>(a, '/api/external/poles', city.apiKey, cursor, 10);
        seen.push(...items);
        cursor = maxUpdatedAt(items, cursor);
      };
      await round();
      await held.query('COMMIT');
      await pair.caughtUp();
      await waitFor(async () => {
        await round();
        return seen.some((p) => p.id === p1 && p.address === 'held') && seen.some((p) => p.id === p2 && p.address === 'quick');
      }, 10_000, 'both changes seen by the partner');
      expect(a.rt.reads.status().state).toBe('in-use');
    } finally {
      await held.query('ROLLBACK').catch(() => {});
      await held.end();
      await quick.end();
    }
  });

  it('keeps a walk on a replica paused mid-walk gap-free, and writes checkpoints and event positions on the primary meanwhile', async () => {
    const city = await cityPartner(a, 20);
    await pair.caughtUp();
    const start = await waitFor(async () => {
      const all = await walkCursor<PoleItem>(a, '/api/external/poles', city.apiKey, null, 50);
      return all.length === 20 ? all : null;
    }, 10_000, 'the poles below the replica horizon');
    const events = await makeEventPartner(a.rt);
    const subject = await subjectFor(a.rt, events);

    let added: string | null = null;
    const walked = await walkCursor<PoleItem>(a, '/api/external/poles', city.apiKey, null, 5, async (page) => {
      if (page !== 1) return;
      await pair.pauseReplay();
      // Served and not yet served items change, one arrives; the replica does not see any of it yet.
      await primary.query(`UPDATE pole SET address = 'moved' WHERE id = ANY($1::uuid[])`, [[city.ids[0], city.ids[15]]]);
      added = (await makeCityPole(a.rt, { tenantId: city.tenantId })).id;
    });
    // The walk ran on the paused replica: the snapshot before the changes, every item once.
    expect(walked.map((p) => p.id).sort()).toEqual(start.map((p) => p.id).sort());
    expect(walked.some((p) => p.address === 'moved' || p.id === added)).toBe(false);

    // A page walk leaves its checkpoints on the primary while the replica is paused.
    const before = (await primary.query<{ n: number }>(`SELECT count(*)::int AS n FROM city_read_checkpoint`)).rows[0]!.n;
    const pages = await walkPages<PoleItem>(a, '/api/external/poles', city.apiKey, null, 5);
    expect(pages).toHaveLength(20);
    const after = (await primary.query<{ n: number }>(`SELECT count(*)::int AS n FROM city_read_checkpoint`)).rows[0]!.n;
    expect(after).toBeGreaterThan(before);

    // Events written while the replica is paused are positioned on the primary and served whole.
    const written = await emit(a.rt, ['ServiceOrder.StatusChanged', subject], ['ServiceOrder.StatusChanged', subject]);
    const first = await poll(a, events.partner.apiKey);
    expect(first.events.map((e: Event) => e.eventId)).toEqual(written.map((e) => e!.eventId));
    expect(a.rt.reads.status().state).toBe('in-use');

    await pair.resumeReplay();
    await pair.caughtUp();
    // Rule 2 after the walk: every change, and the new pole.
    const cursor = maxUpdatedAt(walked, null);
    const later = await waitFor(async () => {
      const items = await walkCursor<PoleItem>(a, '/api/external/poles', city.apiKey, cursor, 50);
      const ids = new Set(items.map((p) => p.id));
      return ids.has(city.ids[0]!) && ids.has(city.ids[15]!) && ids.has(added!) ? items : null;
    }, 10_000, 'the changes made during the pause');
    expect(later.filter((p) => p.address === 'moved')).toHaveLength(2);

    // Confirmed events never come again; new ones come once (their envelopes from the replica).
    const more = await emit(a.rt, ['ServiceOrder.StatusChanged', subject]);
    await pair.caughtUp();
    const second = await poll(a, events.partner.apiKey, first.nextSince);
    expect(second.events.map((e: Event) => e.eventId)).toEqual(more.map((e) => e!.eventId));
    expect((await poll(a, events.partner.apiKey, second.nextSince)).events).toEqual([]);
  });

  it('reads on the primary while the replica is further behind than LUMEN_READ_MAX_LAG, and says so on /readyz', async () => {
    const city = await cityPartner(b, 2);
    await pair.caughtUp();
    await waitFor(async () => (await readyz(b)).reads?.on === 'replica', 10_000, 'b on the replica');
    await pair.pauseReplay();
    try {
      const pole = await makeCityPole(b.rt, { tenantId: city.tenantId });
      const report = await waitFor(async () => {
        const r = await readyz(b);
        return r.reads?.on === 'primary' ? r : null;
      }, 10_000, 'b reading on the primary');
      expect(report.reads).toMatchObject({ on: 'primary', replica: 'lagging' });
      expect(report.reads!.lagSeconds).toBeGreaterThan(0.3);
      // a tolerates a minute: still on the paused replica, which does not have the new pole.
      expect((await readyz(a)).reads).toMatchObject({ on: 'replica', replica: 'in-use' });
      expect((await getPage<PoleItem>(a, '/api/external/poles', city.apiKey, { pageSize: 50 })).items.map((p) => p.id)).not.toContain(pole.id);
      // b reads the primary: the new pole shows once below the primary's horizon.
      await waitFor(async () => (await getPage<PoleItem>(b, '/api/external/poles', city.apiKey, { pageSize: 50 })).items.some((p) => p.id === pole.id), 10_000, 'the pole on the primary');
    } finally {
      await pair.resumeReplay();
    }
    await waitFor(async () => (await readyz(b)).reads?.on === 'replica', 10_000, 'b back on the replica');
  });

  it('reads on the primary, without failing a request, once the replica is stopped', async () => {
    const city = await cityPartner(a, 3);
    const events = await makeEventPartner(a.rt);
    const subject = await subjectFor(a.rt, events);
    await pair.caughtUp();
    await waitFor(async () => (await getPage<PoleItem>(a, '/api/external/poles', city.apiKey)).items.length === 3, 10_000, 'poles on the replica');
    await pair.stopReplica();

    // The first reads after it went away: the replica fails them, the primary answers.
    expect((await walkCursor<PoleItem>(a, '/api/external/poles', city.apiKey, null, 2)).map((p) => p.id).sort()).toEqual([...city.ids].sort());
    expect((await walkPages<PoleItem>(a, '/api/external/poles', city.apiKey, null, 2)).map((p) => p.id).sort()).toEqual([...city.ids].sort());
    const written = await emit(a.rt, ['ServiceOrder.StatusChanged', subject]);
    expect((await poll(a, events.partner.apiKey)).events.map((e: Event) => e.eventId)).toEqual(written.map((e) => e!.eventId));
    const report = await waitFor(async () => {
      const r = await readyz(a);
      return r.reads?.replica === 'unreachable' ? r : null;
    }, 10_000, '/readyz reporting the replica gone');
    expect(report.reads).toMatchObject({ on: 'primary', replica: 'unreachable' });
    expect(report.status).toBe('ok');
  });
});
