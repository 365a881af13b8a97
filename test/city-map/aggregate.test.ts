/**
 * The city map's aggregate (GET /api/admin/tenants/{tenantId}/map): every active pole of
 * Curitiba counted once per zoom, in the cell that holds it, by state (open alert, open
 * order, telegestor off / unknown, ok); the rollup kept current by pole and device
 * writes; filters by priority, reason, team, overdue and telegestor state; box edges;
 * Manaus beside it, which never sees Curitiba's poles. Every figure is checked against
 * a count made here from the rows themselves.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { ingestReports } from '../../src/services/city-data/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makeCityOrder, makeCityPole, makeCityTeam, makePartner, makeReason, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, problemOf } from '../operations/support.js';
import { makeToken, tokenFetch } from '../operators/support.js';

type State = 'alert' | 'order' | 'off' | 'unknown' | 'ok';
interface Counts { count: number; alert: number; order: number; off: number; unknown: number; ok: number }
interface CityMap {
  zoom: number;
  mode: 'cells' | 'poles';
  total: Counts;
  cells: { key: string; count: number; latitude: number; longitude: number; states: Counts; bounds: { south: number; west: number; north: number; east: number } }[];
  poles: { id: string; code: string; address: string; latitude: number; longitude: number; state: State }[];
}
interface Filter { priority?: string; reason?: string; team?: string; overdue?: boolean; telegestor?: 'online' | 'off' | 'unknown' }

let t: TestApp;
let admin: ReturnType<typeof adminFetch>;
let curitiba: string;
let manaus: string;
let teamId: string;
const TEAM = 'Equipe de Manutenção Noturna — Regional Boqueirão';
const CWB = { south: -25.5, west: -49.35, north: -25.35, east: -49.2 };

beforeAll(async () => {
  t = await startTestApp();
  admin = adminFetch(t, await adminToken(t));
  curitiba = (await makeTenant(t.rt, { name: 'Curitiba — Departamento de Iluminação Pública', ibgeCode: '4106902', intakePolicy: 'manual' })).id;
  manaus = (await makeTenant(t.rt, { name: 'Manaus', ibgeCode: '1302603', intakePolicy: 'manual' })).id;
  await makeReason(t.rt, { tenantId: curitiba, code: 'LAMP_OUT', namePt: 'Lâmpada apagada', nameEn: 'Lamp out', slaHours: 24 });
  teamId = (await makeCityTeam(t.rt, { tenantId: curitiba, name: TEAM })).id;
  // 1,500 poles spread over Curitiba; 70% with a device: online, offline or never reported; every 40th inactive.
  await sql`
    INSERT INTO pole (tenant_id, code, address, neighborhood, latitude, longitude, active)
    SELECT ${curitiba}, 'CWB-' || lpad(g::text, 6, '0'), 'Rua XV de Novembro, ' || g, 'Centro',
           ${CWB.south} + ((g * 7919) % 1500) / 1500.0 * 0.15, ${CWB.west} + ((g * 104729) % 1499) / 1499.0 * 0.15, g % 40 <> 0
      FROM generate_series(1, 1500) g`.execute(t.rt.db);
  await sql`
    INSERT INTO telegestor (tenant_id, identifier, pole_id, online, relay_on, last_communication_at)
    SELECT p.tenant_id, 'TG-' || p.code, p.id,
           CASE WHEN n % 7 = 0 THEN NULL ELSE n % 5 <> 0 END, NULL, CASE WHEN n % 7 = 0 THEN NULL ELSE now() END
      FROM pole p, LATERAL (SELECT substr(p.code, 5)::int AS n) x
     WHERE p.tenant_id = ${curitiba} AND n % 10 < 7`.execute(t.rt.db);
  // Manaus: poles of its own, one with an open order.
  for (let i = 0; i < 30; i++) await makeCityPole(t.rt, { tenantId: manaus, code: `MAO-${i}`, latitude: -3.13 + i * 0.001, longitude: -60.02 });

  // Open work in Curitiba: orders of every priority, some with the team, some overdue;
  // a completed one (not open work); telemetry alerts, one on a pole that has an order.
  const poles = (await sql<{ id: string; code: string }>`SELECT id, code FROM pole WHERE tenant_id = ${curitiba} AND active ORDER BY code`.execute(t.rt.db)).rows;
  const priorities = ['Low', 'Medium', 'High', 'Critical'] as const;
  for (let i = 0; i < 24; i++) {
    const o = await makeCityOrder(t.rt, { tenantId: curitiba, poleId: poles[i * 37]!.id, priority: priorities[i % 4]!, teamId: i % 3 === 0 ? teamId : null, status: i % 6 === 5 ? 'IN_PROGRESS' : 'OPEN' });
    if (i % 4 === 1) await sql`UPDATE service_order SET sla_due_at = now() - interval '2 hours' WHERE id = ${o.id}`.execute(t.rt.db);
    if (i % 5 === 2) await sql`UPDATE service_order SET reason_code = 'LAMP_OUT' WHERE id = ${o.id}`.execute(t.rt.db);
  }
  await makeCityOrder(t.rt, { tenantId: curitiba, poleId: poles[5]!.id, status: 'COMPLETED', closedAt: new Date() });
  const partner = await makePartner(t.rt, { tenantId: curitiba, code: 'TELEGESTAO-CWB' });
  for (const [i, at] of [0, 3, 11, 17, 0 + 37].entries()) {
    const a = await makeAlert(t.rt, { tenantId: curitiba, externalSystemId: partner.id, reasonCode: 'LAMP_OUT' });
    await sql`UPDATE alert SET priority = ${priorities[(i + 2) % 4]!}, sla_due_at = now() + ${i % 2 === 0 ? '-1 hour' : '5 hours'}::interval WHERE id = ${a.id}`.execute(t.rt.db);
    await t.rt.db.insertInto('telemetry_lamp_out').values({ pole_id: poles[at * 3 + 1]!.id, tenant_id: curitiba, alert_id: a.id, out_since: new Date() }).execute();
  }
  // A telemetry alert already resolved is no longer open work.
  const done = await makeAlert(t.rt, { tenantId: curitiba, externalSystemId: partner.id, reasonCode: 'LAMP_OUT' });
  await sql`UPDATE alert SET status = 'Cancelled', cancel_reason = 'Lâmpada voltou' WHERE id = ${done.id}`.execute(t.rt.db);
  await t.rt.db.insertInto('telemetry_lamp_out').values({ pole_id: poles[200]!.id, tenant_id: curitiba, alert_id: done.id, out_since: new Date() }).execute();
});
afterAll(async () => {
  await t?.stop();
});

/** The cell of a point at a grid level, computed here (web mercator). */
function cellOf(lat: number, lon: number, level: number): string {
  const n = 2 ** level;
  const r = (lat * Math.PI) / 180;
  const x = Math.floor(((lon + 180) / 360) * n);
  const y = Math.floor(((1 - Math.log(Math.tan(r) + 1 / Math.cos(r)) / Math.PI) / 2) * n);
  return `${level}:${x}:${y}`;
}

