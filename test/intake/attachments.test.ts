import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePartner, makeTenant } from '../support/factories.js';
import { intakeBody, intakeFootprint, JPEG, listFiles, PNG, postJson, startIntakeApp, startStub, WEBP, type IntakeTestApp, type StubServer } from './support.js';

let t: IntakeTestApp;
let host: StubServer;
const flaky = new Map<string, number>();

const ATTEMPT_MS = 600;
const TOTAL_MS = 2500;

beforeAll(async () => {
  t = await startIntakeApp({
    LUMEN_ATTACHMENT_ATTEMPT_TIMEOUT_MS: String(ATTEMPT_MS),
    LUMEN_ATTACHMENT_TOTAL_TIMEOUT_MS: String(TOTAL_MS),
    LUMEN_ATTACHMENT_RETRY_DELAY_MS: '50',
  });
  // The partner's file host: a real server on loopback.
  host = await startStub((req, res) => {
    const url = new URL(req.url ?? '/', 'http://stub');
    const route = url.pathname.split('/')[1];
    switch (route) {
      case 'jpeg':
        return void res.writeHead(200, { 'content-type': 'image/jpeg' }).end(JPEG);
      case 'png':
        return void res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
      case 'redirect':
        return void res.writeHead(302, { location: '/jpeg/from-redirect.jpg' }).end();
      case 'flaky': {
        const n = (flaky.get(url.pathname) ?? 0) + 1;
        flaky.set(url.pathname, n);
        if (n < 3) return void res.writeHead(503).end('busy');
        return void res.writeHead(200, { 'content-type': 'image/jpeg' }).end(JPEG);
      }
      case 'error':
        return void res.writeHead(500).end('boom');
      case 'missing':
        return void res.writeHead(404).end('not here');
      case 'gone':
        return void res.writeHead(410).end('gone');
      case 'signed': {
        // A signed URL that answers 404 for a moment after it is issued.
        const n = (flaky.get(url.pathname) ?? 0) + 1;
        flaky.set(url.pathname, n);
        if (n < 2) return void res.writeHead(404).end('not yet');
        return void res.writeHead(200, { 'content-type': 'image/jpeg' }).end(JPEG);
      }
      case 'slow':
        return; // never answers: every attempt times out
      case 'huge': {
        // Chunked, no Content-Length: the cap must cut it while streaming.
        res.writeHead(200, { 'content-type': 'image/jpeg' });
        const chunk = Buffer.alloc(256 * 1024, 0xff);
        let sent = 0;
        const pump = (): void => {
          while (sent < 6 * 1024 * 1024) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('error', () => {});
        return pump();
      }
      case 'html':
        return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>not a photo</body></html>');
      default:
        return void res.writeHead(404).end();
    }
  });
});
afterAll(async () => {
  await host?.close();
  await t?.stop();
});

const inline = (bytes: Buffer | string, filename: string | undefined, contentType: string) => ({
  type: 'photo',
  contentBase64: typeof bytes === 'string' ? bytes : bytes.toString('base64'),
  ...(filename === undefined ? {} : { filename }),
  contentType,
});
const byUrl = (p: string, filename: string, contentType = 'image/jpeg') => ({ type: 'photo', url: `${host.url}${p}`, filename, contentType });
const hits = (p: string) => host.requests.filter((r) => r.url === p).length;
const failed = (error: unknown, filename: string | null = null, contentType = 'image/jpeg') => ({ success: false, blobPath: null, filename, contentType, sizeBytes: null, error });

async function setup() {
  const tenant = await makeTenant(t.rt);
  const p = await makePartner(t.rt, { tenantId: tenant.id });
  return { tenant, p };
}

describe('inline attachments (contentBase64)', () => {
  it('stores JPEG, PNG and WebP in the blob store at tenants/<tenant>/alerts/<alert>/<attachment>.<ext>', async () => {
    const { tenant, p } = await setup();
    const res = await postJson(t, p.apiKey, intakeBody('INL-1', { attachments: [inline(JPEG, 'a.jpg', 'image/jpeg'), inline(PNG, undefined, 'image/png'), inline(WEBP, 'c.webp', 'image/webp')] }));
    expect(res.status).toBe(201);
    const alertId = res.body.alert.id;
    const expected = [
      [JPEG, 'a.jpg', 'image/jpeg', 'jpg'],
      [PNG, null, 'image/png', 'png'],
      [WEBP, 'c.webp', 'image/webp', 'webp'],
    ] as const;
    expect(res.body.alert.attachments).toEqual(
      expected.map(([bytes, filename, contentType, ext]) => ({
        success: true,
        blobPath: expect.stringMatching(new RegExp(`^tenants/${tenant.id}/alerts/${alertId}/[0-9a-f-]{36}\\.${ext}$`)),
        filename,
        contentType,
        sizeBytes: bytes.length,
        error: null,
      })),
    );
    for (const [i, [bytes]] of expected.entries()) {
      expect(readFileSync(path.join(t.blobDir, res.body.alert.attachments[i].blobPath)).equals(bytes)).toBe(true);
    }
  });

  it('reports bad base64, a data-URI prefix, more than 5 MiB, empty content and mismatched magic bytes per attachment; the request is accepted', async () => {
    const { tenant, p } = await setup();
    const over = Buffer.alloc(5 * 1024 * 1024 + 1, 0xff);
    JPEG.copy(over);
    const limit = over.subarray(0, 5 * 1024 * 1024);
    const attachments = [
      inline('@@not base64@@', 'bad.jpg', 'image/jpeg'),
      inline(JPEG.toString('base64').replace(/=+$/, ''), 'unpadded.jpg', 'image/jpeg'),
      inline(JPEG.toString('base64').replace(/(.{20})/g, '$1\n'), 'wrapped.jpg', 'image/jpeg'),
      inline(`data:image/jpeg;base64,${JPEG.toString('base64')}`, 'datauri.jpg', 'image/jpeg'),
      inline(over, 'big.jpg', 'image/jpeg'),
      inline('', 'empty.jpg', 'image/jpeg'),
      inline(PNG, 'png-as-jpeg.jpg', 'image/jpeg'),
      inline(randomBytes(64), 'noise.webp', 'image/webp'),
      inline(JPEG, 'good.jpg', 'image/jpeg'),
      inline(limit, 'exactly-5MiB.jpg', 'image/jpeg'),
    ];
    const res = await postJson(t, p.apiKey, intakeBody('INL-BAD', { attachments }));
    expect(res.status).toBe(201);
    const invalid = 'O conteúdo não é base64 válido (RFC 4648, com preenchimento correto e sem espaços ou quebras de linha).';
    expect(res.body.alert.attachments).toEqual([
      failed(invalid, 'bad.jpg'),
      failed(invalid, 'unpadded.jpg'),
      failed(invalid, 'wrapped.jpg'),
      failed('Envie o conteúdo em base64 puro, sem o prefixo data: (data URI).', 'datauri.jpg'),
      failed('O anexo excede o limite de 5 MiB (5.242.880 bytes).', 'big.jpg'),
      failed('O anexo está vazio.', 'empty.jpg'),
      failed('O conteúdo do anexo não é image/jpeg (é image/png).', 'png-as-jpeg.jpg'),
      failed('O conteúdo do anexo não é image/webp (não é uma imagem JPEG, PNG ou WebP).', 'noise.webp', 'image/webp'),
      expect.objectContaining({ success: true, filename: 'good.jpg', sizeBytes: JPEG.length }),
      expect.objectContaining({ success: true, filename: 'exactly-5MiB.jpg', sizeBytes: 5 * 1024 * 1024 }),
    ]);
    // Inline failures are the partner's to fix: only failed URLs go to manual review.
    expect(await intakeFootprint(t, tenant.id)).toMatchObject({ alerts: 1, attachments: 10, failures: 0 });
    expect(listFiles(path.join(t.blobDir, 'tenants', tenant.id))).toHaveLength(2);
  });

  it('words the errors in English when asked, also for earlier attachments on a resend', async () => {
    const { p } = await setup();
    const body = intakeBody('INL-EN', { attachments: [inline(PNG, 'x.jpg', 'image/jpeg')] });
    const first = await postJson(t, p.apiKey, body);
    expect(first.body.alert.attachments[0].error).toBe('O conteúdo do anexo não é image/jpeg (é image/png).');
    const again = await postJson(t, p.apiKey, body, { 'accept-language': 'en' });
    expect(again.status).toBe(200);
    expect(again.body.alert.attachments).toEqual([failed('The attachment content is not image/jpeg (it is image/png).', 'x.jpg')]);
  });
});

describe('attachments by URL', () => {
  it('downloads over the outbound client, identified as Lumen/<version>, following redirects', async () => {
    const { tenant, p } = await setup();
    const res = await postJson(t, p.apiKey, intakeBody('URL-OK', { attachments: [byUrl('/jpeg/a.jpg', 'a.jpg'), byUrl('/redirect/b', 'b.jpg'), byUrl('/png/c.png', 'c.png', 'image/png')] }));
    expect(res.status).toBe(201);
    expect(res.body.alert.attachments.map((a: { success: boolean; sizeBytes: number }) => [a.success, a.sizeBytes])).toEqual([
      [true, JPEG.length],
      [true, JPEG.length],
      [true, PNG.length],
    ]);
    // a.jpg and the redirect's target are the same bytes: kept once, both results point at that copy.
    expect(res.body.alert.attachments[1].blobPath).toBe(res.body.alert.attachments[0].blobPath);
    expect(res.body.alert.attachments[1].filename).toBe('b.jpg');
    expect(listFiles(path.join(t.blobDir, 'tenants', tenant.id))).toHaveLength(2);
    const req = host.requests.find((r) => r.url === '/jpeg/a.jpg')!;
    expect(req.headers['user-agent']).toMatch(/^Lumen\/\d+\.\d+\.\d+/);
  });

  it('tries a flaky host again: 503, 503, then 200 is stored', async () => {
    const { p } = await setup();
    const res = await postJson(t, p.apiKey, intakeBody('URL-FLAKY', { attachments: [byUrl('/flaky/1.jpg', 'f.jpg')] }));
    expect(res.body.alert.attachments[0]).toMatchObject({ success: true, sizeBytes: JPEG.length });
    expect(hits('/flaky/1.jpg')).toBe(3);
  });

  it('gives up after 3 attempts on 5xx, records the URL for manual review, and answers 201', async () => {
    const { tenant, p } = await setup();
    const res = await postJson(t, p.apiKey, intakeBody('URL-500', { attachments: [byUrl('/error/x.jpg', 'x.jpg')] }));
    expect(res.status).toBe(201);
    expect(res.body.alert.attachments).toEqual([failed('Não foi possível baixar o anexo após 3 tentativa(s): o servidor respondeu HTTP 500.', 'x.jpg')]);
    expect(hits('/error/x.jpg')).toBe(3);
    const rows = await t.rt.db.selectFrom('attachment_failure').selectAll().where('tenant_id', '=', tenant.id).execute();
    expect(rows).toEqual([
      expect.objectContaining({ url: `${host.url}/error/x.jpg`, protocol_number: 'URL-500', alert_id: res.body.alert.id, error_code: 'download-failed', detail: 'HTTP 500', attempts: 3, filename: 'x.jpg', content_type: 'image/jpeg' }),
    ]);
  });

  it('tries a 404 again (a signed URL can answer 404 for a moment) and gives up after 3 attempts', async () => {
    const { p } = await setup();
    const res = await postJson(t, p.apiKey, intakeBody('URL-404', { attachments: [byUrl('/signed/1.jpg', 's.jpg'), byUrl('/missing/a.jpg', 'a.jpg')] }), { 'accept-language': 'en' });
    expect(res.status).toBe(201);
    expect(res.body.alert.attachments[0]).toMatchObject({ success: true, sizeBytes: JPEG.length });
    expect(res.body.alert.attachments[1]).toEqual(failed('The attachment could not be downloaded after 3 attempt(s): the server answered HTTP 404.', 'a.jpg'));
    expect([hits('/signed/1.jpg'), hits('/missing/a.jpg')]).toEqual([2, 3]);
  });

  it('does not retry a final answer (410), a stream over 5 MiB, or content that is not the declared image', async () => {
    const { tenant, p } = await setup();
    const res = await postJson(
      t,
      p.apiKey,
      intakeBody('URL-FINAL', { attachments: [byUrl('/gone/a.jpg', 'a.jpg'), byUrl('/huge/b.jpg', 'b.jpg'), byUrl('/html/c.jpg', 'c.jpg')] }),
      { 'accept-language': 'en' },
    );
    expect(res.status).toBe(201);
    expect(res.body.alert.attachments).toEqual([
      failed('The attachment could not be downloaded after 1 attempt(s): the server answered HTTP 410.', 'a.jpg'),
      failed('The attachment exceeds the 5 MiB limit (5,242,880 bytes).', 'b.jpg'),
      failed('The attachment content is not image/jpeg (not a JPEG, PNG or WebP image).', 'c.jpg'),
    ]);
    expect([hits('/gone/a.jpg'), hits('/huge/b.jpg'), hits('/html/c.jpg')]).toEqual([1, 1, 1]);
    const codes = await t.rt.db.selectFrom('attachment_failure').select(['error_code', 'attempts']).where('tenant_id', '=', tenant.id).orderBy('url').execute();
    // Ordered by URL: /gone, /html, /huge.
    expect(codes).toEqual([
      { error_code: 'download-failed', attempts: 1 },
      { error_code: 'content-mismatch', attempts: 1 },
      { error_code: 'too-large', attempts: 1 },
    ]);
  });

  it('bounds each attempt and the whole download in time', async () => {
    const { p } = await setup();
    const started = Date.now();
    const res = await postJson(t, p.apiKey, intakeBody('URL-SLOW', { attachments: [byUrl('/slow/a.jpg', 'a.jpg')] }));
    const elapsed = Date.now() - started;
    expect(res.status).toBe(201);
    expect(res.body.alert.attachments[0].error).toBe('Não foi possível baixar o anexo após 3 tentativa(s): tempo esgotado.');
    expect(hits('/slow/a.jpg')).toBe(3);
    expect(elapsed).toBeGreaterThanOrEqual(3 * ATTEMPT_MS);
    expect(elapsed).toBeLessThan(TOTAL_MS + 1500);
  });

  it('refuses non-HTTPS schemes and private or metadata addresses without connecting', async () => {
    const { tenant, p } = await setup();
    const res = await postJson(
      t,
      p.apiKey,
      intakeBody('URL-REFUSED', {
        attachments: [
          { type: 'photo', url: 'ftp://files.example.org/a.jpg', contentType: 'image/jpeg' },
          { type: 'photo', url: 'https://10.1.2.3/a.jpg', contentType: 'image/jpeg' },
          { type: 'photo', url: 'https://169.254.169.254/latest/meta-data/', contentType: 'image/jpeg' },
        ],
      }),
    );
    expect(res.status).toBe(201);
    const blocked = 'A URL do anexo leva a um endereço não permitido (rede privada, loopback, link-local ou metadados de nuvem).';
    expect(res.body.alert.attachments).toEqual([failed('A URL do anexo deve usar HTTPS.'), failed(blocked), failed(blocked)]);
    const codes = await t.rt.db.selectFrom('attachment_failure').select(['error_code', 'attempts']).where('tenant_id', '=', tenant.id).orderBy('url').execute();
    expect(codes.map((c) => c.error_code)).toEqual(['insecure-url', 'blocked-address', 'blocked-address']);
  });
});

describe('the same bytes declared as another type', () => {
  it('checks every attachment before any dedupe: PNG bytes sent again as image/jpeg are refused, not pointed at the PNG', async () => {
    const { p } = await setup();
    const res = await postJson(t, p.apiKey, intakeBody('SAME-BYTES', { attachments: [inline(PNG, 'a.png', 'image/png'), inline(PNG, 'b.jpg', 'image/jpeg')] }), { 'accept-language': 'en' });
    expect(res.status).toBe(201);
    const [first, second] = res.body.alert.attachments;
    expect(first).toMatchObject({ success: true, contentType: 'image/png', blobPath: expect.stringMatching(/\.png$/) });
    expect(second).toEqual(failed('The attachment content is not image/jpeg (it is image/png).', 'b.jpg'));
  });

  it('does the same for one URL declared twice with different types', async () => {
    const { p } = await setup();
    const res = await postJson(t, p.apiKey, intakeBody('SAME-URL', { attachments: [byUrl('/png/same.png', 'a.png', 'image/png'), byUrl('/png/same.png', 'b.jpg', 'image/jpeg')] }), { 'accept-language': 'en' });
    expect(res.status).toBe(201);
    expect(res.body.alert.attachments[0]).toMatchObject({ success: true, contentType: 'image/png' });
    expect(res.body.alert.attachments[1]).toEqual(failed('The attachment content is not image/jpeg (it is image/png).', 'b.jpg'));
  });

  it('still recognises on a resend an attachment stored before the declared type was part of its identity', async () => {
    const { p } = await setup();
    const body = intakeBody('LEGACY-HASH', { attachments: [byUrl('/jpeg/legacy.jpg', 'l.jpg')] });
    const first = await postJson(t, p.apiKey, body);
    expect(first.body.alert.attachments[0].success).toBe(true);
    // What an earlier release wrote: the hash of the URL alone.
    const { createHash } = await import('node:crypto');
    const legacy = createHash('sha256').update('url\0').update(`${host.url}/jpeg/legacy.jpg`).digest();
    await sql`UPDATE alert_attachment SET source_hash = ${legacy} WHERE alert_id = ${first.body.alert.id}`.execute(t.rt.db);
    const again = await postJson(t, p.apiKey, body);
    expect(again.status).toBe(200);
    expect(again.body.alert.attachments).toEqual(first.body.alert.attachments);
    expect(hits('/jpeg/legacy.jpg')).toBe(1);
  });
});

describe('attachments on a resend', () => {
  it('does not fetch or store again what the alert has, and appends new ones', async () => {
    const { tenant, p } = await setup();
    const first = await postJson(t, p.apiKey, intakeBody('RS-ATT', { attachments: [byUrl('/jpeg/rs.jpg', 'rs.jpg')] }));
    expect(first.body.alert.attachments[0].success).toBe(true);
    expect(hits('/jpeg/rs.jpg')).toBe(1);

    const second = await postJson(t, p.apiKey, intakeBody('RS-ATT', { attachments: [byUrl('/jpeg/rs.jpg', 'rs.jpg'), byUrl('/error/rs.jpg', 'broken.jpg')] }));
    expect(second.status).toBe(200);
    expect(hits('/jpeg/rs.jpg')).toBe(1);
    expect(second.body.alert.attachments).toEqual([first.body.alert.attachments[0], failed('Não foi possível baixar o anexo após 3 tentativa(s): o servidor respondeu HTTP 500.', 'broken.jpg')]);

    // The same bytes from another URL: fetched, but not stored twice and not appended.
    const dup = await postJson(t, p.apiKey, intakeBody('RS-ATT', { attachments: [byUrl('/jpeg/other-name.jpg', 'same-bytes.jpg')] }));
    expect(dup.body.alert.attachments).toEqual(second.body.alert.attachments);

    // A URL that failed before is tried again; failing again writes nothing.
    const failedRow = await t.rt.db.selectFrom('alert_attachment').selectAll().where('alert_id', '=', first.body.alert.id).where('success', '=', false).executeTakeFirstOrThrow();
    const again = await postJson(t, p.apiKey, intakeBody('RS-ATT', { attachments: [byUrl('/error/rs.jpg', 'broken.jpg')] }));
    expect(again.body.alert.attachments).toEqual(second.body.alert.attachments);
    expect(hits('/error/rs.jpg')).toBe(6);
    expect(await t.rt.db.selectFrom('alert_attachment').selectAll().where('id', '=', failedRow.id).executeTakeFirstOrThrow()).toEqual(failedRow);
    // One review entry per failed URL, not one per resend.
    expect(await intakeFootprint(t, tenant.id)).toMatchObject({ attachments: 2, failures: 1 });
    expect(listFiles(path.join(t.blobDir, 'tenants', tenant.id))).toHaveLength(1);
  });

  it('stores a URL that failed before once its host answers, in the same position', async () => {
    const { p } = await setup();
    const fresh = `/flaky/fix-${randomBytes(4).toString('hex')}.jpg`;
    flaky.set(fresh, -3); // five 503s, then 200: the first request fails all 3 attempts, the resend succeeds
    const first = await postJson(t, p.apiKey, intakeBody('RS-FIX', { attachments: [byUrl('/png/fix.png', 'first.png', 'image/png'), byUrl(fresh, 'second.jpg')] }));
    expect(first.body.alert.attachments.map((x: { success: boolean }) => x.success)).toEqual([true, false]);
    const resent = await postJson(t, p.apiKey, intakeBody('RS-FIX', { attachments: [byUrl(fresh, 'second.jpg')] }));
    expect(resent.status).toBe(200);
    expect(resent.body.alert.attachments).toEqual([
      first.body.alert.attachments[0],
      {
        success: true,
        blobPath: expect.stringMatching(new RegExp(`^tenants/.+/alerts/${first.body.alert.id}/[0-9a-f-]{36}\\.jpg$`)),
        filename: 'second.jpg',
        contentType: 'image/jpeg',
        sizeBytes: JPEG.length,
        error: null,
      },
    ]);
    expect(hits(fresh)).toBe(6);
    expect(readFileSync(path.join(t.blobDir, resent.body.alert.attachments[1].blobPath)).equals(JPEG)).toBe(true);
  });
});

describe('nothing left behind', () => {
  it('removes the blobs of a request whose transaction fails, with no alert, order or key; its numbers stay unused', async () => {
    const { tenant, p } = await setup();
    await sql`
      CREATE OR REPLACE FUNCTION test_fail_intake() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.protocol_number = 'FAIL-ME' THEN RAISE EXCEPTION 'refused by the test'; END IF;
        RETURN NEW;
      END $$`.execute(t.rt.db);
    await sql`CREATE TRIGGER test_fail_intake BEFORE INSERT ON alert FOR EACH ROW EXECUTE FUNCTION test_fail_intake()`.execute(t.rt.db);
    try {
      const res = await postJson(t, p.apiKey, intakeBody('FAIL-ME', { attachments: [inline(JPEG, 'a.jpg', 'image/jpeg'), byUrl('/png/b.png', 'b.png', 'image/png')] }), {
        'idempotency-key': '7d5e2a1c-0b3f-4e8a-9c6d-2f1a0b9e8d7c',
      });
      expect(res.status).toBe(500);
      // The counters hold the numbers the failed request took (numbers may skip values).
      expect(await intakeFootprint(t, tenant.id)).toEqual({ alerts: 0, orders: 0, counters: 2, attachments: 0, failures: 0, keys: 0 });
      expect(listFiles(path.join(t.blobDir, 'tenants', tenant.id))).toEqual([]);
    } finally {
      await sql`DROP TRIGGER test_fail_intake ON alert`.execute(t.rt.db);
    }
    // The same request succeeds afterwards, with the next numbers: 1 is a gap.
    const ok = await postJson(t, p.apiKey, intakeBody('FAIL-ME', { attachments: [inline(JPEG, 'a.jpg', 'image/jpeg')] }), { 'idempotency-key': '7d5e2a1c-0b3f-4e8a-9c6d-2f1a0b9e8d7c' });
    expect(ok.status).toBe(201);
    expect(ok.body.alert.alertNumber).toBe(2);
    expect(ok.body.internalProtocol).toMatch(/-00002$/);
  });

  it('reports a blob store that cannot write as a per-attachment failure', async () => {
    const { tenant, p } = await setup();
    // A file where the tenant's directory should be: every write under it fails.
    mkdirSync(path.join(t.blobDir, 'tenants'), { recursive: true });
    writeFileSync(path.join(t.blobDir, 'tenants', tenant.id), 'in the way');
    const res = await postJson(t, p.apiKey, intakeBody('STORE-FAIL', { attachments: [inline(JPEG, 'a.jpg', 'image/jpeg')] }));
    expect(res.status).toBe(201);
    expect(res.body.alert.attachments).toEqual([failed('O anexo não pôde ser armazenado; reenvie a solicitação para tentar de novo.', 'a.jpg')]);
  });
});
