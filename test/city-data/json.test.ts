import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pole } from '../../generated/partner/types.gen.js';
import { loadServiceOrder, serviceOrderView } from '../../src/services/operations/order-view.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { ITEMS_PER_PIECE } from '../../src/db/repositories/city-data/page.repository.js';
import { makeCityOrder, makeCityPole, makeCityTeam, makePartner, makeTenant } from '../support/factories.js';
import { settle } from './support.js';

/**
 * The list pages are JSON written by PostgreSQL (0010_city_read_positions.sql). They
 * must be the bytes JSON.stringify wrote for the same rows read by node-postgres, the
 * serializer they replace (and that events still use for service orders), also for the
 * values where PostgreSQL's and JavaScript's text differ: tiny or negative-zero
 * numbers, control characters, years outside 1..9999.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

const ODD_TEXT = 'Rua "Sete", 7 \\ fim\n\t\u0001\u001f\u007f ação 🚀 \u2028\u2029 </script>';

async function reader(tenantId: string): Promise<string> {
  return (await makePartner(t.rt, { tenantId, scopes: ['canReadCityData'] })).apiKey;
}

/** The raw body, checked to be exactly what JSON.stringify writes for its own value, and its items' text. */
async function rawPage(path: string, apiKey: string): Promise<{ text: string; items: string }> {
  // identity: the answer as written (fetch asks for gzip by default, and a compressed answer is one Buffer).
  const res = await t.fetch(`${path}?pageSize=1000`, { apiKey, headers: { 'accept-encoding': 'identity' } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const text = await res.text();
  // Written piece by piece (src/lib/json-text.ts): the declared length is the UTF-8 bytes of the whole.
  expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(text, 'utf8'));
  expect(text).toBe(JSON.stringify(JSON.parse(text)));
  expect(text.startsWith('{"items":[')).toBe(true);
  return { text, items: text.slice('{"items":'.length, text.lastIndexOf(',"page":')) };
}

/** What the list served before for a city's poles: rows read by node-postgres, mapped and stringified by Node. */
async function nodePoles(tenantId: string): Promise<string> {
  const { rows } = await t.rt.pool.query<{
    id: string; code: string; address: string; neighborhood: string; latitude: number; longitude: number; active: boolean; updated_us: string;
    device_id: string | null; identifier: string | null; online: boolean | null; relay_on: boolean | null; last_communication_at: Date | null;
  }>(
    `SELECT p.id, p.code, p.address, p.neighborhood, p.latitude, p.longitude, p.active,
            to_char(p.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS updated_us,
            t.id AS device_id, t.identifier, t.online, t.relay_on, t.last_communication_at
       FROM pole p LEFT JOIN telegestor t ON t.pole_id = p.id WHERE p.tenant_id = $1 ORDER BY p.updated_at, p.id`,
    [tenantId],
  );
  const before: Pole[] = rows.map((r) => ({
    id: r.id,
    code: r.code,
    address: r.address,
    neighborhood: r.neighborhood,
    latitude: r.latitude,
    longitude: r.longitude,
    active: r.active,
    updatedAt: `${r.updated_us.slice(0, 23)}Z`,
    device: r.device_id === null ? null : { id: r.device_id, identifier: r.identifier!, online: r.online, relayOn: r.relay_on, lastCommunicationAt: r.last_communication_at ? r.last_communication_at.toISOString() : null },
  }));
  return JSON.stringify(before);
}

describe('JSON written by PostgreSQL', () => {
  it('poles: the bytes the Node serializer wrote for the same rows', async () => {
    const tenant = await makeTenant(t.rt);
    const apiKey = await reader(tenant.id);
    const odd = await makeCityPole(t.rt, { tenantId: tenant.id, code: 'ODD"1\u007f', address: ODD_TEXT, neighborhood: '', latitude: 0.00001, longitude: -1e-7, device: 'TG "odd" \\' });
    await makeCityPole(t.rt, { tenantId: tenant.id, code: 'ZERO', latitude: -0, longitude: 0.000123456789, active: false });
    await makeCityPole(t.rt, { tenantId: tenant.id, code: 'EDGE', latitude: -89.99999999999999, longitude: 179.99999999999997, device: 'TG-SILENT' });
    const far = await makeCityPole(t.rt, { tenantId: tenant.id, code: 'FAR', latitude: 1.5e-6, longitude: -0.1, device: 'TG-FAR' });
    const bc = await makeCityPole(t.rt, { tenantId: tenant.id, code: 'BC', device: 'TG-BC' });
    await t.rt.pool.query(`UPDATE telegestor SET online = true, relay_on = false, last_communication_at = '2026-03-14T12:41:07.532999Z' WHERE id = $1`, [odd.deviceId]);
    await t.rt.pool.query(`UPDATE telegestor SET online = false, relay_on = null, last_communication_at = '2026-06-01T00:00:00.0015Z' WHERE id = $1`, [far.deviceId]);
    await t.rt.pool.query(`UPDATE telegestor SET online = null, relay_on = true, last_communication_at = '0001-03-01 10:00:00.123456+00 BC' WHERE id = $1`, [bc.deviceId]);
    await settle(t);

    const { items } = await rawPage('/api/external/poles', apiKey);
    expect(items).toBe(await nodePoles(tenant.id));
    expect(items).toContain('"latitude":0.00001,"longitude":-1e-7');
    expect(items).toContain('"lastCommunicationAt":"2026-06-01T00:00:00.001Z"');
    expect(items).toContain('"lastCommunicationAt":"0000-03-01T10:00:00.123Z"');
  });

  it('poles: a page of many pieces (src/db/repositories/city-data/page.repository.ts, ITEMS_PER_PIECE) is the same bytes', async () => {
    const tenant = await makeTenant(t.rt);
    const apiKey = await reader(tenant.id);
    const count = ITEMS_PER_PIECE * 2 + 22;
    await t.rt.pool.query(
      `INSERT INTO pole (tenant_id, code, address, neighborhood, latitude, longitude, active)
       SELECT $1, 'MAO-' || lpad(g::text, 4, '0'), 'Avenida Eduardo Ribeiro, ' || g || ' — ação', 'Centro', -3.1316 + g * 1e-5, -60.0233 - g * 1e-5, g % 7 <> 0
         FROM generate_series(1, $2::int) g`,
      [tenant.id, count],
    );
    await t.rt.pool.query(`INSERT INTO telegestor (tenant_id, identifier, pole_id) SELECT tenant_id, 'TG-' || code, id FROM pole WHERE tenant_id = $1 AND code::text ~ '[02468]$'`, [tenant.id]);
    await settle(t);
    const { text, items } = await rawPage('/api/external/poles', apiKey);
    expect((JSON.parse(text) as { items: unknown[] }).items).toHaveLength(count);
    expect(items).toBe(await nodePoles(tenant.id));
  });

  it('service orders: the bytes serviceOrderView and JSON.stringify write', async () => {
    const tenant = await makeTenant(t.rt);
    const apiKey = await reader(tenant.id);
    const team = await makeCityTeam(t.rt, { tenantId: tenant.id, name: 'Equipe "Norte" \\ 2' });
    const pole = await makeCityPole(t.rt, { tenantId: tenant.id });
    const ids = [
      (await makeCityOrder(t.rt, { tenantId: tenant.id, address: ODD_TEXT, neighborhood: null, latitude: null, longitude: null })).id,
      (await makeCityOrder(t.rt, { tenantId: tenant.id, status: 'ASSIGNED', teamId: team.id, poleId: pole.id, latitude: 0.00001, longitude: -0 })).id,
      (await makeCityOrder(t.rt, { tenantId: tenant.id, status: 'COMPLETED', teamId: team.id, closedAt: new Date('2026-03-14T11:48:30.007Z'), latitude: -1e-7, longitude: 12.5 })).id,
    ];
    await settle(t);

    const { items } = await rawPage('/api/external/service-orders', apiKey);
    const views = [];
    for (const id of ids) views.push(serviceOrderView((await loadServiceOrder(t.rt.db, id))!));
    expect(items).toBe(JSON.stringify(views));
  });
});

describe('lumen_json_number and lumen_json_instant', () => {
  it('write what JSON.stringify writes for the value node-postgres reads', async () => {
    const numbers = [0, -0, 1, -1, 0.1 + 0.2, 1e-4, 9.99e-5, 1e-5, -1.5e-6, 1e-6, 9.999999999999999e-7, 1e-7, -2.5e-7, 5e-324, 123.456, -23.5614, 180, -89.99999999999999, 1e14 + 0.5, 999999999999999.9];
    const { rows: n } = await t.rt.pool.query<{ x: number; j: string }>(`SELECT x, lumen_json_number(x) AS j FROM unnest($1::float8[]) WITH ORDINALITY u(x, o) ORDER BY o`, [numbers.map(String)]);
    expect(n.map((r) => r.j)).toEqual(n.map((r) => JSON.stringify(r.x)));
    expect((await t.rt.pool.query(`SELECT lumen_json_number(NULL) AS j`)).rows[0].j).toBe('null');

    const instants = ['2026-03-14T12:41:07.532999Z', '1969-12-31T23:59:59.999500Z', '0001-01-01T00:00:00Z', '0001-06-01T00:00:00Z BC', '0100-02-03T04:05:06.789Z BC', '9999-12-31T23:59:59.999999Z', '10000-01-01T00:00:00Z', '275000-07-01T12:00:00.000001Z'];
    const { rows: i } = await t.rt.pool.query<{ x: Date; j: string }>(`SELECT x, lumen_json_instant(x) AS j FROM unnest($1::timestamptz[]) WITH ORDINALITY u(x, o) ORDER BY o`, [instants]);
    expect(i.map((r) => r.j)).toEqual(i.map((r) => JSON.stringify(r.x.toISOString())));
    expect((await t.rt.pool.query(`SELECT lumen_json_instant(NULL) AS j`)).rows[0].j).toBe('null');
  });
});