/** Every active pole of a tenant with the state the filter gives it (absent: filtered out), from the rows. */
async function expected(tenantId: string, f: Filter = {}): Promise<{ id: string; code: string; latitude: number; longitude: number; state: State }[]> {
  const poles = (await sql<{ id: string; code: string; latitude: number; longitude: number; online: boolean | null }>`
    SELECT p.id, p.code, p.latitude, p.longitude, g.online FROM pole p LEFT JOIN telegestor g ON g.pole_id = p.id WHERE p.tenant_id = ${tenantId} AND p.active`.execute(t.rt.db)).rows;
  const work = (await sql<{ pole_id: string; kind: 'alert' | 'order'; priority: string; reason: string; team_id: string | null; overdue: boolean }>`
    SELECT pole_id, 'order' AS kind, priority, reason_code AS reason, team_id, sla_due_at < now() AS overdue FROM service_order
     WHERE tenant_id = ${tenantId} AND pole_id IS NOT NULL AND status IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS')
    UNION ALL
    SELECT l.pole_id, 'alert', a.priority, a.reason_code, NULL, a.sla_due_at < now() FROM telemetry_lamp_out l JOIN alert a ON a.id = l.alert_id
     WHERE l.tenant_id = ${tenantId} AND a.status = 'Pending'`.execute(t.rt.db)).rows;
  const workFilter = f.priority !== undefined || f.reason !== undefined || f.team !== undefined || f.overdue;
  const out = [];
  for (const p of poles) {
    const device = p.online === true ? 'online' : p.online === false ? 'off' : 'unknown';
    if (f.telegestor && device !== f.telegestor) continue;
    const mine = work.filter((w) => w.pole_id === p.id && (f.priority === undefined || w.priority === f.priority) && (f.reason === undefined || w.reason === f.reason) && (f.team === undefined || w.team_id === teamId) && (!f.overdue || w.overdue));
    if (workFilter && mine.length === 0) continue;
    const state: State = mine.some((w) => w.kind === 'alert') ? 'alert' : mine.length > 0 ? 'order' : device === 'online' ? 'ok' : device;
    out.push({ id: p.id, code: p.code, latitude: p.latitude, longitude: p.longitude, state });
  }
  return out;
}

