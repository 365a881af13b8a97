import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, cliJson } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { getPage, settle, walkCursor, type PoleItem } from './support.js';

let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await startTestApp();
  dir = mkdtempSync(path.join(os.tmpdir(), 'lumen-poles-'));
});
afterAll(async () => {
  await t?.stop();
});

function write(name: string, content: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, content);
  return file;
}

const json = cliJson;

async function city() {
  const tenant = await makeTenant(t.rt);
  const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] });
  return { tenantId: tenant.id, apiKey: partner.apiKey };
}

async function poles(apiKey: string): Promise<Map<string, PoleItem>> {
  await settle(t);
  const items = await walkCursor<PoleItem>(t, '/api/external/poles', apiKey, null, 1000);
  return new Map(items.map((p) => [p.code, p]));
}

const HEADER = 'code,address,neighborhood,latitude,longitude,active,device_identifier';

describe('lumen pole import (CSV)', () => {
  it('imports, reports bad rows with line numbers, and reads back over HTTP', async () => {
    const c = await city();
    const file = write(
      'city.csv',
      [
        HEADER,
        'SP-001,"Avenida Paulista, 1578",Bela Vista,-23.5614,-46.6559,true,TG-001',
        'SP-002,Rua Major Sertório 210,Vila Buarque,-23.5452,-46.6481,false,',
        '"SP-003","Rua ""Quoted"" Name, 10",Consolação,-23.5573,-46.6602,,TG-003',
        'SP-004,Rua Sem Coordenada,Sé,,-46.6,true,',
        'SP-005,Rua Longe,Sé,-123,-46.6,true,',
        'SP-006,Rua Curta,Sé,-23.5',
        'SP-007,Rua Ativa,Sé,-23.5,-46.6,talvez,',
        'SP-001,Duplicate code,Sé,-23.5,-46.6,true,',
        'SP-008,Duplicate device,Sé,-23.5,-46.6,true,TG-001',
        '"SP-009","Endereço em',
        'duas linhas",Sé,-23.51,-46.61,sim,',
        '',
      ].join('\r\n'),
    );
    const summary = json(await t.cli('pole', 'import', '--tenant', c.tenantId, file, '--json'));
    expect(summary).toMatchObject({ format: 'csv', rowUnit: 'line', rows: 10, created: 4, updated: 0, unchanged: 0, rejected: 6, committed: true, devices: { created: 2, linked: 0, unlinked: 0 } });
    expect(summary.errors).toEqual([
      { line: 5, code: 'SP-004', message: 'latitude must be a number' },
      { line: 6, code: 'SP-005', message: 'latitude must be from -90 to 90' },
      { line: 7, message: 'has 4 field(s); the header has 7' },
      { line: 8, code: 'SP-007', message: 'active must be true or false' },
      { line: 9, code: 'SP-001', message: 'repeats the code of line 2' },
      { line: 10, code: 'SP-008', message: 'gives the device of line 2 to a second pole' },
    ]);

    const got = await poles(c.apiKey);
    expect([...got.keys()].sort()).toEqual(['SP-001', 'SP-002', 'SP-003', 'SP-009']);
    expect(got.get('SP-001')).toMatchObject({ address: 'Avenida Paulista, 1578', neighborhood: 'Bela Vista', latitude: -23.5614, longitude: -46.6559, active: true, device: { identifier: 'TG-001', online: null, relayOn: null, lastCommunicationAt: null } });
    expect(got.get('SP-002')).toMatchObject({ active: false, device: null });
    expect(got.get('SP-003')).toMatchObject({ address: 'Rua "Quoted" Name, 10', active: true, device: { identifier: 'TG-003' } });
    expect(got.get('SP-009')).toMatchObject({ address: 'Endereço em\r\nduas linhas', active: true });

    const human = await t.cli('pole', 'import', '--tenant', c.tenantId, file);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('line 5 (SP-004): latitude must be a number');
  });

  it('is idempotent by code: a re-import changes nothing, an edit updates only what changed, devices move', async () => {
    const c = await city();
    const v1 = write('v1.csv', [HEADER, 'A-1,Rua A,Centro,-23.1,-46.1,true,TG-A', 'A-2,Rua B,Centro,-23.2,-46.2,true,TG-B', 'A-3,Rua C,Centro,-23.3,-46.3,true,'].join('\n'));
    expect(json(await t.cli('pole', 'import', '--tenant', c.tenantId, v1, '--json'))).toMatchObject({ created: 3, updated: 0, unchanged: 0, devices: { created: 2, linked: 0, unlinked: 0 } });
    const first = await poles(c.apiKey);

    expect(json(await t.cli('pole', 'import', '--tenant', c.tenantId, v1, '--json'))).toMatchObject({ created: 0, updated: 0, unchanged: 3, devices: { created: 0, linked: 0, unlinked: 0 } });
    const again = await poles(c.apiKey);
    for (const code of ['A-1', 'A-2', 'A-3']) expect(again.get(code)!.updatedAt).toBe(first.get(code)!.updatedAt);

    // A-1 changes its address; TG-A moves from; A-2 loses TG-B; TG-B is kept (unlinked).
    const v2 = write('v2.csv', [HEADER, 'A-1,Rua A nova,Centro,-23.1,-46.1,true,', 'A-2,Rua B,Centro,-23.2,-46.2,true,', 'A-3,Rua C,Centro,-23.3,-46.3,true,TG-A'].join('\n'));
    expect(json(await t.cli('pole', 'import', '--tenant', c.tenantId, v2, '--json'))).toMatchObject({ created: 0, updated: 1, unchanged: 2, devices: { created: 0, linked: 1, unlinked: 1 } });
    const after = await poles(c.apiKey);
    expect(after.get('A-1')).toMatchObject({ address: 'Rua A nova', device: null });
    expect(after.get('A-2')!.device).toBeNull();
    expect(after.get('A-3')!.device).toMatchObject({ identifier: 'TG-A', id: first.get('A-1')!.device!.id });
    // Every pole whose item changed (own values or device) moved its updatedAt.
    for (const code of ['A-1', 'A-2', 'A-3']) expect(after.get(code)!.updatedAt > first.get(code)!.updatedAt).toBe(true);
    const { rows } = await t.rt.pool.query(`SELECT identifier, pole_id FROM telegestor WHERE tenant_id = $1 ORDER BY identifier`, [c.tenantId]);
    expect(rows).toEqual([
      { identifier: 'TG-A', pole_id: after.get('A-3')!.id },
      { identifier: 'TG-B', pole_id: null },
    ]);
  });

  it('imports nothing from an unusable file, with --strict on a bad row, or on a dry run', async () => {
    const c = await city();
    const cases: [string, string, RegExp][] = [
      ['header.csv', 'code,lat,lon\nX,1,2\n', /unknown column\(s\) "lat", "lon"/],
      ['missing.csv', 'code,address\nX,Rua\n', /lacks latitude, longitude/],
      ['quote.csv', `${HEADER}\nQ-1,"never closed,Sé,-23,-46,true,\n`, /unterminated quoted field in the row starting at line 2/],
      ['empty.csv', '', /empty/],
      ['allbad.csv', `${HEADER}\nZ-1,Rua,Sé,abc,-46,true,\n`, /no usable row/],
      ['notgeo.geojson', '{"type":"Point","coordinates":[1,2]}', /not a GeoJSON FeatureCollection/],
      ['broken.geojson', '{"type":"FeatureCollection","features":[', /not valid JSON/],
    ];
    for (const [name, content, message] of cases) {
      const out = await t.cli('pole', 'import', '--tenant', c.tenantId, write(name, content));
      expect(out.code, name).toBe(1);
      expect(out.stderr).toMatch(message);
      expect(out.stderr).toContain('nothing imported');
    }
    expect((await t.cli('pole', 'import', '--tenant', c.tenantId, path.join(dir, 'nope.csv'))).stderr).toMatch(/cannot read/);

    const mixed = write('mixed.csv', [HEADER, 'S-1,Rua,Sé,-23.5,-46.6,true,', 'S-2,Rua,Sé,north,-46.6,true,'].join('\n'));
    const strict = await t.cli('pole', 'import', '--tenant', c.tenantId, mixed, '--strict', '--json');
    expect(strict.code).toBe(1);
    expect(JSON.parse(strict.stdout)).toMatchObject({ committed: false, rejected: 1, errors: [{ line: 3, code: 'S-2' }] });
    expect(strict.stderr).toContain('--strict');

    const dry = json(await t.cli('pole', 'import', '--tenant', c.tenantId, mixed, '--dry-run', '--json'));
    expect(dry).toMatchObject({ committed: false, created: 1, rejected: 1 });
    expect((await poles(c.apiKey)).size).toBe(0);
    const { rows } = await t.rt.pool.query(`SELECT count(*)::int AS n FROM pole WHERE tenant_id = $1`, [c.tenantId]);
    expect(rows[0].n).toBe(0);

    const unknownTenant = await t.cli('pole', 'import', '--tenant', '00000000-0000-4000-8000-000000000000', mixed);
    expect(unknownTenant.code).toBe(1);
  });

  it('reads semicolon-separated files with decimal commas', async () => {
    const c = await city();
    const file = write('excel.csv', ['code;address;neighborhood;latitude;longitude;active;device_identifier', 'E-1;Rua, 1;Sé;-23,5505;-46,6333;sim;TG-E1'].join('\n'));
    expect(json(await t.cli('pole', 'import', '--tenant', c.tenantId, file, '--json'))).toMatchObject({ created: 1, rejected: 0 });
    expect((await poles(c.apiKey)).get('E-1')).toMatchObject({ address: 'Rua, 1', latitude: -23.5505, longitude: -46.6333, device: { identifier: 'TG-E1' } });
  });
});

