/**
 * The blob store failing under intake. A read-only store that also refuses root
 * (LUMEN_BLOB_STORE under a regular file: every mkdir fails with ENOTDIR, whoever
 * runs Lumen) and an S3-compatible store answering 507 on every write: each request
 * is still accepted, each attachment reports that it could not be stored, nothing
 * half-written is left, and once the store works again a resend stores the photos in
 * their original places. (A full disk, where writes fail part-way, is in
 * test/e2e/blob-store-full.test.ts: it needs a process with a file-size limit.)
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { recordReliability } from '../support/reliability.js';
import { intakeBody, JPEG, listFiles, PNG, postJson, startStub, type StubServer } from '../intake/support.js';

const SECTION = 'Faults: blob store failing';
const STORAGE_FAILED = 'The attachment could not be stored; resend the request to try again.';
const REQUESTS = 12;

type AttachmentResult = { success: boolean; blobPath: string | null; sizeBytes: number | null; error: string | null; filename: string };

let photos: StubServer;
const dir = mkdtempSync(path.join(os.tmpdir(), 'lumen-blob-fault-'));
beforeAll(async () => {
  photos = await startStub((_req, res) => void res.writeHead(200, { 'content-type': 'image/png' }).end(PNG));
});
afterAll(async () => {
  await photos?.close();
  rmSync(dir, { recursive: true, force: true });
});

function body(protocol: string) {
  return intakeBody(protocol, {
    attachments: [
      { type: 'photo', contentBase64: JPEG.toString('base64'), filename: 'inline.jpg', contentType: 'image/jpeg' },
      { type: 'photo', url: `${photos.url}/${protocol}.png`, filename: 'download.png', contentType: 'image/png' },
    ],
  });
}

describe('a read-only blob store (refused to root too)', () => {
  let t: TestApp;
  // A regular file where the store's parent directory should be.
  const blocker = path.join(dir, 'not-a-directory');
  const store = path.join(blocker, 'blobs');
  beforeAll(async () => {
    writeFileSync(blocker, 'in the way');
    t = await startTestApp({ env: { LUMEN_BLOB_STORE: store } });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('accepts every request, reports each attachment as not stored, and stores them on a resend once the store works', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const protocols = Array.from({ length: REQUESTS }, (_, i) => `BLOB-RO-${i + 1}`);
    const answers = await Promise.all(protocols.map((n) => postJson(t, p.apiKey, body(n), { 'accept-language': 'en' })));
    for (const a of answers) {
      expect(a.status, a.text).toBe(201);
      expect(a.body.status).toBe('OPEN');
      expect((a.body.alert.attachments as AttachmentResult[]).map((x) => [x.filename, x.success, x.blobPath, x.sizeBytes, x.error])).toEqual([
        ['inline.jpg', false, null, null, STORAGE_FAILED],
        ['download.png', false, null, null, STORAGE_FAILED],
      ]);
    }
    const rows = await t.rt.db.selectFrom('alert_attachment').select(['success', 'error_code']).where('tenant_id', '=', tenant.id).execute();
    expect(rows).toHaveLength(REQUESTS * 2);
    expect(rows.every((r) => !r.success && r.error_code === 'storage-failed')).toBe(true);
    expect(await t.rt.db.selectFrom('service_order').select('id').where('tenant_id', '=', tenant.id).execute()).toHaveLength(REQUESTS);
    expect(t.logs.text).toContain('attachment could not be stored');

    // The operator fixes the store; partners resend, as the error told them to.
    rmSync(blocker);
    mkdirSync(store, { recursive: true });
    const resent = await Promise.all(protocols.map((n) => postJson(t, p.apiKey, body(n))));
    for (const [i, a] of resent.entries()) {
      expect(a.status).toBe(200);
      expect(a.body.alert.id).toBe(answers[i]!.body.alert.id);
      const [inline, download] = a.body.alert.attachments as AttachmentResult[];
      expect(inline).toMatchObject({ success: true, error: null, sizeBytes: JPEG.length, filename: 'inline.jpg' });
      expect(download).toMatchObject({ success: true, error: null, sizeBytes: PNG.length, filename: 'download.png' });
      expect(readFileSync(path.join(store, inline!.blobPath!)).equals(JPEG)).toBe(true);
      expect(readFileSync(path.join(store, download!.blobPath!)).equals(PNG)).toBe(true);
    }
    // Exactly the stored photos, no temporary leftovers.
    expect(listFiles(store)).toHaveLength(REQUESTS * 2);
    expect(listFiles(store).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    recordReliability(SECTION, {
      item: 'requests accepted while the local store refused every write (also to root)',
      figure: `${REQUESTS} of ${REQUESTS}, ${REQUESTS * 2} attachments reported not stored`,
      detail: 'LUMEN_BLOB_STORE under a regular file (ENOTDIR); inline and downloaded photos; after the fix each resend stored both photos in place',
    });
  });
});

describe('an S3-compatible store that refuses every write', () => {
  let t: TestApp;
  let s3: http.Server;
  let puts = 0;
  beforeAll(async () => {
    s3 = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.method === 'PUT') puts++;
        res.writeHead(507, { 'content-type': 'application/xml' }).end('<Error><Code>InsufficientStorage</Code><Message>Storage full</Message></Error>');
      });
    });
    await new Promise<void>((resolve) => s3.listen(0, '127.0.0.1', resolve));
    t = await startTestApp({
      env: {
        LUMEN_BLOB_STORE: 's3://city-photos/lumen',
        LUMEN_S3_ENDPOINT: `http://127.0.0.1:${(s3.address() as AddressInfo).port}`,
        LUMEN_S3_ACCESS_KEY_ID: 'LUMENTESTKEY',
        LUMEN_S3_SECRET_ACCESS_KEY: 'lumen/test+secret=key',
      },
    });
  });
  afterAll(async () => {
    await t?.stop();
    s3?.closeAllConnections();
    await new Promise((resolve) => s3?.close(resolve));
  });

  it('accepts the requests and reports the attachments as not stored', async () => {
    const tenant = await makeTenant(t.rt, { intakePolicy: 'manual' });
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const answers = await Promise.all(['BLOB-S3-1', 'BLOB-S3-2', 'BLOB-S3-3'].map((n) => postJson(t, p.apiKey, body(n), { 'accept-language': 'en' })));
    for (const a of answers) {
      expect(a.status).toBe(201);
      expect(a.body.status).toBe('RECEIVED');
      expect((a.body.alert.attachments as AttachmentResult[]).map((x) => [x.success, x.error])).toEqual([
        [false, STORAGE_FAILED],
        [false, STORAGE_FAILED],
      ]);
    }
    // Each write was tried, with the store's short retries, before it was given up.
    expect(puts).toBe(answers.length * 2 * 3);
    recordReliability(SECTION, { item: 'requests accepted while the S3-compatible store answered 507 to every write', figure: `${answers.length} of ${answers.length}`, detail: `${puts} PUTs refused (3 tries per photo), each photo reported not stored` });
  });
});
