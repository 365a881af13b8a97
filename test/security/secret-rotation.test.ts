/**
 * Rotating LUMEN_SECRET_KEY: the previous key keeps stored secrets readable until
 * `lumen secrets rewrap` seals them under the new one; a key that opens nothing makes
 * /readyz fail loudly; a secret copied to another partner's row does not open.
 */
import { createCipheriv, createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyId, openSecret, partnerSecretAad, sealSecret } from '../../src/lib/secret-box.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { emit, makeEventPartner, startReceiver, subjectFor, waitFor, WEBHOOK_SECRET } from '../events/support.js';

const K1 = 'aa'.repeat(32);
const K2 = 'bb'.repeat(32);
const K3 = 'cc'.repeat(32);

describe('sealed secrets (unit)', () => {
  const k1 = Buffer.from(K1, 'hex');
  const k2 = Buffer.from(K2, 'hex');
  it('names the key that sealed them and opens with the previous key during a rotation', () => {
    const sealed = sealSecret({ current: k1, previous: null }, 's3cret-s3cret-s3cret', 'external_system:a:webhook_secret_enc');
    expect(sealed.split('.').slice(0, 2)).toEqual(['v2', keyId(k1)]);
    expect(openSecret({ current: k2, previous: k1 }, sealed, 'external_system:a:webhook_secret_enc')).toBe('s3cret-s3cret-s3cret');
    expect(() => openSecret({ current: k2, previous: null }, sealed, 'external_system:a:webhook_secret_enc')).toThrow(/sealed with key .* neither LUMEN_SECRET_KEY/);
  });

  it('binds a secret to its row: copied to another partner it does not open', () => {
    const sealed = sealSecret(k1, 's3cret-s3cret-s3cret', partnerSecretAad('partner-a', 'webhook_secret_enc'));
    expect(() => openSecret(k1, sealed, partnerSecretAad('partner-b', 'webhook_secret_enc'))).toThrow(/does not belong to this record/);
    expect(() => openSecret(k1, sealed, partnerSecretAad('partner-a', 'polling_key_enc'))).toThrow(/does not belong to this record/);
  });

  it('still opens what an earlier release stored (v1: no key id, no associated data) with either key', () => {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', k1, iv);
    const ct = Buffer.concat([c.update('legacy-secret-123', 'utf8'), c.final()]);
    const v1 = ['v1', iv.toString('base64url'), c.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
    expect(openSecret({ current: k2, previous: k1 }, v1, 'anything')).toBe('legacy-secret-123');
  });
});

describe('rotating LUMEN_SECRET_KEY', { timeout: 60_000 }, () => {
  let db: TestDatabase;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const apps: TestApp[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    for (const a of apps) await a.stop().catch(() => {});
    await receiver?.close();
    await db?.drop();
  });
  const start = async (env: Record<string, string>) => {
    const app = await startTestApp({ db, env: { LUMEN_WEBHOOK_RETRY_SCHEDULE: '50ms', ...env } });
    apps.push(app);
    return app;
  };
  const stop = async (app: TestApp) => {
    await app.app.stop();
  };
  /** A --json command that succeeds: its one JSON object (progress lines go to stderr). */
  const json = (out: { code: number; stdout: string; stderr: string }) => {
    expect(out.code, out.stderr).toBe(0);
    return JSON.parse(out.stdout.trim()) as Record<string, unknown>;
  };
  const signedWith = (secret: string, raw: Buffer, header: unknown) => header === `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;

  it('keeps webhooks signed through a rotation, rewraps, and fails /readyz with a key that opens nothing', async () => {
    // Sealed under K1.
    const a = await start({ LUMEN_SECRET_KEY: K1 });
    const partner = await makeEventPartner(a.rt, { webhookUrl: receiver.url });
    await stop(a);

    // Rotated: K2 current, K1 previous. Webhooks still go out signed with the partner's secret.
    const b = await start({ LUMEN_SECRET_KEY: K2, LUMEN_SECRET_KEY_PREVIOUS: K1 });
    expect((await b.fetch('/readyz')).status).toBe(200);
    await emit(b.rt, ['ServiceOrder.Created', await subjectFor(b.rt, partner)]);
    const first = await waitFor(() => receiver.received.find((r) => r.status === 204), 10_000, 'a delivery after the rotation');
    expect(signedWith(WEBHOOK_SECRET, first.raw, first.headers['x-lumen-signature'])).toBe(true);

    const rewrap = json(await b.cli('secrets', 'rewrap', '--json'));
    expect(rewrap).toMatchObject({ rewrapped: 1, current: 0, failed: [] });
    const again = json(await b.cli('secrets', 'rewrap', '--json'));
    expect(again).toMatchObject({ rewrapped: 0, current: 1 });
    const row = await b.rt.db.selectFrom('external_system').select('webhook_secret_enc').where('id', '=', partner.partner.id).executeTakeFirstOrThrow();
    expect(row.webhook_secret_enc!.split('.')[1]).toBe(keyId(Buffer.from(K2, 'hex')));
    await stop(b);

    // K1 dropped: still fine after the rewrap.
    const c = await start({ LUMEN_SECRET_KEY: K2 });
    expect((await c.fetch('/readyz')).status).toBe(200);
    const before = receiver.received.length;
    await emit(c.rt, ['ServiceOrder.Created', await subjectFor(c.rt, partner)]);
    const second = await waitFor(() => receiver.received.slice(before).find((r) => r.status === 204), 10_000, 'a delivery after the rewrap');
    expect(signedWith(WEBHOOK_SECRET, second.raw, second.headers['x-lumen-signature'])).toBe(true);
    await stop(c);

    // A key that opens nothing: not ready, and it says why.
    const d = await start({ LUMEN_SECRET_KEY: K3 });
    const res = await d.fetch('/readyz');
    expect(res.status).toBe(503);
    expect(((await res.json()) as { secrets: string }).secrets).toMatch(/1 stored secret\(s\) cannot be decrypted.*LUMEN_SECRET_KEY_PREVIOUS.*rewrap/);
    expect(d.logs.text).toMatch(/stored secrets cannot be decrypted/);
  });
});
