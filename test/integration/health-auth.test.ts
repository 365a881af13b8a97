import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotatePartnerKey, setPartnerEnabled } from '../../src/services/partners/service.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

async function problem(res: Response) {
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return (await res.json()) as { type: string; title: string; status: number; detail: string; requestId: string; instance: string };
}

describe('GET /api/external/health', () => {
  it('answers the 2.8 body for a valid key', async () => {
    const tenant = await makeTenant(t.rt, { ibgeCode: '3550308' });
    const p = await makePartner(t.rt, { tenantId: tenant.id, code: 'health-ok', scopes: ['canReadCityData'] });
    const before = Date.now();
    const res = await t.fetch('/api/external/health', { apiKey: p.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(res.headers.get('content-language')).toBe('pt-BR');
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({ status: 'ok', externalSystemCode: 'health-ok', environment: 'test', tenantId: tenant.id, ibgeCode: '3550308', serverTime: expect.any(String) });
    expect(body.serverTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(body.serverTime as string)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('answers null ibgeCode when the city has none, for a key with no scope at all', async () => {
    const tenant = await makeTenant(t.rt, { ibgeCode: null });
    const p = await makePartner(t.rt, { tenantId: tenant.id, scopes: [] });
    const res = await t.fetch('/api/external/health', { apiKey: p.apiKey });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { ibgeCode: unknown }).ibgeCode).toBeNull();
  });

  it('answers 401 problem+json without a key, with a malformed key and with an unknown key', async () => {
    for (const apiKey of [undefined, 'not-a-key', 'lmn_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']) {
      const res = await t.fetch('/api/external/health', { apiKey });
      expect(res.status).toBe(401);
      const body = await problem(res);
      expect(body.type).toBe('urn:lumen:problem:unauthorized');
      expect(body.status).toBe(401);
      expect(body.title).toBe('Não autenticado');
      expect(body.instance).toBe('/api/external/health');
      expect(body.requestId).toBe(res.headers.get('x-request-id'));
    }
  });

  it('speaks English when asked', async () => {
    const res = await t.fetch('/api/external/health', { headers: { 'accept-language': 'en-US,en;q=0.9' } });
    expect(res.headers.get('content-language')).toBe('en');
    expect((await problem(res)).title).toBe('Unauthenticated');
  });

  it('keeps a sane incoming X-Request-Id and replaces a hostile one', async () => {
    const kept = await t.fetch('/api/external/health', { headers: { 'x-request-id': 'abc-123' } });
    expect(kept.headers.get('x-request-id')).toBe('abc-123');
    const replaced = await t.fetch('/api/external/health', { headers: { 'x-request-id': 'a b<script>' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('invalidates the previous key at once on rotation', async () => {
    const p = await makePartner(t.rt);
    expect((await t.fetch('/api/external/health', { apiKey: p.apiKey })).status).toBe(200);
    const rotated = await rotatePartnerKey(t.rt, p.code);
    expect(rotated.apiKey).not.toBe(p.apiKey);
    expect((await t.fetch('/api/external/health', { apiKey: p.apiKey })).status).toBe(401);
    expect((await t.fetch('/api/external/health', { apiKey: rotated.apiKey })).status).toBe(200);
  });

  it('answers 403 partner-disabled for a disabled partner, and 200 again once enabled', async () => {
    const p = await makePartner(t.rt);
    await setPartnerEnabled(t.rt, p.code, false);
    const res = await t.fetch('/api/external/health', { apiKey: p.apiKey });
    expect(res.status).toBe(403);
    expect((await problem(res)).type).toBe('urn:lumen:problem:partner-disabled');
    await setPartnerEnabled(t.rt, p.code, true);
    expect((await t.fetch('/api/external/health', { apiKey: p.apiKey })).status).toBe(200);
  });

  it('refuses an expired key with 401', async () => {
    const p = await makePartner(t.rt);
    await t.rt.db.updateTable('api_key').set({ expires_at: new Date(Date.now() - 1000) }).where('key_prefix', '=', p.keyPrefix).execute();
    expect((await t.fetch('/api/external/health', { apiKey: p.apiKey })).status).toBe(401);
  });

  it('stores only the hash of a key', async () => {
    const p = await makePartner(t.rt);
    const row = await t.rt.db.selectFrom('api_key').selectAll().where('key_prefix', '=', p.keyPrefix).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(p.apiKey.slice(17));
    expect(row.key_hash.length).toBe(32);
  });

  it('never writes a key into the logs', async () => {
    const p = await makePartner(t.rt);
    await t.fetch('/api/external/health', { apiKey: p.apiKey });
    await t.fetch('/api/external/health', { apiKey: p.apiKey + 'x' });
    expect(t.logs.text).toContain('"path":"/api/external/health"');
    expect(t.logs.text).not.toContain(p.apiKey.slice(9));
  });
});

describe('routing and probes', () => {
  it('answers 404 and 405 as problem+json', async () => {
    const nf = await t.fetch('/api/external/nothing-here');
    expect(nf.status).toBe(404);
    expect((await problem(nf)).type).toBe('urn:lumen:problem:not-found');
    const na = await t.fetch('/api/external/health', { method: 'DELETE' });
    expect(na.status).toBe(405);
    expect((await problem(na)).type).toBe('urn:lumen:problem:method-not-allowed');
  });

  it('serves /livez, /readyz, the contract and the docs page', async () => {
    expect((await t.fetch('/livez')).status).toBe(200);
    const ready = await t.fetch('/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok' });
    const doc = (await (await t.fetch('/api/external/openapi.json')).json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/external/health', '/api/external/service-orders', '/api/external/poles', '/api/external/events']));
    const page = await t.fetch('/docs/partner');
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const html = await page.text();
    expect(html).toContain('spec-url="/api/external/openapi.json"');
    expect(html).not.toMatch(/https?:\/\//);
    const js = await t.fetch('/docs/redoc.standalone.js');
    expect(js.status).toBe(200);
    expect((await js.text()).length).toBeGreaterThan(100_000);
  });
});
