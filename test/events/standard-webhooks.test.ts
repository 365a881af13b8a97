/**
 * Standard Webhooks beside Lumen's own signature: every delivery a receiver gets is
 * verified with the official `standardwebhooks` library and, for `sha256=`, with
 * `@octokit/webhooks-methods`, per signature scheme, across retries, across a secret
 * rotation (both secrets verify during the overlap) and after it (only the new one).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { verify } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrator.js';
import { verifyLumenSignature, verifyWebhook } from '../../src/partner-kit/index.js';
import { dropExpiredWebhookSecrets, rotateWebhookSecret, updatePartner } from '../../src/services/partners/index.js';
import { cliActor } from '../../src/services/audit/index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { withDatabaseBefore } from '../support/database.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, auditOf } from '../operations/support.js';
import { emit, startReceiver, subjectFor, waitFor, type Received, type Reply } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_WEBHOOK_RETRY_SCHEDULE: '100ms,100ms', LUMEN_WEBHOOK_TIMEOUT_MS: '500' } });
});
afterAll(async () => {
  await t?.stop();
});
const receivers: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});
async function receiver(reply?: (req: Received, index: number) => Reply) {
  const r = await startReceiver(reply);
  receivers.push(r);
  return r;
}

const h = (r: Received, name: string): string | undefined => r.headers[name] as string | undefined;
const text = (r: Received): string => r.raw.toString('utf8');
/** What the official library says of a delivery, with the receiver's secret (throws when it does not verify). */
const standardVerifies = (secret: string, r: Received): boolean => {
  try {
    new Webhook(secret).verify(text(r), { 'webhook-id': h(r, 'webhook-id')!, 'webhook-timestamp': h(r, 'webhook-timestamp')!, 'webhook-signature': h(r, 'webhook-signature')! });
    return true;
  } catch {
    return false;
  }
};

async function partnerWith(url: string, o: { signature?: string; webhookSecret?: string } = {}) {
  const tenant = await makeTenant(t.rt);
  const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes: [], transport: 'webhook', webhookUrl: url, ...o });
  return { tenantId: tenant.id, partner, secret: (o.webhookSecret ?? partner.webhookSecret)! };
}

async function deliver(p: { tenantId: string; partner: { id: string } }, rx: Awaited<ReturnType<typeof receiver>>) {
  const [ev] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, p)]);
  return waitFor(() => rx.received.find((r) => h(r, 'x-lumen-event-id') === ev!.eventId && r.status === 204), 5000, 'the delivery');
}

