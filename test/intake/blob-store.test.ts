import { mkdtempSync, rmSync } from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type BlobStoreConfig } from '../../src/config.js';
import { LocalBlobStore } from '../../src/lib/blob-store/local.js';
import { S3BlobStore, S3Error } from '../../src/lib/blob-store/s3.js';
import { sha256Hex, signRequest, uriEncode } from '../../src/lib/blob-store/sigv4.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { intakeBody, intakeFootprint, JPEG, PNG, postJson, startIntakeApp, startStub, type IntakeTestApp, type StubServer } from './support.js';

describe('SigV4 signing', () => {
  // The examples of https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html
  const aws = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', region: 'us-east-1', now: new Date('2013-05-24T00:00:00Z') };
  const host = 'examplebucket.s3.amazonaws.com';
  const empty = sha256Hex('');

  it("matches AWS's published examples", () => {
    expect(signRequest({ method: 'GET', host, path: '/test.txt', headers: { range: 'bytes=0-9' }, payloadHash: empty, ...aws }).signature).toBe('f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41');
    const put = signRequest({
      method: 'PUT',
      host,
      path: `/${uriEncode('test$file.text')}`,
      headers: { date: 'Fri, 24 May 2013 00:00:00 GMT', 'x-amz-storage-class': 'REDUCED_REDUNDANCY' },
      payloadHash: sha256Hex('Welcome to Amazon S3.'),
      ...aws,
    });
    expect(put.signature).toBe('98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd');
    expect(put.headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd',
    );
    expect(signRequest({ method: 'GET', host, path: '/', query: { lifecycle: '' }, payloadHash: empty, ...aws }).signature).toBe('fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543');
    expect(signRequest({ method: 'GET', host, path: '/', query: { 'max-keys': '2', prefix: 'J' }, payloadHash: empty, ...aws }).signature).toBe('34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7');
  });
});

/**
 * A minimal S3-compatible server: path-style PUT/GET/DELETE of objects, every request's
 * SigV4 signature recomputed from what arrived on the wire.
 */
