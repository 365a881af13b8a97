/**
 * "Send a test event": POST /api/admin/partners/{code}/test-event and
 * `lumen partner test-event`. A real loopback receiver gets a Test.Ping signed like real
 * events (verified with the official `standardwebhooks` library and with
 * `@octokit/webhooks-methods` for Lumen's scheme), the delivery log shows it, a
 * receiver that is down gets retries until dead and a redelivery by id works, partners
 * that cannot receive one answer 409, another city answers 404 and nothing is written,
 * and a Test.Ping never appears in events polling.
 */
import { verify } from '@octokit/webhooks-methods';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteExpiredEvents } from '../../src/services/events/index.js';
import { updatePartner } from '../../src/services/partners/index.js';
import { cliActor } from '../../src/services/audit/index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, auditOf, cliJson, problemOf } from '../operations/support.js';
import { makeOperator, makeToken, sessionFetch, signIn, tokenFetch } from '../operators/support.js';
import { emit, startReceiver, subjectFor, waitFor, type Received, type Reply } from './support.js';

let t: TestApp;
let api: ReturnType<typeof adminFetch>;
beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_WEBHOOK_RETRY_SCHEDULE: '100ms,100ms', LUMEN_WEBHOOK_TIMEOUT_MS: '500' } });
  api = adminFetch(t, await adminToken(t));
});
const receivers: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await t?.stop();
});
async function receiver(reply?: (req: Received, index: number) => Reply) {
  const r = await startReceiver(reply);
  receivers.push(r);
  return r;
}

const h = (r: Received, name: string): string | undefined => r.headers[name] as string | undefined;

async function partnerWith(url: string, o: { signature?: string } = {}) {
  const tenant = await makeTenant(t.rt);
  const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes: [], transport: 'webhook', webhookUrl: url, ...o });
  return { tenantId: tenant.id, partner, secret: partner.webhookSecret! };
}

interface Sent {
  partnerCode: string;
  eventId: string;
  eventType: string;
  occurredAt: string;
  deliveryId: string;
}

async function sendTest(code: string, call = api): Promise<Sent> {
  const res = await call(`/partners/${encodeURIComponent(code)}/test-event`, { method: 'POST' });
  expect(res.status, await res.clone().text()).toBe(202);
  return (await res.json()) as Sent;
}

