import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeCityPole, makePartner, makeTenant } from '../support/factories.js';
import { getPage, problemOf, settle, walkCursor, walkPages, type PoleItem } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function cityWithReader(scopes: ('canReadCityData' | 'canCreateServiceOrders')[] = ['canReadCityData']) {
  const tenant = await makeTenant(t.rt);
  const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes });
  return { tenantId: tenant.id, apiKey: partner.apiKey };
}

/** n poles inserted by one statement: they share one updated_at, so id breaks the tie. */
async function insertPoles(tenantId: string, n: number, prefix = 'B'): Promise<void> {
  await sql`INSERT INTO pole (tenant_id, code, latitude, longitude) SELECT ${tenantId}, ${prefix} || lpad(g::text, 6, '0'), -23.5, -46.6 FROM generate_series(1, ${n}) g`.execute(t.rt.db);
}

describe('GET /api/external/poles: fields (2.2)', () => {
  it('answers every field, with device null, never reported, and reported', async () => {
    const { tenantId, apiKey } = await cityWithReader();
    const bare = await makeCityPole(t.rt, { tenantId, code: 'SP-001', address: 'Avenida Paulista, 1578', neighborhood: 'Bela Vista', latitude: -23.5614, longitude: -46.6559, active: true });
    const silent = await makeCityPole(t.rt, { tenantId, code: 'SP-002', address: 'Rua Major Sertório, 210', neighborhood: 'Vila Buarque', latitude: -23.5452, longitude: -46.6481, active: false, device: 'TG-SILENT' });
    const talking = await makeCityPole(t.rt, { tenantId, code: 'SP-003', device: 'TG-TALK' });
    await t.rt.db.updateTable('telegestor').set({ online: true, relay_on: false, last_communication_at: new Date('2026-03-14T12:41:07.532Z') }).where('id', '=', talking.deviceId!).execute();
    await settle(t);

    const page = await getPage<PoleItem>(t, '/api/external/poles', apiKey);
    expect(page).toMatchObject({ page: 1, pageSize: 500, total: 3, nextCursor: null });
    const byCode = Object.fromEntries(page.items.map((p) => [p.code, p]));
    expect(byCode['SP-001']).toEqual({
      id: bare.id,
      code: 'SP-001',
      address: 'Avenida Paulista, 1578',
      neighborhood: 'Bela Vista',
      latitude: -23.5614,
      longitude: -46.6559,
      active: true,
      updatedAt: expect.stringMatching(ISO_MS),
      device: null,
    });
    expect(byCode['SP-002']).toMatchObject({ id: silent.id, active: false, device: { id: silent.deviceId, identifier: 'TG-SILENT', online: null, relayOn: null, lastCommunicationAt: null } });
    expect(byCode['SP-003']!.device).toEqual({ id: talking.deviceId, identifier: 'TG-TALK', online: true, relayOn: false, lastCommunicationAt: '2026-03-14T12:41:07.532Z' });
    // The device report moved the pole's updatedAt past its creation (N5).
    expect(byCode['SP-003']!.updatedAt > byCode['SP-002']!.updatedAt).toBe(true);
  });
});

