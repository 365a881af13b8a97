/**
 * Secrets never leave through logs, responses or error bodies. A full scenario runs
 * with the service logging at trace level: admin tokens, partner keys (issued,
 * rotated, used wrongly), webhook secrets (signing failing and succeeding
 * deliveries), polling keys (a partner that even echoes the key back in its error),
 * CLI commands. Then every captured log line, every response and every CLI output is
 * searched for each secret; the only places a secret may appear are the one-time
 * answers that issue it. The database is searched too: secrets are stored hashed or
 * sealed, never in clear.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPollState } from '../../src/db/repositories/partner-poll.repository.js';
import { reconcilePartnerPolls } from '../../src/services/partner-poll/service.js';
import { cli as runCli, secretFile, startTestApp, TEST_SECRET_KEY, type TestApp } from '../support/app.js';
import { makeTenant } from '../support/factories.js';
import { recordReliability } from '../support/reliability.js';
import { emit, waitFor } from '../events/support.js';
import { intakeBody } from '../intake/support.js';
import { request } from '../polling/support.js';

const SECTION = 'Security: secrets in logs and responses';
const WEBHOOK_SECRET = 'whsec-Segredo-De-Assinatura-9f8e7d6c';
const NEW_WEBHOOK_SECRET = 'whsec-Outro-Segredo-Rotacionado-1a2b3c';
const POLLING_KEY = 'partner-polling-key-Kx8v3Qm2Zp7w';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_TEST_LOG_LEVEL: 'trace', LUMEN_WEBHOOK_RETRY_SCHEDULE: '100ms,100ms' } });
});
afterAll(async () => {
  await t?.stop();
});

/** Everything a secret must not appear in, and the answers that may carry one (where it is issued). */
const exposed: { where: string; text: string }[] = [];
const issued: { where: string; text: string }[] = [];