async function startS3(credentials: { accessKeyId: string; secretAccessKey: string }, region = 'us-east-1') {
  const objects = new Map<string, { body: Buffer; contentType: string | undefined }>();
  let failNext = 0;
  const server: StubServer = await startStub((req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => {
    const auth = String(req.headers.authorization ?? '');
    const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(auth);
    const error = (status: number, code: string) => void res.writeHead(status, { 'content-type': 'application/xml' }).end(`<?xml version="1.0"?><Error><Code>${code}</Code></Error>`);
    if (!m || m[1] !== credentials.accessKeyId || m[3] !== region) return error(403, 'InvalidAccessKeyId');
    const signed = m[4]!.split(';');
    const amzDate = String(req.headers['x-amz-date']);
    const now = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
    const headers = Object.fromEntries(signed.filter((h) => !['host', 'x-amz-date', 'x-amz-content-sha256'].includes(h)).map((h) => [h, String(req.headers[h])]));
    const payloadHash = String(req.headers['x-amz-content-sha256']);
    if (payloadHash !== sha256Hex(body)) return error(400, 'XAmzContentSHA256Mismatch');
    const expected = signRequest({ method: req.method!, host: String(req.headers.host), path: req.url!, headers, payloadHash, region, ...credentials, now });
    if (expected.signature !== m[5]) return error(403, 'SignatureDoesNotMatch');
    if (failNext > 0) {
      failNext--;
      return error(503, 'SlowDown');
    }
    const key = decodeURIComponent(req.url!);
    if (req.method === 'PUT') {
      objects.set(key, { body, contentType: req.headers['content-type'] });
      return void res.writeHead(200).end();
    }
    if (req.method === 'GET') {
      const o = objects.get(key);
      return o ? void res.writeHead(200, { 'content-type': o.contentType ?? 'application/octet-stream' }).end(o.body) : error(404, 'NoSuchKey');
    }
    if (req.method === 'DELETE') {
      objects.delete(key);
      return void res.writeHead(204).end();
    }
    return error(405, 'MethodNotAllowed');
  });
  return {
    server,
    objects,
    failNext(n: number) {
      failNext = n;
    },
  };
}

const creds = { accessKeyId: 'LUMENTESTKEY', secretAccessKey: 'lumen/test+secret=key' };

describe('S3-compatible blob store', () => {
  let s3: Awaited<ReturnType<typeof startS3>>;
  beforeAll(async () => {
    s3 = await startS3(creds, 'sa-east-1');
  });
  afterAll(async () => {
    await s3?.server.close();
  });

  const store = (over: Partial<Extract<BlobStoreConfig, { kind: 's3' }>> = {}) =>
    new S3BlobStore({ kind: 's3', bucket: 'lumen-blobs', prefix: 'prod/photos', endpoint: s3.server.url, region: 'sa-east-1', ...creds, ...over });

  it('puts, gets and deletes objects under bucket/prefix with path-style signed requests', async () => {
    const s = store();
    await s.put('tenants/t1/alerts/a1/x.jpg', JPEG, 'image/jpeg');
    expect(s3.objects.get('/lumen-blobs/prod/photos/tenants/t1/alerts/a1/x.jpg')).toEqual({ body: JPEG, contentType: 'image/jpeg' });
    expect((await s.get('tenants/t1/alerts/a1/x.jpg'))!.equals(JPEG)).toBe(true);
    await s.delete('tenants/t1/alerts/a1/x.jpg');
    expect(s3.objects.has('/lumen-blobs/prod/photos/tenants/t1/alerts/a1/x.jpg')).toBe(false);
    expect(await s.get('tenants/t1/alerts/a1/x.jpg')).toBeNull();
    await s.delete('tenants/t1/alerts/a1/x.jpg');
    expect(s.description).not.toContain(creds.secretAccessKey);
  });

  it('retries SlowDown (503) and fails at once on a refused signature', async () => {
    s3.failNext(2);
    await store().put('tenants/t1/retry.png', PNG, 'image/png');
    expect(s3.objects.get('/lumen-blobs/prod/photos/tenants/t1/retry.png')?.body.equals(PNG)).toBe(true);
    const before = s3.server.requests.length;
    const err = await store({ secretAccessKey: 'wrong' }).put('tenants/t1/denied.png', PNG, 'image/png').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(S3Error);
    expect((err as S3Error).message).toContain('403 (SignatureDoesNotMatch)');
    expect(s3.server.requests.length - before).toBe(1);
  });

  it('refuses blob paths that could leave the store', async () => {
    await expect(store().put('../escape.jpg', JPEG, 'image/jpeg')).rejects.toThrow('invalid blob path');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'lumen-blob-'));
    try {
      await expect(new LocalBlobStore(dir).put('tenants/../../escape.jpg', JPEG, 'image/jpeg')).rejects.toThrow('invalid blob path');
      await expect(new LocalBlobStore(dir).put('/etc/x.jpg', JPEG, 'image/jpeg')).rejects.toThrow('invalid blob path');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('intake on an S3-compatible store (LUMEN_BLOB_STORE=s3://...)', () => {
  let s3: Awaited<ReturnType<typeof startS3>>;
  let t: IntakeTestApp;
  beforeAll(async () => {
    s3 = await startS3(creds);
    t = await startIntakeApp({
      LUMEN_BLOB_STORE: 's3://city-photos/lumen',
      LUMEN_S3_ENDPOINT: s3.server.url,
      LUMEN_S3_ACCESS_KEY_ID: creds.accessKeyId,
      LUMEN_S3_SECRET_ACCESS_KEY: creds.secretAccessKey,
    });
  });
  afterAll(async () => {
    await t?.stop();
    await s3?.server.close();
  });

  it('stores attachments in the bucket at the blobPath, and removes them when the request does not commit', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const photo = { type: 'photo', contentBase64: JPEG.toString('base64'), filename: 'a.jpg', contentType: 'image/jpeg' };
    const ok = await postJson(t, p.apiKey, intakeBody('S3-1', { attachments: [photo] }));
    expect(ok.status).toBe(201);
    const blobPath = ok.body.alert.attachments[0].blobPath as string;
    expect(s3.objects.get(`/city-photos/lumen/${blobPath}`)?.body.equals(JPEG)).toBe(true);

    await sql`CREATE OR REPLACE FUNCTION test_fail_s3() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`.execute(t.rt.db);
    await sql`CREATE TRIGGER test_fail_s3 BEFORE INSERT ON alert FOR EACH ROW EXECUTE FUNCTION test_fail_s3()`.execute(t.rt.db);
    try {
      const before = s3.objects.size;
      const failed = await postJson(t, p.apiKey, intakeBody('S3-2', { attachments: [{ ...photo, contentBase64: PNG.toString('base64'), contentType: 'image/png' }] }));
      expect(failed.status).toBe(500);
      expect(s3.server.requests.filter((r) => r.method === 'PUT' && r.url.includes('.png'))).toHaveLength(1);
      expect(s3.server.requests.filter((r) => r.method === 'DELETE' && r.url.includes('.png'))).toHaveLength(1);
      expect(s3.objects.size).toBe(before);
      expect(await intakeFootprint(t, tenant.id)).toMatchObject({ alerts: 1, attachments: 1 });
    } finally {
      await sql`DROP TRIGGER test_fail_s3 ON alert`.execute(t.rt.db);
    }
  });
});

describe('configuration of intake', () => {
  it('reads the blob store, geocoder and attachment settings, with their defaults', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'lumen-cfg-'));
    try {
      const c = loadConfig({ LUMEN_DATA_DIR: dir, LUMEN_SECRET_KEY: '11'.repeat(32) });
      expect(c.blobStore).toEqual({ kind: 'local', dir: path.join(dir, 'blobs') });
      expect(c.geocoderUrl).toBeNull();
      expect([c.geocodeBudgetMs, c.geocoderTimeoutMs, c.geocodeRetryDelaySeconds, c.idempotencyRetentionDays]).toEqual([2000, 5000, 60, 7]);
      expect(c.attachmentDownload).toEqual({ attemptTimeoutMs: 10_000, totalTimeoutMs: 30_000, retryDelayMs: 500 });
      const s3 = loadConfig({
        LUMEN_DATA_DIR: dir,
        LUMEN_SECRET_KEY: '11'.repeat(32),
        LUMEN_BLOB_STORE: 's3://city-photos/lumen/prod/',
        LUMEN_S3_REGION: 'sa-east-1',
        LUMEN_S3_ACCESS_KEY_ID: 'AK',
        LUMEN_S3_SECRET_ACCESS_KEY: 'SK',
        LUMEN_GEOCODER_URL: 'https://nominatim.example.org/',
      });
      expect(s3.blobStore).toEqual({ kind: 's3', bucket: 'city-photos', prefix: 'lumen/prod', endpoint: null, region: 'sa-east-1', accessKeyId: 'AK', secretAccessKey: 'SK' });
      expect(s3.geocoderUrl).toBe('https://nominatim.example.org');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names every bad intake variable at once', () => {
    let message = '';
    try {
      loadConfig({
        LUMEN_SECRET_KEY: '11'.repeat(32),
        LUMEN_BLOB_STORE: 's3://Bad_Bucket',
        LUMEN_GEOCODER_URL: 'http://nominatim.example.org',
        LUMEN_GEOCODE_BUDGET_MS: 'soon',
        LUMEN_IDEMPOTENCY_RETENTION_DAYS: '3',
      });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('LUMEN_BLOB_STORE');
    expect(message).toContain('LUMEN_GEOCODER_URL must be an https:// URL');
    expect(message).toContain('LUMEN_GEOCODE_BUDGET_MS');
    expect(message).toContain('LUMEN_IDEMPOTENCY_RETENTION_DAYS');
    let missing = '';
    try {
      loadConfig({ LUMEN_SECRET_KEY: '11'.repeat(32), LUMEN_BLOB_STORE: 's3://city-photos' });
    } catch (err) {
      missing = (err as Error).message;
    }
    expect(missing).toContain('LUMEN_S3_ACCESS_KEY_ID and LUMEN_S3_SECRET_ACCESS_KEY are required');
  });
});
