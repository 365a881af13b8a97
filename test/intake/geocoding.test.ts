import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCityPole, makePartner, makeTenant } from '../support/factories.js';
import { eventually, intakeBody, intakeFootprint, postJson, startIntakeApp, type IntakeTestApp } from './support.js';

/**
 * A Nominatim-compatible stub on a fixed loopback port that the test can take down
 * (connection refused), bring back, or make slow.
 */
class Geocoder {
  mode: 'answer' | 'slow' | 'empty' = 'answer';
  answer = { lat: '-23.5614', lon: '-46.6559' };
  readonly requests: URL[] = [];
  readonly agents: string[] = [];
  private server: http.Server | null = null;
  port = 0;

  async up(): Promise<void> {
    const server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://geocoder');
      this.requests.push(url);
      this.agents.push(String(req.headers['user-agent']));
      if (url.pathname.startsWith('/hang/')) return; // never answered: the connection stays open until the server goes down
      if (url.pathname !== '/search') return void res.writeHead(404).end();
      if (this.mode === 'slow') return void setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('[]'), 5000).unref();
      const body = this.mode === 'empty' ? [] : [{ place_id: 1, lat: this.answer.lat, lon: this.answer.lon, display_name: 'Somewhere', category: 'highway' }];
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const BUDGET_MS = 700;
let t: IntakeTestApp;
const geocoder = new Geocoder();

beforeAll(async () => {
  await geocoder.up();
  t = await startIntakeApp({
    LUMEN_GEOCODER_URL: `http://127.0.0.1:${geocoder.port}`,
    LUMEN_GEOCODE_BUDGET_MS: String(BUDGET_MS),
    LUMEN_GEOCODER_TIMEOUT_MS: '3000',
    LUMEN_GEOCODE_RETRY_DELAY_SECONDS: '1',
  });
});
afterAll(async () => {
  await t?.stop();
  await geocoder.down();
});

/** A request without coordinates. */
function textOnly(protocolNumber: string, address: Record<string, string>) {
  return intakeBody(protocolNumber, { address });
}

async function alertRow(id: string) {
  return t.rt.db.selectFrom('alert').select(['latitude', 'longitude', 'location_source', 'service_order_id']).where('id', '=', id).executeTakeFirstOrThrow();
}
async function orderRow(id: string) {
  return t.rt.db.selectFrom('service_order').select(['latitude', 'longitude', 'status']).where('id', '=', id).executeTakeFirstOrThrow();
}

describe('geocoding at intake (N8)', () => {
  it('uses the coordinates sent, without calling anyone', async () => {
    const p = await makePartner(t.rt);
    const calls = geocoder.requests.length;
    const res = await postJson(t, p.apiKey, intakeBody('GEO-PAYLOAD'));
    expect(res.body.alert).toMatchObject({ latitude: -23.5573, longitude: -46.6602 });
    expect((await alertRow(res.body.alert.id)).location_source).toBe('payload');
    expect(geocoder.requests.length).toBe(calls);
  });

  it("matches the tenant's poles first: accent-, case- and abbreviation-insensitive, nearest house number, same neighborhood", async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    await makeCityPole(t.rt, { tenantId: tenant.id, address: 'R. Augusta, 1100', neighborhood: 'Consolação', latitude: -23.551, longitude: -46.651 });
    await makeCityPole(t.rt, { tenantId: tenant.id, address: 'R. Augusta, 1480', neighborhood: 'Consolação', latitude: -23.5571, longitude: -46.6601 });
    await makeCityPole(t.rt, { tenantId: tenant.id, address: 'Rua Augusta, 1500', neighborhood: 'Jardins', latitude: -23.57, longitude: -46.67 });
    await makeCityPole(t.rt, { tenantId: tenant.id, address: 'Rua Augusta, 1505', neighborhood: 'Consolação', latitude: -23.6, longitude: -46.6, active: false });
    const calls = geocoder.requests.length;
    const res = await postJson(t, p.apiKey, textOnly('GEO-POLE', { street: 'RUA AUGUSTA', number: '1500', neighborhood: 'consolacao' }));
    expect(res.status).toBe(201);
    expect(res.body.alert).toMatchObject({ latitude: -23.5571, longitude: -46.6601 });
    expect(await alertRow(res.body.alert.id)).toMatchObject({ location_source: 'poles' });
    expect(await orderRow(res.body.id)).toMatchObject({ latitude: -23.5571, longitude: -46.6601 });
    expect(geocoder.requests.length).toBe(calls);

    // No house number, or one far from every pole: the poles say nothing, the geocoder answers.
    for (const [i, number] of ['S/N', '2900'].entries()) {
      const other = await postJson(t, p.apiKey, textOnly(`GEO-POLE-${i}`, { street: 'Rua Augusta', number, neighborhood: 'Consolação' }));
      expect(other.body.alert).toMatchObject({ latitude: -23.5614, longitude: -46.6559 });
      expect((await alertRow(other.body.alert.id)).location_source).toBe('geocoder');
    }
  });

  it('asks the Nominatim-compatible service (format=jsonv2, Lumen/<version>) when no pole matches', async () => {
    const tenant = await makeTenant(t.rt, { name: 'São Paulo' });
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const res = await postJson(t, p.apiKey, textOnly('GEO-HTTP', { street: 'Avenida Paulista', number: 'S/N', neighborhood: 'Bela Vista', reference: 'Próximo ao MASP' }));
    expect(res.status).toBe(201);
    expect(res.body.alert).toMatchObject({ latitude: -23.5614, longitude: -46.6559 });
    expect(await orderRow(res.body.id)).toMatchObject({ latitude: -23.5614, longitude: -46.6559 });
    const call = geocoder.requests.at(-1)!;
    expect(call.pathname).toBe('/search');
    expect(Object.fromEntries(call.searchParams)).toEqual({ format: 'jsonv2', limit: '1', q: 'Avenida Paulista, Bela Vista, São Paulo', countrycodes: 'br' });
    expect(geocoder.agents.at(-1)).toMatch(/^Lumen\/\d+\.\d+\.\d+$/);
  });

  it('geocodes a Pending alert again when a resend moves its address; never a Linked one', async () => {
    const manual = await makeTenant(t.rt, { intakePolicy: 'manual' });
    const p = await makePartner(t.rt, { tenantId: manual.id });
    const first = await postJson(t, p.apiKey, intakeBody('GEO-RESEND'));
    geocoder.answer = { lat: '-22.9', lon: '-43.2' };
    try {
      const moved = await postJson(t, p.apiKey, textOnly('GEO-RESEND', { street: 'Rua Nova', number: '10' }));
      expect(moved.status).toBe(200);
      expect(moved.body.alert).toMatchObject({ id: first.body.alert.id, latitude: -22.9, longitude: -43.2 });
      expect((await alertRow(first.body.alert.id)).location_source).toBe('geocoder');

      const auto = await makePartner(t.rt);
      const linked = await postJson(t, auto.apiKey, intakeBody('GEO-LINKED'));
      const calls = geocoder.requests.length;
      const kept = await postJson(t, auto.apiKey, textOnly('GEO-LINKED', { street: 'Rua Nova', number: '10' }));
      expect(kept.body.alert).toMatchObject({ latitude: -23.5573, longitude: -46.6602 });
      expect(geocoder.requests.length).toBe(calls);
      expect(linked.body.id).toBe(kept.body.id);
    } finally {
      geocoder.answer = { lat: '-23.5614', lon: '-46.6559' };
    }
  });
});

