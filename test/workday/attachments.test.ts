import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, auditOf, cliJson } from '../operations/support.js';
import { intakeBody, JPEG, PNG, postJson, startStub, type StubServer } from '../intake/support.js';
import { attachmentContent, dismissAttachmentFailure, retryAttachmentFailure } from '../../src/services/attachments/index.js';
import { AppError } from '../../src/lib/errors.js';
import { cityAccess } from './support.js';

let t: TestApp;
let api: ReturnType<typeof adminFetch>;
let host: StubServer;
let serving = false;
let tenantId: string;
let partner: { id: string; code: string; apiKey: string };

beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_ATTACHMENT_RETRY_DELAY_MS: '0' } });
  api = adminFetch(t, await adminToken(t, 'photo-desk'));
  host = await startStub((_req, res) => {
    if (serving) res.writeHead(200, { 'content-type': 'image/jpeg' }).end(JPEG);
    else res.writeHead(404).end();
  });
  tenantId = (await makeTenant(t.rt, { intakePolicy: 'manual' })).id;
  partner = (await makePartner(t.rt, { tenantId })) as never;
});
afterAll(async () => {
  await t?.stop();
  await host?.close();
});

const caller = (access = cityAccess(tenantId, 'triager')) => ({ kind: 'admin-token' as const, name: 'test', access });

describe('attachments for operators', () => {
  it("streams an alert's stored photo with its content type and cache headers; the thumbnail is the original", async () => {
    const res = await postJson(t, partner.apiKey, intakeBody('PHOTO-1', { attachments: [{ type: 'photo', contentBase64: PNG.toString('base64'), filename: 'poste.png', contentType: 'image/png' }] }));
    expect(res.status).toBe(201);
    const alert = res.body.alert as { id: string };
    const attachmentId = (await t.rt.db.selectFrom('alert_attachment').select('id').where('alert_id', '=', alert.id).executeTakeFirstOrThrow()).id;
    const number = (await t.rt.db.selectFrom('alert').select('alert_number').where('id', '=', alert.id).executeTakeFirstOrThrow()).alert_number;
    for (const variant of ['', '?variant=thumbnail']) {
      const img = await api(`/alerts/${number}/attachments/${attachmentId}${variant}`);
      expect(img.status, await img.clone().text()).toBe(200);
      expect(img.headers.get('content-type')).toBe('image/png');
      expect(img.headers.get('cache-control')).toBe('private, max-age=86400');
      expect(img.headers.get('etag')).toMatch(/^"[0-9a-f]{64}"$/);
      // A browser never reads it as anything but an image (a JPEG header can front HTML).
      expect(img.headers.get('x-content-type-options')).toBe('nosniff');
      expect(img.headers.get('content-security-policy')).toMatch(/^sandbox/);
      expect(img.headers.get('content-disposition')).toMatch(/^inline; filename="photo-[0-9a-f]{12}\.png"$/);
      expect(Buffer.from(await img.arrayBuffer()).equals(PNG)).toBe(true);
    }
    expect((await api(`/alerts/${number}/attachments/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    const other = (await makeTenant(t.rt)).id;
    const outsider = await attachmentContent(t.rt, cityAccess(other), { id: alert.id, tenantId }, attachmentId).then(() => null, (e: unknown) => e);
    expect((outsider as AppError).code).toBe('not-found');
  });

  it('lists failed URLs, retries one that works now (stored, removed, audited) and dismisses another (counted no more)', async () => {
    serving = false;
    const bad1 = await postJson(t, partner.apiKey, intakeBody('PHOTO-URL-1', { attachments: [{ type: 'photo', url: `${host.url}/1.jpg`, filename: '1.jpg', contentType: 'image/jpeg' }] }));
    const bad2 = await postJson(t, partner.apiKey, intakeBody('PHOTO-URL-2', { attachments: [{ type: 'photo', url: `${host.url}/2.jpg`, contentType: 'image/jpeg' }] }));
    expect(bad1.body.alert.attachments[0].success).toBe(false);
    const list = (await (await api(`/tenants/${tenantId}/attachment-failures`)).json()) as { items: { id: string; alertId: string; attempts: number }[] };
    expect(list.items).toHaveLength(2);
    const one = list.items.find((f) => f.alertId === bad1.body.alert.id)!;
    const two = list.items.find((f) => f.alertId === bad2.body.alert.id)!;

    // Another city, or a viewer, changes nothing.
    const other = (await makeTenant(t.rt)).id;
    expect(((await retryAttachmentFailure(t.rt, caller(cityAccess(other)), one.id).then(() => null, (e: unknown) => e)) as AppError).code).toBe('not-found');
    expect(((await dismissAttachmentFailure(t.rt, caller(cityAccess(tenantId, 'viewer')), two.id).then(() => null, (e: unknown) => e)) as AppError).code).toBe('forbidden');
    expect(((await (await api(`/tenants/${tenantId}/attention`)).json()) as { failedAttachmentUrls: number }).failedAttachmentUrls).toBe(2);

    const stillBad = await api(`/attachment-failures/${one.id}/retry`, { method: 'POST' });
    expect(await stillBad.json()).toMatchObject({ resolved: false, failure: { id: one.id, attempts: 6 } });
    serving = true;
    const fixed = await api(`/attachment-failures/${one.id}/retry`, { method: 'POST' });
    expect(await fixed.json()).toEqual({ resolved: true, failure: null });
    const row = await t.rt.db.selectFrom('alert_attachment').selectAll().where('alert_id', '=', bad1.body.alert.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ success: true, error_code: null });
    const img = await api(`/alerts/${bad1.body.alert.id}/attachments/${row.id}`);
    expect(Buffer.from(await img.arrayBuffer()).equals(JPEG)).toBe(true);
    expect((await auditOf(t, bad1.body.alert.id)).map((a) => a.action)).toEqual(['attachment.retry', 'attachment.retry']);

    const dismissed = cliJson(await t.cli('attachment', 'dismiss', two.id, '--json'));
    expect(dismissed).toMatchObject({ id: two.id, dismissedBy: expect.stringMatching(/^cli:/) });
    expect(((await (await api(`/tenants/${tenantId}/attachment-failures`)).json()) as { items: unknown[] }).items).toHaveLength(0);
    expect(((await (await api(`/tenants/${tenantId}/attachment-failures?includeDismissed=true`)).json()) as { items: unknown[] }).items).toHaveLength(1);
    expect(((await (await api(`/tenants/${tenantId}/attention`)).json()) as { failedAttachmentUrls: number }).failedAttachmentUrls).toBe(0);
  });
});