describe('GET /api/external/poles: paging rules (4.3, N5)', () => {
  it('defaults to page 1 and pageSize 500, and cuts pageSize above 1000 to 1000', async () => {
    const { tenantId, apiKey } = await cityWithReader();
    await insertPoles(tenantId, 1001);
    await settle(t);
    const first = await getPage<PoleItem>(t, '/api/external/poles', apiKey);
    expect(first.page).toBe(1);
    expect(first.pageSize).toBe(500);
    expect(first.items).toHaveLength(500);
    expect(first.total).toBe(1001);
    const big = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { pageSize: 5000 });
    expect(big.pageSize).toBe(1000);
    expect(big.items).toHaveLength(1000);
    const exact = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { pageSize: 1000, page: 2 });
    const onFirst = new Set(big.items.map((p) => p.code));
    expect(exact.items).toHaveLength(1);
    expect(onFirst.has(exact.items[0]!.code)).toBe(false);
    const beyond = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { pageSize: 1000, page: 3 });
    expect(beyond).toMatchObject({ items: [], page: 3, total: 1001, nextCursor: null });
  });

  it.each([
    ['page=0', '/query/page'],
    ['page=-1', '/query/page'],
    ['pageSize=0', '/query/pageSize'],
    ['page=abc', '/query/page'],
    ['page=1.5', '/query/page'],
    ['pageSize=2.5', '/query/pageSize'],
    ['pageSize=', '/query/pageSize'],
    ['updatedSince=yesterday', '/query/updatedSince'],
  ])('answers 400 problem+json to %s', async (query, pointer) => {
    const { apiKey } = await cityWithReader();
    for (const path of ['/api/external/poles', '/api/external/service-orders']) {
      const res = await t.fetch(`${path}?${query}`, { apiKey });
      expect(res.status).toBe(400);
      const body = await problemOf(res);
      expect(body.type).toBe('urn:lumen:problem:invalid-parameter');
      expect(body.errors?.map((e) => e.pointer)).toContain(pointer);
    }
  });

  it('answers 401 without a key and 403 without canReadCityData, on both lists', async () => {
    const { apiKey } = await cityWithReader(['canCreateServiceOrders']);
    for (const path of ['/api/external/poles', '/api/external/service-orders']) {
      expect((await t.fetch(path)).status).toBe(401);
      const res = await t.fetch(path, { apiKey });
      expect(res.status).toBe(403);
      expect((await problemOf(res)).type).toBe('urn:lumen:problem:forbidden');
    }
  });

  it('orders by updatedAt then id, stably, and filters with an inclusive updatedSince', async () => {
    const { tenantId, apiKey } = await cityWithReader();
    await insertPoles(tenantId, 4, 'A'); // one statement: four poles tied on updated_at
    const later = await makeCityPole(t.rt, { tenantId, code: 'Z-LATER' });
    const last = await makeCityPole(t.rt, { tenantId, code: 'Z-LAST' });
    await settle(t);

    const all = await getPage<PoleItem>(t, '/api/external/poles', apiKey);
    expect(all.total).toBe(6);
    const tied = all.items.slice(0, 4);
    expect(new Set(tied.map((p) => p.updatedAt)).size).toBe(1);
    expect(tied.map((p) => p.id)).toEqual([...tied.map((p) => p.id)].sort());
    expect(all.items.slice(4).map((p) => p.id)).toEqual([later.id, last.id]);
    for (let i = 1; i < all.items.length; i++) expect(all.items[i]!.updatedAt >= all.items[i - 1]!.updatedAt).toBe(true);

    // Stable: the same page with the same filter, twice, in pages of 2.
    const a = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { page: 2, pageSize: 2 });
    const b = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { page: 2, pageSize: 2 });
    expect(a.items.map((p) => p.id)).toEqual(b.items.map((p) => p.id));
    expect(a.items.map((p) => p.id)).toEqual(all.items.slice(2, 4).map((p) => p.id));

    // Inclusive: updatedSince equal to an item's updatedAt returns that item.
    const laterAt = all.items[4]!.updatedAt;
    const since = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { updatedSince: laterAt });
    expect(since.items.map((p) => p.code)).toEqual(['Z-LATER', 'Z-LAST']);
    expect(since.total).toBe(2);
    // Any offset is accepted and normalised to UTC.
    const offset = new Date(laterAt).getTime();
    const local = new Date(offset - 3 * 3600_000).toISOString().replace('Z', '-03:00');
    expect((await getPage<PoleItem>(t, '/api/external/poles', apiKey, { updatedSince: local })).total).toBe(2);
    const future = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { updatedSince: '2999-01-01T00:00:00Z' });
    expect(future).toMatchObject({ items: [], total: 0, nextCursor: null });
  });

  it('keeps total exact across a walk while poles are added and deleted', async () => {
    const { tenantId, apiKey } = await cityWithReader();
    await insertPoles(tenantId, 5, 'T');
    await settle(t);
    const since = (await getPage<PoleItem>(t, '/api/external/poles', apiKey)).items[0]!.updatedAt;
    const p1 = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { updatedSince: since, pageSize: 2 });
    expect(p1.total).toBe(5);
    await makeCityPole(t.rt, { tenantId, code: 'T-NEW' });
    await settle(t);
    const p2 = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { updatedSince: since, pageSize: 2, page: 2 });
    expect(p2.total).toBe(6);
    const c2 = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { cursor: p1.nextCursor!, pageSize: 2 });
    expect(c2.total).toBe(6);
    await t.rt.db.deleteFrom('pole').where('code', '=', 'T-NEW').where('tenant_id', '=', tenantId).execute();
    const p3 = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { updatedSince: since, pageSize: 2, page: 3 });
    expect(p3.total).toBe(5);
    expect((await getPage<PoleItem>(t, '/api/external/poles', apiKey)).total).toBe(5);
  });

  it('limits every read to the key tenant', async () => {
    const a = await cityWithReader();
    const b = await cityWithReader();
    await makeCityPole(t.rt, { tenantId: a.tenantId, code: 'SAME-CODE', device: 'TG-SAME' });
    await makeCityPole(t.rt, { tenantId: b.tenantId, code: 'SAME-CODE', device: 'TG-SAME' });
    await makeCityPole(t.rt, { tenantId: b.tenantId, code: 'ONLY-B' });
    await settle(t);
    const pa = await getPage<PoleItem>(t, '/api/external/poles', a.apiKey);
    const pb = await getPage<PoleItem>(t, '/api/external/poles', b.apiKey);
    expect(pa.items.map((p) => p.code)).toEqual(['SAME-CODE']);
    expect(pa.total).toBe(1);
    expect(pb.items.map((p) => p.code).sort()).toEqual(['ONLY-B', 'SAME-CODE']);
    expect(pb.total).toBe(2);
    expect(pa.items[0]!.id).not.toBe(pb.items.find((p) => p.code === 'SAME-CODE')!.id);
  });
});