describe('when geocoding fails (N8)', () => {
  it('answers 201 with null coordinates while the geocoder is down, then a background job fills the alert and its still-OPEN order', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    await geocoder.down();
    let open: { body: any };
    let assigned: { body: any };
    try {
      open = await postJson(t, p.apiKey, textOnly('GEO-DOWN-1', { street: 'Rua Sem Poste', number: '10' }));
      assigned = await postJson(t, p.apiKey, textOnly('GEO-DOWN-2', { street: 'Rua Sem Poste', number: '20' }));
      for (const res of [open, assigned]) {
        expect(res.body.alert).toMatchObject({ latitude: null, longitude: null, status: 'Linked' });
        expect(await alertRow(res.body.alert.id)).toMatchObject({ latitude: null, location_source: null });
        expect(await orderRow(res.body.id)).toMatchObject({ latitude: null, longitude: null });
      }
      // An operator assigns the second order meanwhile: its location is then the operator's business.
      await t.rt.db.updateTable('service_order').set({ status: 'ASSIGNED' }).where('id', '=', assigned.body.id).execute();
    } finally {
      await geocoder.up();
    }
    for (const res of [open, assigned]) {
      await eventually(() => alertRow(res.body.alert.id), (a) => a.latitude !== null, 20_000);
      expect(await alertRow(res.body.alert.id)).toMatchObject({ latitude: -23.5614, longitude: -46.6559, location_source: 'geocoder' });
    }
    expect(await orderRow(open.body.id)).toMatchObject({ status: 'OPEN', latitude: -23.5614, longitude: -46.6559 });
    expect(await orderRow(assigned.body.id)).toMatchObject({ status: 'ASSIGNED', latitude: null, longitude: null });
  });

  it('does not wait longer than the budget for a slow geocoder', async () => {
    const p = await makePartner(t.rt);
    geocoder.mode = 'slow';
    let res: { status: number; body: any };
    const started = Date.now();
    try {
      res = await postJson(t, p.apiKey, textOnly('GEO-SLOW', { street: 'Rua Lenta', number: '5' }));
    } finally {
      geocoder.mode = 'answer';
    }
    const elapsed = Date.now() - started;
    expect(res.status).toBe(201);
    expect(res.body.alert).toMatchObject({ latitude: null, longitude: null });
    expect(elapsed).toBeGreaterThanOrEqual(BUDGET_MS - 50);
    expect(elapsed).toBeLessThan(BUDGET_MS + 1000);
    await eventually(() => alertRow(res.body.alert.id), (a) => a.latitude !== null, 20_000);
  });

  it('logs a request its client abandoned while an attachment was downloading as abandoned, not as a server error, and keeps nothing', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const calls = geocoder.requests.length;
    const client = new AbortController();
    const sent = fetch(`${t.baseUrl}/api/external/service-orders`, {
      method: 'POST',
      headers: { 'x-api-key': p.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(intakeBody('GONE-1', { attachments: [{ type: 'photo', url: `http://127.0.0.1:${geocoder.port}/hang/a.jpg`, filename: 'a.jpg', contentType: 'image/jpeg' }] })),
      signal: client.signal,
    }).catch((err: Error) => err);
    // The download has started (the host has the request, and never answers): the client gives up.
    await eventually(async () => geocoder.requests.length, (n) => n > calls);
    client.abort();
    expect(await sent).toMatchObject({ name: 'AbortError' });
    await eventually(async () => t.logs.lines.some((l) => l.includes('request abandoned by the client')), (seen) => seen);
    expect(t.logs.text).not.toContain('unhandled error');
    expect(await intakeFootprint(t, tenant.id)).toMatchObject({ alerts: 0, keys: 0 });
  });

  it('answers 201 with null coordinates when the geocoder knows no such place', async () => {
    const p = await makePartner(t.rt);
    geocoder.mode = 'empty';
    try {
      const res = await postJson(t, p.apiKey, textOnly('GEO-EMPTY', { street: 'Rua Que Não Existe', number: '1' }));
      expect(res.status).toBe(201);
      expect(res.body.alert).toMatchObject({ latitude: null, longitude: null });
    } finally {
      geocoder.mode = 'answer';
    }
  });
});
