import { readdirSync } from 'node:fs';
import http from 'node:http';
import zlib from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { createTelemetryKey } from '../../src/services/city-data/index.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_RATE_LIMIT_PER_MINUTE: '1000' } });
});
afterAll(async () => {
  await t?.stop();
});

/** A raw GET, so that the bytes on the wire are seen (fetch would decode them). */
function rawGet(path: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${t.baseUrl}${path}`, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

const POLICY = /^"default";q=(\d+);w=60$/;
const LEFT = /^"default";r=(\d+);t=(\d+)$/;

describe('RateLimit headers on every answer of the rate-limited surfaces', () => {
  it('reports the quota and what is left on 2xx and 4xx alike, counting down', async () => {
    const p = await makePartner(t.rt, { scopes: ['canCreateServiceOrders', 'canReadCityData'] });
    await t.rt.db.updateTable('external_system').set({ rate_limit_per_minute: 50 }).where('id', '=', p.id).execute();
    const ok = await t.fetch('/api/external/health', { apiKey: p.apiKey });
    const bad = await t.fetch('/api/external/service-orders', { method: 'POST', apiKey: p.apiKey, json: { protocolNumber: 'X' } });
    const badQuery = await t.fetch('/api/external/poles?pageSize=0', { apiKey: p.apiKey });
    expect([ok.status, bad.status, badQuery.status]).toEqual([200, 422, 400]);
    const left: number[] = [];
    for (const res of [ok, bad, badQuery]) {
      expect(res.headers.get('ratelimit-policy')).toBe('"default";q=50;w=60');
      const m = LEFT.exec(res.headers.get('ratelimit') ?? '');
      expect(m, res.headers.get('ratelimit') ?? 'no RateLimit header').not.toBeNull();
      expect(Number(m![2])).toBeGreaterThanOrEqual(1);
      expect(Number(m![2])).toBeLessThanOrEqual(60);
      left.push(Number(m![1]));
    }
    // Three calls in (at most) two windows: each answer says what is left after it.
    expect(left[0]).toBeLessThanOrEqual(49);
    expect(left[2]! < left[1]! || left[2] === 49).toBe(true);
  });

  it('sends them on the events endpoint and the telemetry API, not on unauthenticated answers', async () => {
    const p = await makePartner(t.rt);
    const events = await t.fetch('/api/external/events', { apiKey: p.apiKey });
    expect(events.status).toBe(200);
    expect(events.headers.get('ratelimit-policy')).toMatch(POLICY);
    const tenant = await makeTenant(t.rt);
    const key = await createTelemetryKey(t.rt, { tenantId: tenant.id, name: 'network' });
    const tel = await t.fetch('/api/telemetry/reports', { method: 'POST', apiKey: key.apiKey, json: { reports: [{ deviceIdentifier: "TG-NONE", online: true, relayOn: true, reportedAt: "2026-03-14T00:00:00Z" }] } });
    expect(tel.headers.get('ratelimit-policy')).toMatch(POLICY);
    expect(tel.headers.get('ratelimit')).toMatch(LEFT);
    // Open311 counts its requests too: answers, its own error lists and form posts alike.
    const services = await t.fetch('/open311/v2/services.json', { apiKey: p.apiKey });
    const badId = await t.fetch('/open311/v2/requests/not-a-number.xml', { apiKey: p.apiKey });
    const badPost = await t.fetch(`/open311/v2/requests.json?api_key=${p.apiKey}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'lat=nope' });
    expect([services.status, badId.status, badPost.status]).toEqual([200, 400, 400]);
    for (const res of [services, badPost]) {
      expect(res.headers.get('ratelimit-policy')).toMatch(POLICY);
      expect(res.headers.get('ratelimit')).toMatch(LEFT);
    }
    const anonymous = await t.fetch('/api/external/health');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('ratelimit')).toBeNull();
  });
});

describe('405 with Allow', () => {
  it('names the methods the path has', async () => {
    const p = await makePartner(t.rt);
    const cases: [string, string, string][] = [
      ['POST', '/api/external/health', 'GET'],
      ['DELETE', '/api/external/service-orders', 'GET, POST'],
      ['PUT', '/api/external/events', 'GET'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await t.fetch(path, { method, apiKey: p.apiKey });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get('allow')).toBe(allow);
      expect(((await res.json()) as { type: string }).type).toBe('urn:lumen:problem:method-not-allowed');
    }
  });
});

describe('compression when Accept-Encoding asks', () => {
  it('sends a large JSON answer as gzip or br, with Vary, and small or unasked ones as they are', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] });
    await sql`INSERT INTO pole (tenant_id, code, latitude, longitude, address) SELECT ${tenant.id}, 'Z' || lpad(g::text, 5, '0'), -23.5, -46.6, 'Rua Augusta, ' || g FROM generate_series(1, 200) g`.execute(t.rt.db);
    const path = '/api/external/poles?pageSize=200';
    const plain = await rawGet(path, { 'x-api-key': p.apiKey });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('Accept-Encoding');
    const json = JSON.parse(plain.body.toString('utf8')) as { items: unknown[]; total: number };
    expect(json.items).toHaveLength(200);

    const gz = await rawGet(path, { 'x-api-key': p.apiKey, 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.vary).toBe('Accept-Encoding');
    expect(gz.body.length).toBeLessThan(plain.body.length / 4);
    expect(JSON.parse(zlib.gunzipSync(gz.body).toString('utf8'))).toEqual(json);

    const br = await rawGet(path, { 'x-api-key': p.apiKey, 'accept-encoding': 'gzip;q=0.8, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(JSON.parse(zlib.brotliDecompressSync(br.body).toString('utf8'))).toEqual(json);

    const refused = await rawGet(path, { 'x-api-key': p.apiKey, 'accept-encoding': 'br;q=0, gzip;q=0' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    const small = await rawGet('/api/external/health', { 'x-api-key': p.apiKey, 'accept-encoding': 'gzip, br' });
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(small.body.toString('utf8'))).toMatchObject({ status: 'ok' });
  });
});