function countsOf(states: State[]): Counts {
  const c: Counts = { count: states.length, alert: 0, order: 0, off: 0, unknown: 0, ok: 0 };
  for (const s of states) c[s]++;
  return c;
}

async function map(tenantId: string, query: Record<string, string>): Promise<CityMap> {
  const res = await admin(`/tenants/${tenantId}/map?${new URLSearchParams(query)}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as CityMap;
}

/** Checks a cells answer against the rows: same cells, same counts per state, centroids inside. */
async function expectCells(tenantId: string, zoom: number, f: Filter = {}, box?: typeof CWB): Promise<CityMap> {
  const query: Record<string, string> = { zoom: String(zoom) };
  for (const [k, v] of Object.entries(f)) query[k] = String(v);
  if (box) query.bbox = [box.south, box.west, box.north, box.east].join(',');
  const got = await map(tenantId, query);
  expect(got.mode).toBe('cells');
  const level = Math.min(zoom + 2, 18);
  const byCell = new Map<string, State[]>();
  for (const p of await expected(tenantId, f)) {
    const key = cellOf(p.latitude, p.longitude, level);
    byCell.set(key, [...(byCell.get(key) ?? []), p.state]);
  }
  const want = [...byCell.entries()].map(([key, states]) => ({ key, states: countsOf(states) }));
  if (!box) {
    expect(Object.fromEntries(got.cells.map((c) => [c.key, c.states]))).toEqual(Object.fromEntries(want.map((c) => [c.key, c.states])));
  }
  const sum = countsOf([]);
  for (const c of got.cells) {
    expect(c.count).toBe(c.states.count);
    expect(c.states.alert + c.states.order + c.states.off + c.states.unknown + c.states.ok).toBe(c.count);
    for (const k of Object.keys(sum) as (keyof Counts)[]) sum[k] += c.states[k];
    expect(c.latitude).toBeGreaterThanOrEqual(c.bounds.south - 1e-6);
    expect(c.latitude).toBeLessThanOrEqual(c.bounds.north + 1e-6);
    expect(c.longitude).toBeGreaterThanOrEqual(c.bounds.west - 1e-6);
    expect(c.longitude).toBeLessThanOrEqual(c.bounds.east + 1e-6);
  }
  expect(got.total).toEqual(sum);
  return got;
}

describe('the whole city at every zoom', () => {
  it('counts every active pole once, in the cell that holds it, by state, at zooms 8 to 16', async () => {
    const all = await expected(curitiba);
    expect(all).toHaveLength(1500 - 37);
    const whole = countsOf(all.map((p) => p.state));
    // The seed has poles in every state.
    for (const k of ['alert', 'order', 'off', 'unknown', 'ok'] as const) expect(whole[k], k).toBeGreaterThan(0);
    for (const zoom of [8, 11, 12, 13, 14, 16]) {
      const got = await expectCells(curitiba, zoom);
      expect(got.total, `zoom ${zoom}`).toEqual(whole);
    }
    // The zoom the console opens Curitiba at (about 12): a handful of cells, never a million markers.
    const city = await map(curitiba, { zoom: '12' });
    expect(city.cells.length).toBeGreaterThan(4);
    expect(city.cells.length).toBeLessThan(200);
  });

  it('stays right as poles are added, moved, deactivated and deleted and devices report, move and go', async () => {
    const pole = await makeCityPole(t.rt, { tenantId: curitiba, code: 'CWB-NOVO-1', address: 'Avenida Sete de Setembro, 2775', latitude: -25.4410, longitude: -49.2790, device: 'TG-NOVO-1' });
    await expectCells(curitiba, 13);
    await sql`UPDATE telegestor SET online = false WHERE id = ${pole.deviceId}`.execute(t.rt.db);
    await sql`UPDATE pole SET latitude = -25.3700, longitude = -49.3300 WHERE id = ${pole.id}`.execute(t.rt.db);
    await expectCells(curitiba, 13);
    await sql`UPDATE telegestor SET online = true WHERE identifier IN ('TG-CWB-000001', 'TG-CWB-000002', 'TG-CWB-000003')`.execute(t.rt.db);
    // A device moves from one pole to another, and one is unlinked.
    await sql`UPDATE telegestor SET pole_id = (SELECT id FROM pole WHERE tenant_id = ${curitiba} AND code = 'CWB-000008') WHERE id = ${pole.deviceId}`.execute(t.rt.db);
    await sql`UPDATE telegestor SET pole_id = NULL WHERE identifier = 'TG-CWB-000004'`.execute(t.rt.db);
    await expectCells(curitiba, 14);
    await sql`UPDATE pole SET active = false WHERE code IN ('CWB-000011', 'CWB-000012')`.execute(t.rt.db);
    await sql`UPDATE pole SET active = true WHERE code = 'CWB-000040'`.execute(t.rt.db);
    await sql`DELETE FROM pole WHERE id = ${pole.id}`.execute(t.rt.db);
    await sql`DELETE FROM telegestor WHERE identifier = 'TG-CWB-000005'`.execute(t.rt.db);
    const got = await expectCells(curitiba, 11);
    expect(got.total.count).toBe((await expected(curitiba)).length);
  });

  it('stays right through the pole import (new poles and devices, a pole moved, a device moved) and telemetry reports', async () => {
    const rows = ['code,address,neighborhood,latitude,longitude,active,device_identifier'];
    for (let i = 0; i < 40; i++) rows.push(`CWB-IMP-${String(i).padStart(3, '0')},Rua Mateus Leme ${1000 + i * 10},São Francisco,${(-25.4200 + i * 0.0007).toFixed(6)},${(-49.2750 - i * 0.0005).toFixed(6)},true,${i % 2 === 0 ? `TG-IMP-${i}` : ''}`);
    // An existing pole moved across the city, keeping its device; another given the device of a third.
    rows.push('CWB-000021,Rua XV de Novembro 21,Centro,-25.3600,-49.2100,true,TG-CWB-000021');
    rows.push('CWB-000022,Rua XV de Novembro 22,Centro,-25.4500,-49.3000,true,TG-CWB-000023');
    rows.push('CWB-000023,Rua XV de Novembro 23,Centro,-25.4501,-49.3001,true,');
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'lumen-city-map-')), 'poles.csv');
    writeFileSync(file, rows.join('\n') + '\n');
    const out = await t.cli('pole', 'import', '--tenant', curitiba, file);
    expect(out.code, out.stderr).toBe(0);
    await expectCells(curitiba, 13);
    // Telemetry: new devices report online and offline; a known one goes offline.
    const at = new Date().toISOString();
    await ingestReports(t.rt, curitiba, [
      ...Array.from({ length: 20 }, (_, k) => ({ deviceIdentifier: `TG-IMP-${k * 2}`, online: k % 3 !== 0, relayOn: true, reportedAt: at })),
      { deviceIdentifier: 'TG-CWB-000021', online: false, relayOn: null, reportedAt: at },
    ]);
    const got = await expectCells(curitiba, 12);
    expect(got.total.off).toBeGreaterThan(0);
    await expectCells(curitiba, 16);
  });

  it('is counted again from the poles by lumen_pole_map_rebuild after a drift, leaving other cities alone', async () => {
    const manausBefore = await map(manaus, { zoom: '10' });
    await sql`UPDATE pole_map_cell SET online = online + 5 WHERE tenant_id = ${curitiba} AND level = 14`.execute(t.rt.db);
    expect((await map(curitiba, { zoom: '12' })).total).not.toEqual(countsOf((await expected(curitiba)).map((p) => p.state)));
    await sql`SELECT lumen_pole_map_rebuild(${curitiba}::uuid)`.execute(t.rt.db);
    await expectCells(curitiba, 12);
    await expectCells(curitiba, 15);
    expect(await map(manaus, { zoom: '10' })).toEqual(manausBefore);
  });
});

describe('filters', () => {
  it('keep the poles with matching open work, or with the telegestor state asked for', async () => {
    const whole = (await map(curitiba, { zoom: '12' })).total;
    for (const f of [{ priority: 'High' }, { priority: 'Critical' }, { reason: 'LAMP_OUT' }, { team: TEAM }, { overdue: true }, { telegestor: 'off' as const }, { telegestor: 'unknown' as const }, { priority: 'Low', overdue: true }, { reason: 'LAMP_OUT', telegestor: 'online' as const }]) {
      const got = await expectCells(curitiba, 12, f);
      const want = countsOf((await expected(curitiba, f)).map((p) => p.state));
      expect(got.total, JSON.stringify(f)).toEqual(want);
      expect(got.total.count, JSON.stringify(f)).toBeLessThan(whole.count);
      expect(got.total.count, JSON.stringify(f)).toBeGreaterThan(0);
    }
    // A team filter keeps orders only (a telemetry alert has no team).
    const team = await map(curitiba, { zoom: '12', team: teamId });
    expect(team.total.alert).toBe(0);
    expect(team.total.order).toBeGreaterThan(0);
  });

  it('refuse bad values with a pointer, and a team of another city as not found', async () => {
    for (const [q, pointer] of [
      ['zoom=12&bbox=-25.3,-49.3,-25.5,-49.2', '/query/bbox'],
      ['zoom=12&bbox=Curitiba', '/query/bbox'],
      ['zoom=23', '/query/zoom'],
      ['zoom=12&priority=Urgent', '/query/priority'],
      ['zoom=12&telegestor=dark', '/query/telegestor'],
    ] as const) {
      const res = await admin(`/tenants/${curitiba}/map?${q}`);
      expect(res.status, q).toBe(400);
      expect((await problemOf(res)).errors?.map((e) => e.pointer), q).toContain(pointer);
    }
    const manausTeam = await makeCityTeam(t.rt, { tenantId: manaus, name: 'Equipe Manaus Centro' });
    expect((await admin(`/tenants/${curitiba}/map?zoom=12&team=${manausTeam.id}`)).status).toBe(404);
  });
});

describe('a box', () => {
  it('counts the cells that touch it, whole; a pole on its edge is inside', async () => {
    const box = { south: -25.45, west: -49.3, north: -25.4, east: -49.25 };
    const got = await expectCells(curitiba, 14, {}, box);
    const all = await expected(curitiba);
    const level = 16;
    const touching = new Set(got.cells.map((c) => c.key));
    // Every pole inside the box is counted, in a cell that touches it.
    const inside = all.filter((p) => p.latitude >= box.south && p.latitude <= box.north && p.longitude >= box.west && p.longitude <= box.east);
    expect(inside.length).toBeGreaterThan(10);
    for (const p of inside) expect(touching.has(cellOf(p.latitude, p.longitude, level))).toBe(true);
    // And nothing from cells that do not touch it.
    const counted = all.filter((p) => touching.has(cellOf(p.latitude, p.longitude, level)));
    expect(got.total.count).toBe(counted.length);
    for (const c of got.cells) {
      expect(c.bounds.north).toBeGreaterThanOrEqual(box.south);
      expect(c.bounds.south).toBeLessThanOrEqual(box.north);
      expect(c.bounds.east).toBeGreaterThanOrEqual(box.west);
      expect(c.bounds.west).toBeLessThanOrEqual(box.east);
    }
  });

  it('answers the poles one by one from zoom 17 when few, with a pole exactly on the edge, and cells when many', async () => {
    const edge = await makeCityPole(t.rt, { tenantId: curitiba, code: 'CWB-BORDA-1', address: 'Rua Marechal Deodoro, 630', latitude: -25.4300, longitude: -49.2700 });
    const outside = await makeCityPole(t.rt, { tenantId: curitiba, code: 'CWB-FORA-1', address: 'Rua Marechal Deodoro, 700', latitude: -25.42999, longitude: -49.2700 });
    const box = { south: -25.4340, west: -49.2740, north: -25.4300, east: -49.2700 };
    const got = await map(curitiba, { zoom: '18', bbox: [box.south, box.west, box.north, box.east].join(',') });
    expect(got.mode).toBe('poles');
    const codes = got.poles.map((p) => p.code);
    expect(codes).toContain('CWB-BORDA-1');
    expect(codes).not.toContain('CWB-FORA-1');
    const want = (await expected(curitiba)).filter((p) => p.latitude >= box.south && p.latitude <= box.north && p.longitude >= box.west && p.longitude <= box.east);
    expect(got.poles.map((p) => [p.code, p.state]).sort()).toEqual(want.map((p) => [p.code, p.state]).sort());
    expect(got.total).toEqual(countsOf(want.map((p) => p.state)));
    // The whole city at zoom 17 holds more than `limit` poles: cells, still all of them.
    const many = await map(curitiba, { zoom: '17', bbox: [CWB.south, CWB.west, CWB.north, CWB.east].join(','), limit: '100' });
    expect(many.mode).toBe('cells');
    expect(many.total.count).toBe((await expected(curitiba)).length);
    await sql`DELETE FROM pole WHERE id IN (${edge.id}, ${outside.id})`.execute(t.rt.db);
  });
});

describe('tenant isolation', () => {
  it('another city’s operator gets 404, and each city sees only its own poles', async () => {
    const manausAdmin = tokenFetch(t, (await makeToken(t.rt, { service: true, grants: [{ tenantId: manaus, role: 'city-admin' }] })).token);
    const res = await manausAdmin(`/tenants/${curitiba}/map?zoom=12`);
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain('Curitiba');
    expect((await admin(`/tenants/00000000-0000-4000-8000-000000000000/map?zoom=12`)).status).toBe(404);
    const own = await manausAdmin(`/tenants/${manaus}/map?zoom=10`);
    expect(own.status).toBe(200);
    const body = (await own.json()) as CityMap;
    expect(body.total).toEqual({ count: 30, alert: 0, order: 0, off: 0, unknown: 30, ok: 0 });
    // Curitiba's box asked of Manaus: nothing.
    const there = (await (await manausAdmin(`/tenants/${manaus}/map?zoom=12&bbox=${[CWB.south, CWB.west, CWB.north, CWB.east].join(',')}`)).json()) as CityMap;
    expect(there.total.count).toBe(0);
    // A viewer of Curitiba reads its map.
    const viewer = tokenFetch(t, (await makeToken(t.rt, { service: true, grants: [{ tenantId: curitiba, role: 'viewer' }] })).token);
    expect((await viewer(`/tenants/${curitiba}/map?zoom=12`)).status).toBe(200);
  });
});