describe('GET /api/external/poles: keyset cursor (N5)', () => {
  it('walks every item once, in order, numbering the pages, and ends with a null nextCursor', async () => {
    const { tenantId, apiKey } = await cityWithReader();
    await insertPoles(tenantId, 7, 'C');
    await settle(t);
    const first = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { pageSize: 3 });
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { cursor: first.nextCursor!, pageSize: 3, page: 99 });
    expect(second.page).toBe(2);
    expect(second.total).toBe(7);
    const third = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { cursor: second.nextCursor!, pageSize: 3 });
    expect(third.page).toBe(3);
    expect(third.items).toHaveLength(1);
    expect(third.nextCursor).toBeNull();
    const walked = [...first.items, ...second.items, ...third.items].map((p) => p.code);
    const whole = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { pageSize: 100 });
    expect(walked).toEqual(whole.items.map((p) => p.code));
    expect(new Set(walked).size).toBe(7);
    expect((await walkCursor<PoleItem>(t, '/api/external/poles', apiKey, null, 2)).map((p) => p.code)).toEqual(walked);
    expect((await walkPages<PoleItem>(t, '/api/external/poles', apiKey, null, 2)).map((p) => p.code)).toEqual(walked);
    // The page size may change between the calls of a cursor walk.
    const wide = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { cursor: first.nextCursor!, pageSize: 10 });
    expect(wide.items.map((p) => p.code)).toEqual(walked.slice(3));
  });

  it('keeps the walk\'s page size for a cursor call without pageSize, and takes a new one when sent', async () => {
    const { tenantId, apiKey } = await cityWithReader();
    await insertPoles(tenantId, 9, 'K');
    await settle(t);
    const first = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { pageSize: 2 });
    const second = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { cursor: first.nextCursor! });
    expect(second.pageSize).toBe(2);
    expect(second.items).toHaveLength(2);
    // A size sent with the cursor wins, and the next cursor carries it on.
    const third = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { cursor: second.nextCursor!, pageSize: 3 });
    expect(third.items).toHaveLength(3);
    const fourth = await getPage<PoleItem>(t, '/api/external/poles', apiKey, { cursor: third.nextCursor! });
    expect(fourth).toMatchObject({ pageSize: 3, page: 4 });
    expect(fourth.items).toHaveLength(2);
    expect(fourth.nextCursor).toBeNull();
  });

  it('does not end a walk short when a transaction that began before it takes its id mid-walk', async () => {
    for (const by of ['cursor', 'page'] as const) {
      for (const since of [null, '2000-01-01T00:00:00.000Z']) {
        const { tenantId, apiKey } = await cityWithReader();
        const filter: Record<string, string | number> = since === null ? { pageSize: 2 } : { pageSize: 2, updatedSince: since };
        // Open before the poles are written, without an id yet: the horizon does not wait for it.
        const early = await t.rt.pool.connect();
        try {
          await early.query('BEGIN');
          await early.query('SELECT 1');
          await insertPoles(tenantId, 6, 'H');
          await settle(t);
          const first = await getPage<PoleItem>(t, '/api/external/poles', apiKey, filter);
          expect(first.items).toHaveLength(2);
          // Now it takes an id: a horizon read from here on alone is its start, before every pole.
          await early.query('SELECT pg_current_xact_id()');
          expect((await getPage<PoleItem>(t, '/api/external/poles', apiKey, { ...filter, pageSize: 100 })).items).toHaveLength(0);
          // The walk keeps the horizon it stood at: its next pages are there, to its end.
          const next = (before: { nextCursor: string | null }, page: number) =>
            getPage<PoleItem>(t, '/api/external/poles', apiKey, by === 'cursor' ? { cursor: before.nextCursor! } : { ...filter, page });
          const second = await next(first, 2);
          expect(second).toMatchObject({ page: 2, pageSize: 2, total: 6 });
          expect(second.items).toHaveLength(2);
          const third = await next(second, 3);
          expect(third.items).toHaveLength(2);
          expect(third.nextCursor).toBeNull();
          const walked = [...first.items, ...second.items, ...third.items].map((p) => p.code);
          expect(walked.sort()).toEqual(['H000001', 'H000002', 'H000003', 'H000004', 'H000005', 'H000006']);
        } finally {
          await early.query('ROLLBACK');
          early.release();
        }
      }
    }
  });

  it('answers 400 invalid-cursor to a forged, altered, foreign-tenant or other-endpoint cursor', async () => {
    const a = await cityWithReader();
    const b = await cityWithReader();
    await insertPoles(a.tenantId, 3, 'X');
    await settle(t);
    const cursor = (await getPage<PoleItem>(t, '/api/external/poles', a.apiKey, { pageSize: 1 })).nextCursor!;
    const [body, mac] = cursor.split('.');
    const decoded = JSON.parse(Buffer.from(body!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const altered = `${Buffer.from(JSON.stringify({ ...decoded, n: 7 })).toString('base64url')}.${mac}`;
    const bad: [string, string][] = [
      ['/api/external/poles', 'not-a-cursor'],
      ['/api/external/poles', altered],
      ['/api/external/poles', `${body}.${'A'.repeat(22)}`],
      ['/api/external/service-orders', cursor],
    ];
    for (const [path, c] of bad) {
      const res = await t.fetch(`${path}?cursor=${encodeURIComponent(c)}`, { apiKey: a.apiKey });
      expect(res.status).toBe(400);
      expect((await problemOf(res)).type).toBe('urn:lumen:problem:invalid-cursor');
    }
    const foreign = await t.fetch(`/api/external/poles?cursor=${encodeURIComponent(cursor)}`, { apiKey: b.apiKey });
    expect(foreign.status).toBe(400);
    expect((await problemOf(foreign)).type).toBe('urn:lumen:problem:invalid-cursor');
  });
});
