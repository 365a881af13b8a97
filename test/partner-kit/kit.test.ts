import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { signWebhookBody } from '../../src/lib/webhook-signature.js';
import { assignServiceOrder, completeServiceOrder } from '../../src/services/operations/index.js';
import { cliActor } from '../../src/services/audit/index.js';
import { LumenApiError, createLumenClient, drainEvents, standardWebhookSecret, syncByCursor, syncByPages, verifyLumenSignature, verifyStandardWebhook, verifyWebhook, type Pole } from '../../src/partner-kit/index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeCityPole, makePartner, makeTeam, makeTenant } from '../support/factories.js';
import { settle } from '../city-data/support.js';
import { intakeBody, PNG } from '../intake/support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

async function city(poles: number) {
  const tenant = await makeTenant(t.rt);
  const partner = await makePartner(t.rt, { tenantId: tenant.id, transport: 'polling', scopes: ['canCreateServiceOrders', 'canReadCityData'] });
  for (let i = 0; i < poles; i++) await makeCityPole(t.rt, { tenantId: tenant.id, code: `K${String(i).padStart(3, '0')}` });
  await settle(t);
  return { tenant, partner, client: createLumenClient({ baseUrl: t.baseUrl, apiKey: partner.apiKey }) };
}

describe('partner kit: city-data sync', () => {
  it('a full round by cursor and by pages returns every pole once; the next round returns only what changed', async () => {
    const { tenant, client } = await city(23);
    const seen = new Map<string, Pole>();
    const byCursor = await syncByCursor(client, 'poles', { pageSize: 5, onItems: (items) => items.forEach((p) => seen.set(p.id, p)) });
    expect(byCursor).toMatchObject({ received: 23, pages: 5 });
    expect([...seen.values()].map((p) => p.code).sort()).toEqual(Array.from({ length: 23 }, (_, i) => `K${String(i).padStart(3, '0')}`));

    const pageCodes: string[] = [];
    const byPages = await syncByPages(client, 'poles', { pageSize: 5, onItems: (items) => items.forEach((p) => pageCodes.push(p.code)) });
    expect(byPages).toMatchObject({ received: 23, pages: 5, updatedSince: byCursor.updatedSince });
    expect(new Set(pageCodes).size).toBe(23);

    await t.rt.db.updateTable('pole').set({ address: 'Rua Nova, 10' }).where('tenant_id', '=', tenant.id).where('code', '=', 'K007').execute();
    await settle(t);
    const changed: string[] = [];
    const next = await syncByCursor(client, 'poles', { updatedSince: byCursor.updatedSince, onItems: (items) => items.forEach((p) => changed.push(p.code)) });
    // updatedSince is inclusive: the pole(s) stamped at exactly that instant come again too.
    expect(changed).toContain('K007');
    expect(changed.length).toBeLessThan(23);
    expect(Date.parse(next.updatedSince!)).toBeGreaterThan(Date.parse(byCursor.updatedSince!));

    // From the resume cursor instead: exactly what changed, and nothing in an unchanged round.
    await t.rt.db.updateTable('pole').set({ address: 'Rua Nova, 12' }).where('tenant_id', '=', tenant.id).where('code', '=', 'K011').execute();
    await settle(t);
    const resumed: string[] = [];
    const fromResume = await syncByCursor(client, 'poles', { resumeCursor: next.resumeCursor, onItems: (items) => items.forEach((p) => resumed.push(p.code)) });
    expect(resumed).toEqual(['K011']);
    const idle = await syncByCursor(client, 'poles', { resumeCursor: fromResume.resumeCursor, onItems: () => {} });
    expect(idle).toMatchObject({ received: 0, pages: 1 });
    expect(byPages.resumeCursor).not.toBeNull();
  });

  it('rejects with a LumenApiError carrying the problem+json of a refusal', async () => {
    const bad = createLumenClient({ baseUrl: t.baseUrl, apiKey: 'lmn_live_not-a-key' });
    const err = await syncByCursor(bad, 'poles', { onItems: () => {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LumenApiError);
    expect(err).toMatchObject({ status: 401, problem: { status: 401 } });
  });
});

describe('partner kit: intake and the events drain', () => {
  it('registers a request with a photo, then drains the events of its order once each, confirming as it goes', async () => {
    const { tenant, client } = await city(0);
    const { status, body } = await client.call('createServiceOrder', {
      body: intakeBody('KIT-1', { attachments: [{ type: 'photo', contentBase64: PNG.toString('base64'), contentType: 'image/png', filename: 'lamp.png' }] }) as never,
    });
    expect(status).toBe(201);
    expect(body.alert.attachments).toEqual([expect.objectContaining({ success: true, contentType: 'image/png' })]);

    const team = await makeTeam(t.rt, { tenantId: tenant.id });
    await assignServiceOrder(t.rt, cliActor(), body.id, team.id);
    await completeServiceOrder(t.rt, cliActor(), body.id, 'Lâmpada trocada');

    const types: string[] = [];
    const first = await drainEvents(client, { limit: 1, onEvents: (events) => events.forEach((e) => types.push(e.eventType)) });
    expect(types).toEqual(['ServiceOrder.StatusChanged', 'ServiceOrder.Completed']);
    expect(first.received).toBe(2);

    // The next drain confirms the last batch and finds nothing new.
    const again: string[] = [];
    const second = await drainEvents(client, { since: first.since, onEvents: (events) => events.forEach((e) => again.push(e.eventType)) });
    expect(again).toEqual([]);
    expect(second.since).toBe(first.since);
  });

  it('a batch whose handler throws stays unconfirmed and comes again', async () => {
    const { tenant, client } = await city(0);
    const { body } = await client.call('createServiceOrder', { body: intakeBody('KIT-2') as never });
    const team = await makeTeam(t.rt, { tenantId: tenant.id });
    await assignServiceOrder(t.rt, cliActor(), body.id, team.id);
    await expect(drainEvents(client, { onEvents: () => Promise.reject(new Error('receiver down')) })).rejects.toThrow('receiver down');
    const types: string[] = [];
    await drainEvents(client, { onEvents: (events) => events.forEach((e) => types.push(e.eventType)) });
    expect(types).toEqual(['ServiceOrder.StatusChanged']);
  });
});

describe('partner kit: webhook verification', () => {
  const body = Buffer.from(JSON.stringify({ eventId: '0b6c1f0e-2f35-4f57-9c55-2d8a3c0b8f01', eventType: 'ServiceOrder.Completed' }));

  it("verifies Lumen's X-Lumen-Signature over the exact bytes, and refuses any change", () => {
    const secret = 'a-webhook-secret-of-the-partner';
    const headers = { 'x-lumen-signature': signWebhookBody(secret, body) };
    expect(verifyLumenSignature(secret, body, headers)).toBe(true);
    expect(verifyLumenSignature(secret, Buffer.concat([body, Buffer.from(' ')]), headers)).toBe(false);
    expect(verifyLumenSignature('another-secret', body, headers)).toBe(false);
    expect(verifyLumenSignature(secret, body, {})).toBe(false);
  });

  it('verifies Standard Webhooks signatures made by the standard’s own library, including two secrets during a rotation', () => {
    const secret = `whsec_${Buffer.from('k'.repeat(32)).toString('base64')}`;
    const previous = `whsec_${Buffer.from('p'.repeat(32)).toString('base64')}`;
    const now = new Date();
    const id = 'msg_0b6c1f0e';
    const signature = `${new Webhook(previous).sign(id, now, body.toString())} ${new Webhook(secret).sign(id, now, body.toString())}`;
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': signature };
    expect(verifyStandardWebhook(secret, body, headers)).toBe(true);
    expect(verifyStandardWebhook(previous, body, headers)).toBe(true);
    expect(verifyStandardWebhook(`whsec_${Buffer.from('x'.repeat(32)).toString('base64')}`, body, headers)).toBe(false);
    expect(verifyStandardWebhook(secret, Buffer.from(body.toString().replace('Completed', 'Cancelled')), headers)).toBe(false);
    const old = { ...headers, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000) - 3600) };
    expect(verifyStandardWebhook(secret, body, old)).toBe(false);
  });

  it('a receiver on the replaced secret verifies X-Lumen-Signature-Previous; a plain secret verifies the standard scheme in its whsec_ form', () => {
    const secret = 'the-new-secret-of-the-partner';
    const previous = 'the-old-secret-of-the-partner';
    const headers = { 'x-lumen-signature': signWebhookBody(secret, body), 'x-lumen-signature-previous': signWebhookBody(previous, body) };
    expect(verifyLumenSignature(previous, body, headers)).toBe(true);
    expect(verifyLumenSignature(secret, body, headers)).toBe(true);
    expect(verifyWebhook('a-third-secret-entirely', body, headers)).toBe(false);

    const plain = '0123456789abcdef0123456789abcdef';
    expect(standardWebhookSecret(plain)).toBe(`whsec_${Buffer.from(plain).toString('base64')}`);
    const now = new Date();
    const signed = { 'webhook-id': 'evt-1', 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': new Webhook(standardWebhookSecret(plain)).sign('evt-1', now, body.toString()) };
    expect(verifyWebhook(plain, body, signed)).toBe(true);
    expect(verifyWebhook(`${plain}x`, body, signed)).toBe(false);
  });
});