async function api(path: string, init: { method?: string; headers?: Record<string, string>; json?: unknown; apiKey?: string } = {}, issuing = false) {
  const res = await t.fetch(path, init);
  const text = await res.text();
  (issuing ? issued : exposed).push({ where: `${init.method ?? 'GET'} ${path} -> ${res.status}`, text: `${text}\n${JSON.stringify([...res.headers.entries()])}` });
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function cli(issuing: boolean, ...argv: string[]) {
  // The CLI's own logs (stderr) at the most verbose level too.
  const out = await runCli({ ...t.env, LUMEN_LOG_LEVEL: 'trace' }, ...argv);
  (issuing ? issued : exposed).push({ where: `lumen ${argv.join(' ')} (stdout)`, text: out.stdout });
  exposed.push({ where: `lumen ${argv.join(' ')} (stderr)`, text: out.stderr });
  expect(out.code, out.stderr).toBe(0);
  return out;
}

describe('secrets across a full scenario', () => {
  it('appear only in the answer that issues them: never in logs, other responses, errors, CLI output or the database in clear', async () => {
    // A webhook receiver that fails once (and shows what it got), then accepts.
    let webhookCalls = 0;
    const rx = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        webhookCalls++;
        if (webhookCalls === 1) return void res.writeHead(500, { 'content-type': 'text/plain' }).end(`rejected ${String(req.headers['x-lumen-signature'])}`);
        res.writeHead(204).end();
      });
    });
    // A partner polling endpoint that refuses once, echoing the key it was given, then serves.
    let polls = 0;
    const partnerEndpoint = http.createServer((req, res) => {
      polls++;
      const key = String(req.headers['x-api-key']);
      if (polls === 1) return void res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `invalid X-Api-Key "${key}"` }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: [request('SECRET-POLL-1', '2026-03-14T12:00:00.000Z')], hasMore: false }));
    });
    await Promise.all([new Promise<void>((r) => rx.listen(0, '127.0.0.1', r)), new Promise<void>((r) => partnerEndpoint.listen(0, '127.0.0.1', r))]);
    try {
      const tenant = await makeTenant(t.rt, { intakePolicy: 'manual' });
      const adminOut = await cli(true, 'admin-token', 'create', '--name', 'secrets-test', '--json');
      const adminToken = JSON.parse(adminOut.stdout).token as string;
      const bearer = { authorization: `Bearer ${adminToken}` };

      // Partners through the admin API (keys issued once) and the CLI.
      const webhookUrl = `http://127.0.0.1:${(rx.address() as AddressInfo).port}/hooks`;
      const created = await api('/api/admin/partners', { method: 'POST', headers: bearer, json: { tenantId: tenant.id, code: 'secret-webhook', scopes: ['canCreateAlerts', 'canReadCityData'], transport: 'webhook', webhookUrl, webhookSecret: WEBHOOK_SECRET } }, true);
      expect(created.status).toBe(201);
      const firstKey = created.body.apiKey as string;
      const pollingUrl = `http://127.0.0.1:${(partnerEndpoint.address() as AddressInfo).port}/lumen/requests`;
      const pollerOut = await cli(true, 'partner', 'create', '--tenant', tenant.id, '--code', 'secret-poller', '--scopes', 'canCreateServiceOrders', '--transport', 'polling', '--polling-url', pollingUrl, '--polling-key-file', secretFile(POLLING_KEY), '--polling-interval', '1', '--json');
      const pollerKey = JSON.parse(pollerOut.stdout).apiKey as string;

      // The key in use, then rotated: the old one refused, also in the wrong places.
      expect((await api('/api/external/health', { apiKey: firstKey })).status).toBe(200);
      const rotated = await api('/api/admin/partners/secret-webhook/rotate-key', { method: 'POST', headers: bearer }, true);
      const key = rotated.body.apiKey as string;
      expect((await api('/api/external/health', { apiKey: firstKey })).status).toBe(401);
      expect((await api(`/api/external/health?apiKey=${firstKey}`)).status).toBe(401);
      expect((await api('/api/external/health', { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
      expect((await api('/api/external/health', { headers: { 'x-api-key': `${key} ` } })).status).toBe(200);
      expect((await api('/api/admin/tenants', { headers: { 'x-api-key': key } })).status).toBe(401);
      expect((await api('/api/admin/tenants', { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
      expect((await api('/api/external/health', { apiKey: adminToken })).status).toBe(401);
      expect((await api(`/api/external/poles?updatedSince=${encodeURIComponent(key)}`, { apiKey: key })).status).toBe(400);
      // A partner pasting its key into the body: refused, the key not echoed back or logged.
      const misplaced = await api('/api/external/service-orders', { method: 'POST', apiKey: key, json: { ...intakeBody('SECRET-1'), assetType: key, requester: { name: key } } });
      expect(misplaced.status).toBe(422);

      // A request, triaged into an order: the event is signed with the secret, retried once, delivered.
      const accepted = await api('/api/external/service-orders', { method: 'POST', apiKey: key, json: intakeBody('SECRET-2'), headers: { 'idempotency-key': '0b6f6f0e-3c44-4b7e-9e0e-5c1b8c7d9a21' } });
      expect(accepted.status).toBe(201);
      const order = await api(`/api/admin/alerts/${accepted.body.alert.id}/create-order`, { method: 'POST', headers: bearer, json: {} });
      expect(order.status).toBe(201);
      await waitFor(() => webhookCalls >= 2, 10_000, 'the retried webhook');
      await waitFor(async () => (await t.rt.db.selectFrom('webhook_delivery').select('status').where('external_system_id', '=', created.body.id).executeTakeFirst())?.status === 'succeeded', 10_000, 'the delivery');
      // The secret changed through the CLI: the next event is signed with the new one.
      await cli(false, 'partner', 'update', 'secret-webhook', '--webhook-secret-file', secretFile(NEW_WEBHOOK_SECRET), '--json');
      const alert = await t.rt.db.selectFrom('alert').selectAll().where('id', '=', accepted.body.alert.id).executeTakeFirstOrThrow();
      await emit(t.rt, ['ServiceOrder.StatusChanged', { alert: { ...alert, status: 'Linked' }, serviceOrderId: alert.service_order_id }]);
      await waitFor(() => webhookCalls >= 3, 10_000, 'the webhook signed with the new secret');

      // Polling: refused once (the partner echoes the key), then served.
      const poller = await t.rt.db.selectFrom('external_system').select('id').where('code', '=', 'secret-poller').executeTakeFirstOrThrow();
      await reconcilePartnerPolls(t.rt);
      await waitFor(async () => (await findPollState(t.rt.db, poller.id))?.last_success_at, 15_000, 'a successful poll after the refused one');
      expect(polls).toBeGreaterThanOrEqual(2);
      const state = await findPollState(t.rt.db, poller.id);
      expect(state?.last_error).toMatch(/^the partner answered 401: /);
      expect(state?.last_error).toContain('invalid X-Api-Key \\"[redacted]\\"');

      // What operators look at.
      for (const path of ['/api/admin/partners', '/api/admin/partners/secret-webhook', '/api/admin/partners/secret-poller', '/api/admin/partners/secret-poller/polling', '/api/admin/partners/secret-webhook/webhook-deliveries', '/api/admin/audit?limit=200']) {
        expect((await api(path, { headers: bearer })).status, path).toBe(200);
      }
      for (const argv of [
        ['partner', 'list', '--json'],
        ['partner', 'show', 'secret-webhook'],
        ['partner', 'show', 'secret-poller', '--json'],
        ['partner', 'status', 'secret-poller'],
        ['partner', 'status', 'secret-poller', '--json'],
        ['webhook', 'deliveries', '--partner', 'secret-webhook'],
        ['admin-token', 'list', '--json'],
        ['audit', 'list', '--json'],
      ]) {
        await cli(false, ...argv);
      }

      // The search.
      const secrets: Record<string, string> = {
        'first partner key': firstKey,
        'rotated partner key': key,
        "poller's partner key": pollerKey,
        'admin token': adminToken,
        'webhook secret': WEBHOOK_SECRET,
        'new webhook secret': NEW_WEBHOOK_SECRET,
        'polling key': POLLING_KEY,
        'secret key (LUMEN_SECRET_KEY)': TEST_SECRET_KEY,
      };
      const logText = t.logs.text;
      // The scenario was logged: requests, webhook attempts, the refused poll.
      expect(t.logs.lines.filter((l) => l.includes('"msg":"request"')).length).toBeGreaterThan(15);
      expect(t.logs.lines.filter((l) => l.includes('"msg":"webhook attempt"')).length).toBeGreaterThanOrEqual(3);
      expect(logText).toContain('partner poll failed; the cursor stays');
      const { rows: tables } = await sql<{ s: string; n: string }>`
        SELECT table_schema AS s, table_name AS n FROM information_schema.tables
        WHERE table_schema IN ('public', 'pgboss') AND table_type = 'BASE TABLE'`.execute(t.rt.db);
      let stored = '';
      for (const { s, n } of tables) {
        const { rows } = await sql<{ r: string }>`SELECT t::text AS r FROM ${sql.id(s, n)} t`.execute(t.rt.db);
        stored += rows.map((r) => r.r).join('\n');
      }
      const found: string[] = [];
      for (const [name, secret] of Object.entries(secrets)) {
        if (logText.includes(secret)) found.push(`${name} in the logs`);
        for (const e of exposed) if (e.text.includes(secret)) found.push(`${name} in ${e.where}`);
        if (stored.includes(secret)) found.push(`${name} in the database`);
      }
      expect(found).toEqual([]);
      // The issuing answers did carry their secret (so the search above could find one).
      expect(issued.some((e) => e.text.includes(key))).toBe(true);
      expect(issued.some((e) => e.text.includes(adminToken))).toBe(true);
      recordReliability(SECTION, {
        item: 'secrets searched for in logs, responses, CLI output and the database',
        figure: `${Object.keys(secrets).length} secrets, ${t.logs.lines.length} log lines, ${exposed.length} responses and outputs, ${tables.length} tables: 0 found`,
        detail: 'trace-level logs of a scenario with key rotation, misplaced keys, signed webhooks failing then succeeding, a partner echoing the polling key in its error, and operator reads through the API and the CLI; only the answers that issue a key or token carry it',
      });
    } finally {
      rx.closeAllConnections();
      partnerEndpoint.closeAllConnections();
      await Promise.all([new Promise((r) => rx.close(r)), new Promise((r) => partnerEndpoint.close(r))]);
    }
  });
});
