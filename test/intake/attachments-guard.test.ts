import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePartner, makeTenant } from '../support/factories.js';
import { intakeBody, JPEG, postJson, startIntakeApp, startStub, type IntakeTestApp, type StubServer } from './support.js';

// Production-like outbound policy: LUMEN_ALLOW_LOOPBACK off.
let t: IntakeTestApp;
let host: StubServer;
beforeAll(async () => {
  t = await startIntakeApp({ LUMEN_ALLOW_LOOPBACK: 'false' });
  host = await startStub((_req, res) => void res.writeHead(200, { 'content-type': 'image/jpeg' }).end(JPEG));
});
afterAll(async () => {
  await host?.close();
  await t?.stop();
});

describe('attachment URLs without LUMEN_ALLOW_LOOPBACK', () => {
  it('refuses plain http and loopback targets as per-attachment failures, without reaching the host', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const attachments = [
      { type: 'photo', url: `${host.url}/a.jpg`, filename: 'http-loopback.jpg', contentType: 'image/jpeg' },
      { type: 'photo', url: `https://127.0.0.1:${host.port}/a.jpg`, filename: 'https-loopback.jpg', contentType: 'image/jpeg' },
      { type: 'photo', url: `https://localhost:${host.port}/a.jpg`, filename: 'name-to-loopback.jpg', contentType: 'image/jpeg' },
      { type: 'photo', url: `https://[::1]:${host.port}/a.jpg`, filename: 'ipv6-loopback.jpg', contentType: 'image/jpeg' },
      { type: 'photo', url: 'http://arquivos.portal156.example/a.jpg', filename: 'http.jpg', contentType: 'image/jpeg' },
    ];
    const res = await postJson(t, p.apiKey, intakeBody('GUARD-1', { attachments }), { 'accept-language': 'en' });
    expect(res.status).toBe(201);
    const https = 'The attachment URL must use HTTPS.';
    const blocked = 'The attachment URL leads to an address that is not allowed (private network, loopback, link-local or cloud metadata).';
    expect(res.body.alert.attachments.map((a: { success: boolean; error: string; filename: string }) => [a.filename, a.success, a.error])).toEqual([
      ['http-loopback.jpg', false, https],
      ['https-loopback.jpg', false, blocked],
      // A name that resolves to loopback fails like a name that does not resolve.
      ['name-to-loopback.jpg', false, 'The attachment could not be downloaded after 3 attempt(s): connection failed.'],
      ['ipv6-loopback.jpg', false, blocked],
      ['http.jpg', false, https],
    ]);
    expect(host.requests).toEqual([]);
    const review = await t.rt.db.selectFrom('attachment_failure').select(['url', 'error_code']).where('tenant_id', '=', tenant.id).orderBy('url').execute();
    expect(review.map((r) => r.error_code).sort()).toEqual(['blocked-address', 'blocked-address', 'download-failed', 'insecure-url', 'insecure-url']);
  });
});