describe('lumen pole import (GeoJSON)', () => {
  it('imports Point features with deviceIdentifier, and reports bad features by number', async () => {
    const c = await city();
    const fc = {
      type: 'FeatureCollection',
      features: [
        { type: 'Feature', geometry: { type: 'Point', coordinates: [-46.6559, -23.5614] }, properties: { code: 'G-1', address: 'Avenida Paulista, 1578', neighborhood: 'Bela Vista', active: true, deviceIdentifier: 'TG-G1' } },
        { type: 'Feature', geometry: { type: 'Point', coordinates: [-46.6481, -23.5452] }, properties: { code: 'G-2', address: 'Rua Major Sertório, 210', neighborhood: 'Vila Buarque', active: false, deviceIdentifier: null } },
        { type: 'Feature', geometry: { type: 'LineString', coordinates: [[0, 0], [1, 1]] }, properties: { code: 'G-3' } },
        { type: 'Feature', geometry: { type: 'Point', coordinates: [-46.6, -23.5] }, properties: { address: 'no code' } },
      ],
    };
    const summary = json(await t.cli('pole', 'import', '--tenant', c.tenantId, write('city.geojson', JSON.stringify(fc)), '--json'));
    expect(summary).toMatchObject({ format: 'geojson', rowUnit: 'feature', rows: 4, created: 2, rejected: 2, devices: { created: 1 } });
    expect(summary.errors).toEqual([
      { line: 3, code: 'G-3', message: 'geometry must be a Point with [longitude, latitude]' },
      { line: 4, message: 'code must have 1 to 100 characters' },
    ]);
    const got = await poles(c.apiKey);
    expect(got.get('G-1')).toMatchObject({ latitude: -23.5614, longitude: -46.6559, address: 'Avenida Paulista, 1578', active: true, device: { identifier: 'TG-G1' } });
    expect(got.get('G-2')).toMatchObject({ active: false, device: null });

    // One Feature per line (GeoJSON text sequence), errors by line; a re-import updates.
    const seq = [JSON.stringify(fc.features[0]).replace('Avenida Paulista, 1578', 'Avenida Paulista, 1600'), '{oops', JSON.stringify(fc.features[1])].map((l) => `\u001e${l}`).join('\n');
    const s2 = json(await t.cli('pole', 'import', '--tenant', c.tenantId, write('city.geojsonl', seq), '--json'));
    expect(s2).toMatchObject({ format: 'geojson-seq', rowUnit: 'line', updated: 1, unchanged: 1, rejected: 1, errors: [{ line: 2, message: 'is not valid JSON' }] });
    expect((await poles(c.apiKey)).get('G-1')!.address).toBe('Avenida Paulista, 1600');
  });

  it('a new user imports a CSV and reads it back with a plain HTTP GET', async () => {
    const c = await city();
    const file = write('quick.csv', [HEADER, 'Q-1,Rua Um,Centro,-23.55,-46.63,true,TG-Q1'].join('\n'));
    expect((await t.cli('pole', 'import', '--tenant', c.tenantId, file)).code).toBe(0);
    await settle(t);
    const res = await fetch(`${t.baseUrl}/api/external/poles?pageSize=10`, { headers: { 'X-Api-Key': c.apiKey } });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { items: PoleItem[]; total: number };
    expect(page.total).toBe(1);
    expect(page.items[0]).toMatchObject({ code: 'Q-1', device: { identifier: 'TG-Q1' } });
    expect((await getPage<PoleItem>(t, '/api/external/poles', c.apiKey, { updatedSince: page.items[0]!.updatedAt })).total).toBe(1);
  });
});