describe('Standard Webhooks signatures', () => {
  it('a new partner gets a whsec_ secret and both schemes: the official libraries verify each delivery, webhook-id is the eventId on every retry', async () => {
    const rx = await receiver((_r, i) => ({ status: i === 0 ? 500 : 204 }));
    const p = await partnerWith(rx.url);
    expect(p.partner.signature).toBe('both');
    expect(p.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(p.secret.slice(6), 'base64')).toHaveLength(32);

    const before = Math.floor(Date.now() / 1000);
    const got = await deliver(p, rx);
    expect(rx.received).toHaveLength(2);
    const eventId = (JSON.parse(text(got)) as { eventId: string }).eventId;
    for (const r of rx.received) {
      expect(h(r, 'webhook-id')).toBe(eventId);
      expect(Number(h(r, 'webhook-timestamp'))).toBeGreaterThanOrEqual(before);
      expect(Number(h(r, 'webhook-timestamp'))).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
      expect(h(r, 'webhook-signature')).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expect(standardVerifies(p.secret, r)).toBe(true);
      expect(await verify(p.secret, text(r), h(r, 'x-lumen-signature')!)).toBe(true);
      expect(verifyWebhook(p.secret, r.raw, r.headers)).toBe(true);
      expect(standardVerifies(`whsec_${randomBytes(32).toString('base64')}`, r)).toBe(false);
    }
    // The timestamp is signed: moving it breaks the signature.
    const moved = { ...got, headers: { ...got.headers, 'webhook-timestamp': String(Number(h(got, 'webhook-timestamp')) + 1) } };
    expect(standardVerifies(p.secret, moved)).toBe(false);
  });

  it('lumen sends only X-Lumen-Signature; standard only the webhook-* headers, a plain secret counting as whsec_ + base64 of it', async () => {
    const rx = await receiver();
    const lumen = await partnerWith(rx.url, { signature: 'lumen', webhookSecret: 'plain-hex-secret-0123456789abcdef' });
    const a = await deliver(lumen, rx);
    expect(await verify(lumen.secret, text(a), h(a, 'x-lumen-signature')!)).toBe(true);
    expect(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((n) => h(a, n))).toEqual([undefined, undefined, undefined]);

    const standard = await partnerWith(rx.url, { signature: 'standard', webhookSecret: 'plain-hex-secret-0123456789abcdef' });
    const b = await deliver(standard, rx);
    expect(h(b, 'x-lumen-signature')).toBeUndefined();
    expect(h(b, 'x-lumen-event-id')).toBe(h(b, 'webhook-id'));
    expect(standardVerifies(`whsec_${Buffer.from(standard.secret).toString('base64')}`, b)).toBe(true);
    expect(verifyWebhook(standard.secret, b.raw, b.headers)).toBe(true);

    // Switching an existing partner's scheme applies to its next delivery.
    await updatePartner(t.rt, lumen.partner.code, { signature: 'standard' }, cliActor());
    const c = await deliver(lumen, rx);
    expect(h(c, 'x-lumen-signature')).toBeUndefined();
    expect(standardVerifies(`whsec_${Buffer.from(lumen.secret).toString('base64')}`, c)).toBe(true);
  });

  it('signs the time with the body in X-Lumen-Signature-V2: a delivery replayed outside the window, or with its time moved, no longer verifies', async () => {
    const rx = await receiver();
    const lumen = await partnerWith(rx.url, { signature: 'lumen', webhookSecret: 'plain-hex-secret-0123456789abcdef' });
    const a = await deliver(lumen, rx);
    const v2 = h(a, 'x-lumen-signature-v2')!;
    expect(v2).toMatch(/^t=\d{10},v2=[0-9a-f]{64}$/);
    // Computed here as the docs tell a receiver to: HMAC-SHA256 of "<t>.<raw body>" with the secret as text.
    const t0 = Number(/^t=(\d+)/.exec(v2)![1]);
    expect(Math.abs(t0 - Date.now() / 1000)).toBeLessThan(60);
    expect(v2.split(',v2=')[1]).toBe(createHmac('sha256', lumen.secret).update(`${t0}.`).update(a.raw).digest('hex'));
    expect(verifyLumenSignature(lumen.secret, a.raw, a.headers)).toBe(true);
    // Captured and replayed ten minutes later: refused; within the window: accepted.
    expect(verifyLumenSignature(lumen.secret, a.raw, a.headers, { now: new Date((t0 + 600) * 1000) })).toBe(false);
    expect(verifyLumenSignature(lumen.secret, a.raw, a.headers, { now: new Date((t0 + 240) * 1000) })).toBe(true);
    // The time moved to look fresh: the signature no longer matches.
    const moved = { ...a.headers, 'x-lumen-signature-v2': v2.replace(/^t=\d+/, `t=${t0 + 600}`) };
    expect(verifyLumenSignature(lumen.secret, a.raw, moved, { now: new Date((t0 + 600) * 1000) })).toBe(false);
    // The deprecated body-only form is still sent, and still verifies with @octokit/webhooks-methods.
    expect(await verify(lumen.secret, text(a), h(a, 'x-lumen-signature')!)).toBe(true);
  });

  it('refuses a malformed whsec_ secret and an unknown scheme, pointing at the field', async () => {
    const tenant = await makeTenant(t.rt);
    await expect(makePartner(t.rt, { tenantId: tenant.id, transport: 'webhook', webhookUrl: 'http://127.0.0.1:9/x', webhookSecret: 'whsec_not*base64*at*all!!' })).rejects.toMatchObject({
      code: 'validation-failed',
      errors: [{ pointer: '/webhookSecret' }],
    });
    await expect(makePartner(t.rt, { tenantId: tenant.id, transport: 'webhook', webhookUrl: 'http://127.0.0.1:9/x', webhookSecret: `whsec_${Buffer.from('short').toString('base64')}AAAAAAAA` })).rejects.toMatchObject({
      errors: [{ pointer: '/webhookSecret' }],
    });
    await expect(makePartner(t.rt, { tenantId: tenant.id, signature: 'hmac' })).rejects.toMatchObject({ errors: [{ pointer: '/signature' }] });
  });

  it('rotate-secret (admin API): during the overlap both secrets verify with both libraries; after it only the new one', async () => {
    const rx = await receiver();
    const p = await partnerWith(rx.url);
    const api = adminFetch(t, await adminToken(t, 'rotation-desk'));
    const res = await api(`/partners/${p.partner.code}/rotate-secret`, { method: 'POST', json: {} });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const rotated = (await res.json()) as { webhookSecret: string; previousWebhookSecretUntil: string | null; signature: string };
    expect(rotated.webhookSecret).toMatch(/^whsec_/);
    expect(rotated.webhookSecret).not.toBe(p.secret);
    const until = Date.parse(rotated.previousWebhookSecretUntil!);
    expect(Math.abs(until - (Date.now() + 86_400_000))).toBeLessThan(60_000);
    const audit = (await auditOf(t, p.partner.id)).at(-1)!;
    expect(audit).toMatchObject({ action: 'partner.rotate-secret' });
    expect(JSON.stringify(audit)).not.toContain(rotated.webhookSecret);
    expect(JSON.stringify(audit)).not.toContain(p.secret);

    const during = await deliver(p, rx);
    expect(h(during, 'webhook-signature')).toMatch(/^v1,\S+ v1,\S+$/);
    for (const secret of [rotated.webhookSecret, p.secret]) {
      expect(standardVerifies(secret, during)).toBe(true);
      expect(verifyWebhook(secret, during.raw, during.headers)).toBe(true);
    }
    expect(await verify(rotated.webhookSecret, text(during), h(during, 'x-lumen-signature')!)).toBe(true);
    expect(await verify(p.secret, text(during), h(during, 'x-lumen-signature-previous')!)).toBe(true);
    expect(await verify(p.secret, text(during), h(during, 'x-lumen-signature')!)).toBe(false);
    expect(h(during, 'x-lumen-signature-v2')).toMatch(/^t=\d+,v2=[0-9a-f]{64},v2=[0-9a-f]{64}$/);
    for (const secret of [rotated.webhookSecret, p.secret]) expect(verifyLumenSignature(secret, during.raw, { 'x-lumen-signature-v2': h(during, 'x-lumen-signature-v2') })).toBe(true);

    // The overlap ends (moved into the past rather than waited for).
    await t.rt.db.updateTable('external_system').set({ webhook_previous_secret_until: new Date(Date.now() - 1000) }).where('id', '=', p.partner.id).execute();
    const after = await deliver(p, rx);
    expect(h(after, 'webhook-signature')).toMatch(/^v1,\S+$/);
    expect(h(after, 'x-lumen-signature-previous')).toBeUndefined();
    expect(standardVerifies(rotated.webhookSecret, after)).toBe(true);
    expect(await verify(rotated.webhookSecret, text(after), h(after, 'x-lumen-signature')!)).toBe(true);
    expect(standardVerifies(p.secret, after)).toBe(false);
    expect(verifyWebhook(p.secret, after.raw, after.headers)).toBe(false);
    const shown = (await (await api(`/partners/${p.partner.code}`)).json()) as { previousWebhookSecretUntil: string | null };
    expect(shown.previousWebhookSecretUntil).toBeNull();

    // The minute sweep forgets it.
    expect(await dropExpiredWebhookSecrets(t.rt.db)).toBeGreaterThanOrEqual(1);
    const row = await t.rt.db.selectFrom('external_system').select(['webhook_previous_secret_enc', 'webhook_previous_secret_until']).where('id', '=', p.partner.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ webhook_previous_secret_enc: null, webhook_previous_secret_until: null });
  });

  it('rotate-secret with overlap 0 drops the old secret at once; a second rotation replaces the older previous secret; bad input is 422 and changes nothing', async () => {
    const rx = await receiver();
    const p = await partnerWith(rx.url);
    const first = await rotateWebhookSecret(t.rt, p.partner.code, { overlapSeconds: 3600 });
    const second = await rotateWebhookSecret(t.rt, p.partner.code, {});
    const got = await deliver(p, rx);
    expect(standardVerifies(second.webhookSecret, got)).toBe(true);
    expect(standardVerifies(first.webhookSecret, got)).toBe(true);
    expect(standardVerifies(p.secret, got)).toBe(false);

    const api = adminFetch(t, await adminToken(t, 'rotation-desk-2'));
    const bad = await api(`/partners/${p.partner.code}/rotate-secret`, { method: 'POST', json: { overlapSeconds: -1 } });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { errors: { pointer: string }[] }).errors[0]!.pointer).toBe('/overlapSeconds');
    const badSecret = await api(`/partners/${p.partner.code}/rotate-secret`, { method: 'POST', json: { webhookSecret: 'whsec_???????????????????' } });
    expect(badSecret.status).toBe(422);
    expect(((await badSecret.json()) as { errors: { pointer: string }[] }).errors[0]!.pointer).toBe('/webhookSecret');
    const stillSigned = await deliver(p, rx);
    expect(standardVerifies(second.webhookSecret, stillSigned)).toBe(true);

    const now = await rotateWebhookSecret(t.rt, p.partner.code, { overlapSeconds: 0 });
    expect(now.previousWebhookSecretUntil).toBeNull();
    const alone = await deliver(p, rx);
    expect(h(alone, 'webhook-signature')).toMatch(/^v1,\S+$/);
    expect(standardVerifies(now.webhookSecret, alone)).toBe(true);
    expect(standardVerifies(second.webhookSecret, alone)).toBe(false);

    const polling = await makePartner(t.rt, { transport: 'polling', scopes: [] });
    await expect(rotateWebhookSecret(t.rt, polling.code, {})).rejects.toMatchObject({ code: 'validation-failed' });
    await expect(rotateWebhookSecret(t.rt, 'nobody-here', {})).rejects.toMatchObject({ code: 'not-found' });
  });

  it('rotate-secret from the command line shows the new secret once and the end of the overlap', async () => {
    const rx = await receiver();
    const p = await partnerWith(rx.url);
    const out = await t.cli('partner', 'rotate-secret', p.partner.code, '--overlap', '600', '--json');
    expect(out.code).toBe(0);
    const body = JSON.parse(out.stdout) as { webhookSecret: string; previousWebhookSecretUntil: string };
    expect(Math.abs(Date.parse(body.previousWebhookSecretUntil) - (Date.now() + 600_000))).toBeLessThan(60_000);
    const shown = await t.cli('partner', 'show', p.partner.code);
    expect(shown.stdout).toContain('signature both');
    expect(shown.stdout).toContain(`previous secret signs until ${body.previousWebhookSecretUntil}`);
    expect(shown.stdout).not.toContain(body.webhookSecret);
    const got = await deliver(p, rx);
    expect(standardVerifies(body.webhookSecret, got) && standardVerifies(p.secret, got)).toBe(true);
  });
});

describe('migration 0027', () => {
  it('partners that existed keep lumen; partners created afterwards get both', async () => {
    await withDatabaseBefore(27, async (pool) => {
      await pool.query(`INSERT INTO tenant (id, name) VALUES ('3f5c2a9e-8b1d-4c7e-9a2f-6d4b1e8c0a71', 'Cidade')`);
      await pool.query(`INSERT INTO external_system (tenant_id, code) VALUES ('3f5c2a9e-8b1d-4c7e-9a2f-6d4b1e8c0a71', 'before')`);
      await migrate(pool);
      await pool.query(`INSERT INTO external_system (tenant_id, code) VALUES ('3f5c2a9e-8b1d-4c7e-9a2f-6d4b1e8c0a71', 'after')`);
      const { rows } = await pool.query('SELECT code, webhook_signature FROM external_system ORDER BY code');
      expect(rows).toEqual([
        { code: 'after', webhook_signature: 'both' },
        { code: 'before', webhook_signature: 'lumen' },
      ]);
    });
  });
});
