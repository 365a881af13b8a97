/**
 * Where a city is: its extent from its poles (kept current by every pole write, the
 * import included) or configured for a city with no poles; a location far from the city
 * or from every pole refused without a confirmation, with how far; the set-location
 * search through intake's geocoding chain, limited to the city (a loopback
 * Nominatim-compatible geocoder). Manaus, 2,700 km from São Paulo, and Porto Alegre.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makeCityPole, makePartner, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, cliJson, problemOf } from '../operations/support.js';
import { makeToken, tokenFetch } from '../operators/support.js';

let t: TestApp;
let admin: ReturnType<typeof adminFetch>;
let geocoderAnswer = { lat: '-3.1316', lon: '-60.0233' };
let geocoder: http.Server;
let manaus: string;
let portoAlegre: string;
let partner: Awaited<ReturnType<typeof makePartner>>;

beforeAll(async () => {
  geocoder = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://geocoder');
    if (url.pathname !== '/search') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([{ place_id: 1, lat: geocoderAnswer.lat, lon: geocoderAnswer.lon, display_name: 'Somewhere' }]));
  });
  await new Promise<void>((resolve) => geocoder.listen(0, '127.0.0.1', resolve));
  t = await startTestApp({ env: { LUMEN_GEOCODER_URL: `http://127.0.0.1:${(geocoder.address() as AddressInfo).port}`, LUMEN_GEOCODER_TIMEOUT_MS: '3000' } });
  admin = adminFetch(t, await adminToken(t));
  manaus = (await makeTenant(t.rt, { name: 'Manaus', ibgeCode: '1302603', intakePolicy: 'manual' })).id;
  portoAlegre = (await makeTenant(t.rt, { name: 'Porto Alegre — Divisão de Iluminação Pública', ibgeCode: '4314902', intakePolicy: 'manual' })).id;
  partner = await makePartner(t.rt, { tenantId: manaus, code: 'PORTAL-MANAUS-156' });
});
afterAll(async () => {
  await t?.stop();
  geocoder?.closeAllConnections();
  await new Promise<void>((resolve) => geocoder?.close(() => resolve()));
});

const tenant = async (id: string) => (await (await admin(`/tenants/${id}`)).json()) as { extent: { south: number; west: number; north: number; east: number } | null; extentSource: string | null; locationCheckMeters: number };

describe('the extent of a city', () => {
  it('is the box of its active poles, kept current by inserts, moves, deactivation, deletion and the import', async () => {
    expect(await tenant(manaus)).toMatchObject({ extent: null, extentSource: null, locationCheckMeters: 200 });
    const centro = await makeCityPole(t.rt, { tenantId: manaus, code: 'MAO-00001', address: 'Av. Eduardo Ribeiro, 620', neighborhood: 'Centro', latitude: -3.1316, longitude: -60.0233 });
    await makeCityPole(t.rt, { tenantId: manaus, code: 'MAO-00002', address: 'Av. Djalma Batista, 1200', neighborhood: 'Chapada', latitude: -3.0930, longitude: -60.0230 });
    expect((await tenant(manaus)).extent).toEqual({ south: -3.1316, west: -60.0233, north: -3.0930, east: -60.0230 });
    expect((await tenant(manaus)).extentSource).toBe('poles');
    const far = await makeCityPole(t.rt, { tenantId: manaus, code: 'MAO-00003', address: 'Estrada do Tarumã, 10', neighborhood: 'Tarumã', latitude: -3.0100, longitude: -60.0900 });
    expect((await tenant(manaus)).extent).toEqual({ south: -3.1316, west: -60.09, north: -3.01, east: -60.0230 });
    // The pole on the north-west edge made inactive: the box shrinks back.
    await sql`UPDATE pole SET active = false WHERE id = ${far.id}`.execute(t.rt.db);
    expect((await tenant(manaus)).extent).toEqual({ south: -3.1316, west: -60.0233, north: -3.0930, east: -60.0230 });
    // A pole moved from the south edge, then deleted.
    await sql`UPDATE pole SET latitude = -3.1200 WHERE id = ${centro.id}`.execute(t.rt.db);
    expect((await tenant(manaus)).extent!.south).toBe(-3.12);
    await sql`DELETE FROM pole WHERE id = ${far.id}`.execute(t.rt.db);
    // The import (COPY into a staging table, then one UPDATE and one INSERT).
    const rows = ['code,address,neighborhood,latitude,longitude,active,device_identifier'];
    for (let i = 0; i < 50; i++) rows.push(`MAO-1${String(i).padStart(4, '0')},Rua Dez de Julho ${100 + i * 10},Centro,${(-3.1300 + i * 0.0001).toFixed(6)},${(-60.0220 - i * 0.0001).toFixed(6)},true,`);
    rows.push('MAO-00001,Av. Eduardo Ribeiro 620,Centro,-3.1400,-60.0233,true,');
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'lumen-extent-')), 'poles.csv');
    writeFileSync(file, rows.join('\n') + '\n');
    const out = await t.cli('pole', 'import', '--tenant', manaus, file);
    expect(out.code, out.stderr).toBe(0);
    const after = (await tenant(manaus)).extent!;
    expect(after.south).toBe(-3.14);
    expect(after.west).toBeCloseTo(-60.0269, 6);
    expect(after.north).toBe(-3.093);
  });

  it('is configured for a city with no poles yet, by the admin API and the CLI, and refused when it is not a box', async () => {
    const set = (id: string, body: unknown) => admin(`/tenants/${id}/extent`, { method: 'PUT', json: body });
    const res = await set(portoAlegre, { extent: { south: -30.27, west: -51.31, north: -29.93, east: -51.01 } });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toMatchObject({ extentSource: 'configured', extent: { south: -30.27, west: -51.31, north: -29.93, east: -51.01 } });
    const bad = await set(portoAlegre, { extent: { south: -29.9, west: -51.31, north: -30.27, east: -51.01 } });
    expect(bad.status).toBe(422);
    expect((await problemOf(bad)).errors?.map((e) => e.pointer)).toEqual(['/extent/north']);
    expect((await tenant(portoAlegre)).extent!.north).toBe(-29.93);
    const cli = cliJson(await t.cli('tenant', 'update', portoAlegre, '--extent', 'none', '--location-check-meters', '350', '--json'));
    expect(cli).toMatchObject({ extent: null, extentSource: null, locationCheckMeters: 350 });
    const wrong = await t.cli('tenant', 'update', portoAlegre, '--extent', 'Porto Alegre');
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/--extent: "Porto Alegre" is not south,west,north,east/);
    // A configured box wins over the poles' box.
    await set(manaus, { extent: { south: -3.25, west: -60.2, north: -2.9, east: -59.8 } });
    expect(await tenant(manaus)).toMatchObject({ extentSource: 'configured', extent: { south: -3.25, west: -60.2, north: -2.9, east: -59.8 } });
    await set(manaus, { extent: null });
    expect((await tenant(manaus)).extentSource).toBe('poles');
    const audit = await t.rt.db.selectFrom('audit_log').select('action').where('entity_id', '=', portoAlegre).where('action', '=', 'tenant.set-extent').execute();
    expect(audit).toHaveLength(2);
  });

  it('is another city’s secret: its operator gets 404, and a viewer may not change it', async () => {
    const outsider = tokenFetch(t, (await makeToken(t.rt, { service: true, grants: [{ tenantId: portoAlegre, role: 'city-admin' }] })).token);
    for (const [method, p] of [['PUT', `/tenants/${manaus}/extent`], ['GET', `/tenants/${manaus}/places?q=MAO-00002`]] as const) {
      const res = await outsider(p, { method, ...(method === 'PUT' ? { json: { locationCheckMeters: 20 } } : {}) });
      expect(res.status, p).toBe(404);
      expect(await res.text()).not.toContain('Manaus');
    }
    const viewer = tokenFetch(t, (await makeToken(t.rt, { service: true, grants: [{ tenantId: manaus, role: 'viewer' }] })).token);
    expect((await viewer(`/tenants/${manaus}/extent`, { method: 'PUT', json: { locationCheckMeters: 20 } })).status).toBe(403);
    expect((await tenant(manaus)).locationCheckMeters).toBe(200);
  });
});

describe('a location that cannot be wrong by one click', () => {
  it('refuses a point outside the city, or far from every pole, saying how far; saves it when confirmed', async () => {
    const alert = await makeAlert(t.rt, { tenantId: manaus, externalSystemId: partner.id, latitude: null, longitude: null });
    const setLocation = (body: Record<string, unknown>) => admin(`/alerts/${alert.id}/set-location`, { json: body });
    // São Paulo, 2,700 km away.
    const sp = await setLocation({ latitude: -23.5573, longitude: -46.6602 });
    expect(sp.status).toBe(422);
    const problem = await problemOf(sp);
    expect(problem.type).toBe('urn:lumen:problem:location-unconfirmed');
    expect(problem.detail).toMatch(/^Este ponto fica a 2\.\d{3} km da área de Manaus\. Confirme para gravar assim mesmo\.$/);
    expect(problem.errors?.[0]?.pointer).toBe('/confirmOutside');
    const en = await admin(`/alerts/${alert.id}/set-location`, { json: { latitude: -23.5573, longitude: -46.6602 }, headers: { 'accept-language': 'en' } });
    expect((await problemOf(en)).detail).toMatch(/^This point is 2,\d{3} km outside Manaus\. Confirm to save it anyway\.$/);
    // Inside the city, about 2 km from the nearest pole.
    const far = await setLocation({ latitude: -3.1100, longitude: -60.0130 });
    expect(far.status).toBe(422);
    expect((await problemOf(far)).detail).toMatch(/^Este ponto fica a 2,\d km do poste mais próximo de Manaus/);
    const row = await t.rt.db.selectFrom('alert').select(['latitude', 'location_source']).where('id', '=', alert.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ latitude: null, location_source: null });
    expect(await t.rt.db.selectFrom('audit_log').select('id').where('entity_id', '=', alert.id).where('action', '=', 'alert.set-location').execute()).toEqual([]);
    // Beside a pole: no question asked.
    const near = await setLocation({ latitude: -3.0932, longitude: -60.0231 });
    expect(near.status, await near.clone().text()).toBe(200);
    // The CLI says the same, and takes --confirm-outside.
    const cli = await t.cli('alert', 'set-location', alert.id, '--lat', '-23.5573', '--lon', '-46.6602');
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toMatch(/This point is 2,\d{3} km outside Manaus\. Confirm to save it anyway\./);
    // Confirmed: saved where the operator said.
    const confirmed = await setLocation({ latitude: -3.1100, longitude: -60.0130, confirmOutside: true });
    expect(confirmed.status).toBe(200);
    expect(await confirmed.json()).toMatchObject({ latitude: -3.11, longitude: -60.013 });
    const moved = cliJson(await t.cli('alert', 'set-location', alert.id, '--lat', '-23.5573', '--lon', '-46.6602', '--confirm-outside', '--json'));
    expect(moved).toMatchObject({ latitude: -23.5573, longitude: -46.6602 });
  });

  it('asks nothing in a city with neither an extent nor poles', async () => {
    const recife = (await makeTenant(t.rt, { name: 'Recife', ibgeCode: '2611606', intakePolicy: 'manual' })).id;
    const p = await makePartner(t.rt, { tenantId: recife });
    const alert = await makeAlert(t.rt, { tenantId: recife, externalSystemId: p.id, latitude: null, longitude: null });
    expect((await admin(`/alerts/${alert.id}/set-location`, { json: { latitude: -8.0476, longitude: -34.877 } })).status).toBe(200);
  });
});

describe('the set-location search', () => {
  it('finds a pole by its code and an address through the geocoding chain, only inside the city', async () => {
    const search = async (q: string, id = manaus) => {
      const res = await admin(`/tenants/${id}/places?q=${encodeURIComponent(q)}`);
      expect(res.status, await res.clone().text()).toBe(200);
      return ((await res.json()) as { items: { label: string; latitude: number; longitude: number; source: string }[] }).items;
    };
    expect(await search('MAO-00002')).toEqual([{ label: 'Poste MAO-00002 — Av. Djalma Batista, 1200', latitude: -3.093, longitude: -60.023, source: 'pole' }]);
    geocoderAnswer = { lat: '-3.1190', lon: '-60.0210' };
    expect(await search('Rua Barroso, 355')).toEqual([{ label: 'Rua Barroso, 355', latitude: -3.119, longitude: -60.021, source: 'geocoder' }]);
    // A street of the same name in another city: not offered.
    geocoderAnswer = { lat: '-23.5614', lon: '-46.6559' };
    expect(await search('Rua Barroso, 355')).toEqual([]);
    // A city without an extent gets only its poles' answers.
    expect(await search('Rua Barroso, 355', portoAlegre)).toEqual([]);
    expect((await admin(`/tenants/${manaus}/places?q=x`)).status).toBe(400);
  });
});