describe('closed request bodies', () => {
  it('refuses an unknown property of a telemetry report with 422 and a pointer to it, and stores nothing', async () => {
    const tenant = await makeTenant(t.rt);
    const key = await createTelemetryKey(t.rt, { tenantId: tenant.id, name: 'network' });
    const report = { deviceIdentifier: 'TG-1', online: true, relayOn: true, reportedAt: '2026-03-14T00:00:00Z' };
    const res = await t.fetch('/api/telemetry/reports', { method: 'POST', apiKey: key.apiKey, json: { reports: [report, { ...report, relay: false }], source: 'scada' } });
    expect(res.status).toBe(422);
    const problem = (await res.json()) as { type: string; errors: { pointer: string }[] };
    expect(problem.type).toBe('urn:lumen:problem:validation-failed');
    expect(problem.errors.map((e) => e.pointer).sort()).toEqual(['/reports/1/relay', '/source']);
  });
});

describe('docs pages', () => {
  it('serve and render the polling contract beside the others', async () => {
    const doc = await t.fetch('/docs/partner-polling.json');
    expect(doc.status).toBe(200);
    expect(((await doc.json()) as { info: { title: string } }).info.title).toBe('Lumen partner polling endpoint');
    for (const [page, spec] of [
      ['/docs/partner', '/api/external/openapi.json'],
      ['/docs/open311', '/open311/v2/openapi.json'],
      ['/docs/polling', '/docs/partner-polling.json'],
      ['/docs/sandbox', '/api/external/sandbox/openapi.json'],
      ['/docs/telemetry', '/api/telemetry/openapi.json'],
      ['/docs/admin', '/api/admin/openapi.json'],
    ]) {
      const res = await t.fetch(page!);
      expect(res.status, page).toBe(200);
      const text = await res.text();
      expect(text).toContain(`spec-url="${spec}"`);
      // Each contract page links back to the index.
      expect(text).toContain('href="/docs"');
      expect((await t.fetch(spec!)).status, spec).toBe(200);
    }
  });

  it('/docs is an index that reaches every published contract and guide, each served from here with no outside request', async () => {
    const index = await t.fetch('/docs');
    expect(index.status).toBe(200);
    const html = await index.text();
    const links = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!);
    // Every contract and every guide of docs/ is listed.
    for (const page of ['/docs/partner', '/docs/sandbox', '/docs/polling', '/docs/open311', '/docs/telemetry', '/docs/admin', '/docs/changelog', '/docs/guides/webhooks', '/docs/guides/operations']) expect(links, page).toContain(page);
    for (const file of readdirSync('docs').filter((f) => f.endsWith('.md'))) expect(links).toContain(`/docs/guides/${file.replace(/\.md$/, '')}`);
    // Every link of the index, and every link of every guide that stays on this site, answers.
    const guides = links.filter((l) => l.startsWith('/docs/guides/') || l === '/docs/changelog');
    const inner = new Set<string>();
    for (const guide of guides) {
      const res = await t.fetch(guide);
      expect(res.status, guide).toBe(200);
      const page = await res.text();
      expect(page, guide).toContain('href="/docs"');
      // Nothing on a guide page loads from another host (links out are fine; sources are not).
      expect([...page.matchAll(/src="([^"]*)"/g)].map((m) => m[1]).filter((u) => /^(https?:)?\/\//.test(u!)), guide).toEqual([]);
      for (const m of page.matchAll(/href="(\/[^"#]*)/g)) inner.add(m[1]!);
    }
    for (const link of [...links.filter((l) => l.startsWith('/') && l !== '/docs/partner-kit.tgz'), ...inner]) expect((await t.fetch(link)).status, link).toBe(200);
    // The Markdown links of the guides became served pages: no link to a .md file is left.
    expect([...inner].filter((l) => l.endsWith('.md'))).toEqual([]);
  });

  it('make no request to another host: no external resource in the page or in the Redoc bundle', async () => {
    const html = await (await t.fetch('/docs/polling')).text();
    // Any src/href in the page is relative.
    expect([...html.matchAll(/(?:src|href|spec-url)="([^"]*)"/g)].map((m) => m[1]).filter((u) => /^(https?:)?\/\//.test(u!))).toEqual([]);
    const js = await (await t.fetch('/docs/redoc.standalone.js')).text();
    // What would load something: an image/script source, a stylesheet or font URL, a fetch of an absolute URL.
    const loads = js.match(/(?:src\s*[:=]\s*|url\(\s*|@import\s+|fetch\(\s*)["']?(?:https?:)?\/\/[^"')\s]+/g) ?? [];
    expect(loads).toEqual([]);
    expect(js).not.toContain('cdn.redoc.ly');
  });
});