async function deliveryOf(id: string) {
  const res = await api(`/webhook-deliveries/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as { id: string; eventId: string; eventType: string; status: string; attempts: number; alertId: string | null; serviceOrderId: string | null; requestedBy: string; redeliveryOf: string | null };
}

const testRows = async () => ({
  tests: Number((await sql<{ n: string }>`SELECT count(*) AS n FROM test_event`.execute(t.rt.db)).rows[0]!.n),
  deliveries: Number((await sql<{ n: string }>`SELECT count(*) AS n FROM webhook_delivery WHERE test_event_id IS NOT NULL`.execute(t.rt.db)).rows[0]!.n),
});

describe('send a test event', () => {
  it('the receiver gets a Test.Ping signed with both schemes (official libraries verify it), and the log shows it succeeded', async () => {
    const rx = await receiver();
    const p = await partnerWith(rx.url);
    expect(p.partner.signature).toBe('both');
    const sent = await sendTest(p.partner.code);
    expect(sent).toMatchObject({ partnerCode: p.partner.code, eventType: 'Test.Ping' });

    const got = await waitFor(() => rx.received.find((r) => h(r, 'x-lumen-event-id') === sent.eventId), 5000, 'the Test.Ping');
    const text = got.raw.toString('utf8');
    const body = JSON.parse(text) as Record<string, unknown>;
    expect(body).toEqual({ eventId: sent.eventId, eventType: 'Test.Ping', occurredAt: sent.occurredAt, partnerCode: p.partner.code, message: expect.any(String) });
    expect(h(got, 'x-lumen-event-type')).toBe('Test.Ping');
    expect(h(got, 'x-lumen-delivery-attempt')).toBe('1');
    expect(h(got, 'webhook-id')).toBe(sent.eventId);
    // Standard Webhooks, with the official library; Lumen's scheme, with GitHub's.
    const verified = new Webhook(p.secret).verify(text, { 'webhook-id': h(got, 'webhook-id')!, 'webhook-timestamp': h(got, 'webhook-timestamp')!, 'webhook-signature': h(got, 'webhook-signature')! });
    expect(verified).toEqual(body);
    expect(await verify(p.secret, text, h(got, 'x-lumen-signature')!)).toBe(true);
    expect(() => new Webhook(`whsec_${Buffer.from('another-secret-0123456789abcdef').toString('base64')}`).verify(text, got.headers as Record<string, string>)).toThrow();

    const done = await waitFor(async () => {
      const d = await deliveryOf(sent.deliveryId);
      return d.status === 'succeeded' ? d : null;
    }, 5000, 'the delivery to succeed');
    expect(done).toMatchObject({ eventId: sent.eventId, eventType: 'Test.Ping', alertId: null, serviceOrderId: null, attempts: 1, redeliveryOf: null, requestedBy: 'admin-token:ops-desk' });
    const log = (await (await api(`/partners/${p.partner.code}/webhook-deliveries`)).json()) as { deliveries: { id: string; eventType: string; status: string }[] };
    expect(log.deliveries.map((d) => [d.id, d.eventType, d.status])).toEqual([[sent.deliveryId, 'Test.Ping', 'succeeded']]);

    const audit = await auditOf(t, p.partner.id);
    expect(audit.filter((a) => a.action === 'webhook.test-event').map((a) => [a.actor, a.after])).toEqual([['admin-token:ops-desk', { eventId: sent.eventId, deliveryId: sent.deliveryId }]]);
  });

  it("a partner on Lumen's scheme only gets X-Lumen-Signature; on the standard scheme only the Standard Webhooks headers", async () => {
    const rx = await receiver();
    const lumen = await partnerWith(rx.url, { signature: 'lumen' });
    const standard = await partnerWith(rx.url, { signature: 'standard' });
    const a = await sendTest(lumen.partner.code);
    const b = await sendTest(standard.partner.code);
    const gotA = await waitFor(() => rx.received.find((r) => h(r, 'x-lumen-event-id') === a.eventId), 5000, 'the lumen-scheme ping');
    const gotB = await waitFor(() => rx.received.find((r) => h(r, 'x-lumen-event-id') === b.eventId), 5000, 'the standard-scheme ping');
    expect(h(gotA, 'webhook-signature')).toBeUndefined();
    expect(await verify(lumen.secret, gotA.raw.toString('utf8'), h(gotA, 'x-lumen-signature')!)).toBe(true);
    expect(h(gotB, 'x-lumen-signature')).toBeUndefined();
    expect(new Webhook(standard.secret).verify(gotB.raw.toString('utf8'), gotB.headers as Record<string, string>)).toMatchObject({ eventType: 'Test.Ping', eventId: b.eventId });
  });

  it('a receiver that is down: retried on the schedule, then dead; redeliver-dead leaves it alone, redelivering it by id sends it again', async () => {
    let up = false;
    const rx = await receiver(() => ({ status: up ? 204 : 503 }));
    const p = await partnerWith(rx.url);
    const sent = await sendTest(p.partner.code);
    const dead = await waitFor(async () => {
      const d = await deliveryOf(sent.deliveryId);
      return d.status === 'dead' ? d : null;
    }, 10_000, 'the test delivery to die');
    expect(dead.attempts).toBe(3);
    expect(rx.received.map((r) => [h(r, 'x-lumen-event-id'), h(r, 'x-lumen-delivery-attempt')])).toEqual([
      [sent.eventId, '1'],
      [sent.eventId, '2'],
      [sent.eventId, '3'],
    ]);
    // A dead test event waits for no operator: not counted, not redelivered in bulk.
    const attention = (await (await api(`/tenants/${p.tenantId}/attention`)).json()) as { deadDeliveries: number };
    expect(attention.deadDeliveries).toBe(0);
    const bulk = (await (await api(`/partners/${p.partner.code}/webhook-deliveries/redeliver-dead`, { method: 'POST' })).json()) as { count: number };
    expect(bulk.count).toBe(0);
    const since = (await (await api(`/partners/${p.partner.code}/webhook-deliveries/redeliver`, { json: { since: new Date(Date.now() - 3_600_000).toISOString() } })).json()) as { count: number };
    expect(since.count).toBe(0);

    up = true;
    const res = await api(`/webhook-deliveries/${sent.deliveryId}/redeliver`, { method: 'POST' });
    expect(res.status).toBe(201);
    const again = (await res.json()) as { id: string; eventId: string; eventType: string; redeliveryOf: string; alertId: null };
    expect(again).toMatchObject({ eventId: sent.eventId, eventType: 'Test.Ping', redeliveryOf: sent.deliveryId, alertId: null });
    await waitFor(async () => (await deliveryOf(again.id)).status === 'succeeded', 5000, 'the redelivery to succeed');
    const last = rx.received.at(-1)!;
    expect([h(last, 'x-lumen-event-id'), h(last, 'x-lumen-delivery-attempt'), last.status]).toEqual([sent.eventId, '1', 204]);
    expect(last.raw.equals(rx.received[0]!.raw)).toBe(true);
  });

  it('redelivering a test delivery that is still open is 409; it holds back no event of the partner', async () => {
    // The receiver asks for an hour before the next attempt: the ping stays failed (open).
    const rx = await receiver((r) => (h(r, 'x-lumen-event-type') === 'Test.Ping' ? { status: 503, headers: { 'retry-after': '3600' } } : { status: 204 }));
    const p = await partnerWith(rx.url);
    const sent = await sendTest(p.partner.code);
    await waitFor(async () => (await deliveryOf(sent.deliveryId)).status === 'failed', 5000, 'the first attempt to fail');
    const res = await api(`/webhook-deliveries/${sent.deliveryId}/redeliver`, { method: 'POST', headers: { 'accept-language': 'en' } });
    expect(res.status).toBe(409);
    expect((await problemOf(res)).detail).toMatch(/still being delivered/);
    const [ev] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, p)]);
    await waitFor(() => rx.received.find((r) => h(r, 'x-lumen-event-id') === ev!.eventId && r.status === 204), 5000, 'the event, not held back by the failed ping');
  });

  it('409 problem+json, nothing written, for a partner that cannot receive one: polling, no webhook URL, no secret, disabled', async () => {
    const rx = await receiver();
    const cases: [string, (code: string, id: string) => Promise<unknown>, RegExp][] = [
      ['polling', (code) => updatePartner(t.rt, code, { transport: 'polling' }, cliActor()), /polling mode/],
      ['no URL', (_c, id) => t.rt.db.updateTable('external_system').set({ webhook_url: null }).where('id', '=', id).execute(), /no webhook URL/],
      ['no secret', (_c, id) => t.rt.db.updateTable('external_system').set({ webhook_secret_enc: null }).where('id', '=', id).execute(), /no webhook secret/],
      ['disabled', (code) => updatePartner(t.rt, code, { enabled: false }, cliActor()), /disabled/],
    ];
    for (const [label, spoil, detail] of cases) {
      const p = await partnerWith(rx.url);
      await spoil(p.partner.code, p.partner.id);
      const before = await testRows();
      const res = await api(`/partners/${p.partner.code}/test-event`, { method: 'POST', headers: { 'accept-language': 'en' } });
      expect(res.status, label).toBe(409);
      const problem = await problemOf(res);
      expect(problem.type, label).toBe('urn:lumen:problem:conflict');
      expect(problem.detail, label).toMatch(detail);
      expect(await testRows(), label).toEqual(before);
      expect((await auditOf(t, p.partner.id)).filter((a) => a.action === 'webhook.test-event'), label).toEqual([]);
    }
  });

  it("another city's partner is 404 like an unknown code, by token and by session, and nothing is written; viewers and triagers are 403", async () => {
    const rx = await receiver();
    const a = await partnerWith(rx.url);
    const cityB = await makeTenant(t.rt);
    const adminB = await makeOperator(t.rt, { grants: [{ tenantId: cityB.id, role: 'city-admin' }] });
    const byToken = tokenFetch(t, (await makeToken(t.rt, { operator: adminB.email })).token);
    const bySession = sessionFetch(t, await signIn(t, adminB.email, adminB.password));
    const before = await testRows();
    for (const call of [byToken, bySession]) {
      const res = await call(`/partners/${a.partner.code}/test-event`, { method: 'POST' });
      expect(res.status).toBe(404);
      const unknown = await call('/partners/no-such-partner/test-event', { method: 'POST' });
      expect(unknown.status).toBe(404);
      expect((await problemOf(res)).type).toBe((await problemOf(unknown)).type);
    }
    expect(await testRows()).toEqual(before);
    expect(rx.received).toEqual([]);

    for (const role of ['viewer', 'triager'] as const) {
      const op = await makeOperator(t.rt, { grants: [{ tenantId: a.tenantId, role }] });
      const res = await sessionFetch(t, await signIn(t, op.email, op.password))(`/partners/${a.partner.code}/test-event`, { method: 'POST' });
      expect(res.status, role).toBe(403);
    }
    const adminA = await makeOperator(t.rt, { grants: [{ tenantId: a.tenantId, role: 'city-admin' }] });
    const sent = await sendTest(a.partner.code, sessionFetch(t, await signIn(t, adminA.email, adminA.password)));
    expect((await deliveryOf(sent.deliveryId)).requestedBy).toBe(`operator:${adminA.email}`);
    expect((await testRows()).tests).toBe(before.tests + 1);
  });

  it('never appears in events polling, also for a partner that switches to polling afterwards; removed with the events after the retention', async () => {
    const rx = await receiver();
    const p = await partnerWith(rx.url);
    const [ev] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, p)]);
    const sent = await sendTest(p.partner.code);
    await waitFor(async () => (await deliveryOf(sent.deliveryId)).status === 'succeeded', 5000, 'the ping delivered');
    await updatePartner(t.rt, p.partner.code, { transport: 'polling' }, cliActor());
    const res = await t.fetch('/api/external/events?limit=1000', { apiKey: p.partner.apiKey });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { events: { eventId: string; eventType: string }[] };
    expect(page.events.map((e) => e.eventId)).toEqual([ev!.eventId]);
    expect(page.events.some((e) => e.eventType === 'Test.Ping' || e.eventId === sent.eventId)).toBe(false);

    // Retention: a test event older than it goes with its deliveries and attempts.
    await t.rt.db.updateTable('test_event').set({ created_at: new Date(Date.now() - 400 * 86_400_000) }).where('id', '=', sent.eventId).execute();
    expect(await deleteExpiredEvents(t.rt)).toBeGreaterThanOrEqual(1);
    expect(await t.rt.db.selectFrom('test_event').select('id').where('id', '=', sent.eventId).execute()).toEqual([]);
    expect(await t.rt.db.selectFrom('webhook_delivery').select('id').where('id', '=', sent.deliveryId).execute()).toEqual([]);
    expect(await t.rt.db.selectFrom('webhook_attempt').select('id').where('delivery_id', '=', sent.deliveryId).execute()).toEqual([]);
  });

  it('a delivery row carries exactly one of an event and a test event', async () => {
    const p = await partnerWith('http://127.0.0.1:9/hooks');
    await expect(sql`INSERT INTO webhook_delivery (external_system_id, ordering_key) VALUES (${p.partner.id}, gen_random_uuid())`.execute(t.rt.db)).rejects.toThrow(/webhook_delivery_one_event_ck/);
  });

  it('lumen partner test-event [--wait] sends one as cli:<user> and prints the event, the delivery and its outcome', async () => {
    const rx = await receiver();
    const p = await partnerWith(rx.url);
    const sent = cliJson(await t.cli('partner', 'test-event', p.partner.code, '--json'));
    expect(sent).toMatchObject({ partnerCode: p.partner.code, eventType: 'Test.Ping', eventId: expect.any(String), deliveryId: expect.any(String) });
    await waitFor(() => rx.received.find((r) => h(r, 'x-lumen-event-id') === sent.eventId), 5000, 'the CLI ping');
    expect((await deliveryOf(sent.deliveryId)).requestedBy).toMatch(/^cli:/);
    expect((await auditOf(t, p.partner.id)).filter((a) => a.action === 'webhook.test-event').map((a) => a.actor)).toEqual([expect.stringMatching(/^cli:/)]);

    const waited = await t.cli('partner', 'test-event', p.partner.code, '--wait', '--timeout', '20');
    expect(waited.code).toBe(0);
    expect(waited.stdout).toMatch(/^Test event [0-9a-f-]{36} \(Test\.Ping\) queued for .+: delivery [0-9a-f-]{36}\nAttempt 1: succeeded HTTP 204 in \d+ ms; delivery succeeded$/);

    const polling = await makePartner(t.rt, { scopes: [], transport: 'polling' });
    const refused = await t.cli('partner', 'test-event', polling.code);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/polling mode/);
  });
});
