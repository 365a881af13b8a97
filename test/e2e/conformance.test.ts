/**
 * Conformance of the built executable to its published documents, through Prism.
 *
 * `dist/lumen serve` runs on a fresh database; every request goes through
 * `prism proxy <document> <lumen> --errors`, which validates the request and Lumen's
 * answer against the document (an `sl-violations` header, or an error status, when
 * anything differs). Requests that break the document on purpose (no key, a bad query
 * value, a body against the schema) go through a second proxy without `--errors`, which
 * reports the request's violations and still forwards it, so Lumen's answer is checked
 * too. What Prism cannot carry (JSON it cannot parse, a body sent one byte a second)
 * goes straight to Lumen and is checked against the document by the suite itself, as
 * are the webhooks Lumen sends (Prism only sees traffic into Lumen). Lumen's calls to a
 * partner's polling endpoint go through a Prism proxy of `partner-polling.yaml`.
 *
 * Every scenario of every operation of partner.yaml, admin.yaml, telemetry.yaml, sandbox.yaml and open311.yaml;
 * zero violations on every exchange.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordReliability } from '../support/reliability.js';
import { documentOf, operationsOf, rawExchange, schemaErrors, violation } from '../reliability/hostile-support.js';
import { EXECUTABLE, Exchanges, lumenJson, runLumen, startLumen, startPrism, withDatabase, type Child } from './conformance-support.js';

const SECTION = 'Conformance to the published contract';
const ADMIN_URL = withDatabase(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres', 'postgres');
const BODY_LIMIT = 256 * 1024;
const BODY_TIMEOUT_MS = 1500;
const WEBHOOK_SECRET = 'whsec-conformance-0123456789';
const JPEG = Buffer.from(
  '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=',
  'base64',
);

const database = `lumen_conformance_${randomBytes(4).toString('hex')}`;
const cwd = mkdtempSync(path.join(tmpdir(), 'lumen-conformance-'));
const env: Record<string, string> = {
  DATABASE_URL: withDatabase(ADMIN_URL, database),
  LUMEN_DATA_DIR: path.join(cwd, 'data'),
  LUMEN_ENVIRONMENT: 'test',
  LUMEN_ALLOW_LOOPBACK: 'true',
  LUMEN_VALIDATE_RESPONSES: 'false',
  LUMEN_LOG_LEVEL: 'warn',
  LUMEN_BODY_LIMIT: String(BODY_LIMIT),
  LUMEN_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
  LUMEN_WEBHOOK_RETRY_SCHEDULE: '300ms,300ms',
  LUMEN_WEBHOOK_TIMEOUT_MS: '2000',
};
const started = Date.now();

const children: Child[] = [];
let lumen: Child;
let ex: Exchanges;
let adminToken: string;

/** Requests Lumen posted to the partner's webhook receiver, as received. */
const webhooks: { raw: Buffer; headers: http.IncomingHttpHeaders; answered: number }[] = [];
/** The event whose deliveries the receiver refuses (500) until it is released: 'next' picks the next event to arrive. */
let refusedEvent: string | null = null;
let releaseRefused = false;
let receiver: http.Server;
let receiverUrl: string;
/** Requests Lumen made to the polling partner's endpoint (through Prism), as the partner saw them. */
const polls: { url: string; apiKey: string | undefined }[] = [];
let partnerEndpoint: http.Server;

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A valid IntakeRequest (2.5). */
function intake(protocolNumber: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    protocolNumber,
    assetType: 'POLE',
    requestedAt: '2026-03-14T09:30:00.000-03:00',
    requester: { name: 'Maria Aparecida dos Santos', phone: '+5511987654321' },
    lampType: 'LED',
    reasonCode: 'LAMPADA_APAGADA',
    address: { street: 'Rua Augusta', number: '1500', neighborhood: 'Consolação', reference: 'Em frente à padaria', latitude: -23.5573, longitude: -46.6602 },
    problem: { description: 'Lâmpada do poste apagada há três noites.', additionalNotes: 'Rua escura depois das 19h.' },
    ...over,
  };
}

async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  if (!existsSync(EXECUTABLE)) throw new Error(`${EXECUTABLE} is missing: run npm run build first`);
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();

  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const eventId = req.headers['x-lumen-event-id'] as string | undefined;
      if (refusedEvent === 'next' && eventId) refusedEvent = eventId;
      const answered = eventId === refusedEvent && !releaseRefused ? 500 : 204;
      webhooks.push({ raw: Buffer.concat(chunks), headers: req.headers, answered });
      res.writeHead(answered).end();
    });
  });
  receiverUrl = `${await listen(receiver)}/hooks/lumen`;

  // The polling partner: two valid requests, then nothing new. (An item that breaks the
  // contract would be the partner's violation, which Prism refuses to carry.)
  let served = false;
  partnerEndpoint = http.createServer((req, res) => {
    polls.push({ url: req.url ?? '', apiKey: req.headers['x-api-key'] as string | undefined });
    const items = served
      ? []
      : [
          intake('POLL-0001', { requestedAt: '2026-03-14T10:00:00.000Z' }),
          intake('POLL-0002', { requestedAt: '2026-03-14T10:00:01.000Z', address: { street: 'Avenida Paulista', number: 'S/N' } }),
        ];
    served = true;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items, nextSince: '2026-03-14T10:00:01.000Z', hasMore: false }));
  });
  const partnerBase = await listen(partnerEndpoint);

  expect((await runLumen(['migrate'], cwd, env)).code).toBe(0);
  adminToken = (await lumenJson(['admin-token', 'create', '--name', 'conformance'], cwd, env)).token as string;
  lumen = await startLumen(cwd, env);
  children.push(lumen);
  const [partnerStrict, partnerLax, adminStrict, adminLax, telemetryStrict, telemetryLax, pollingProxy, sandboxStrict, sandboxLax, open311Strict, open311Lax] = await Promise.all([
    startPrism('partner.yaml', lumen.base, true),
    startPrism('partner.yaml', lumen.base, false),
    startPrism('admin.yaml', lumen.base, true),
    startPrism('admin.yaml', lumen.base, false),
    startPrism('telemetry.yaml', lumen.base, true),
    startPrism('telemetry.yaml', lumen.base, false),
    startPrism('partner-polling.yaml', partnerBase, true),
    startPrism('sandbox.yaml', lumen.base, true),
    startPrism('sandbox.yaml', lumen.base, false),
    startPrism('open311.yaml', lumen.base, true),
    startPrism('open311.yaml', lumen.base, false),
  ]);
  children.push(partnerStrict, partnerLax, adminStrict, adminLax, telemetryStrict, telemetryLax, pollingProxy, sandboxStrict, sandboxLax, open311Strict, open311Lax);
  pollingUrl = `${pollingProxy.base}/lumen/requests`;
  ex = new Exchanges({
    partner: { strict: partnerStrict.base, lax: partnerLax.base, lumen: lumen.base },
    admin: { strict: adminStrict.base, lax: adminLax.base, lumen: lumen.base },
    telemetry: { strict: telemetryStrict.base, lax: telemetryLax.base, lumen: lumen.base },
    sandbox: { strict: sandboxStrict.base, lax: sandboxLax.base, lumen: lumen.base },
    open311: { strict: open311Strict.base, lax: open311Lax.base, lumen: lumen.base },
  });
}, 120_000);

afterAll(async () => {
  for (const c of children.reverse()) await c.stop().catch((err: unknown) => process.stderr.write(`${String(err)}\n`));
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  await new Promise<void>((resolve) => (partnerEndpoint ? partnerEndpoint.close(() => resolve()) : resolve()));
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
  rmSync(cwd, { recursive: true, force: true });
}, 60_000);

let pollingUrl: string;
const bearer = () => ({ authorization: `Bearer ${adminToken}` });

/** What the scenarios build up and later steps use. */
const s = {
  auto: { tenantId: '', teamId: '' },
  manual: { tenantId: '' },
  hook: { code: 'conf-webhook', apiKey: '' },
  poll: { code: 'conf-polling', apiKey: '' },
  reader: { code: 'conf-reader', apiKey: '' },
  writer: { code: 'conf-writer', apiKey: '' },
  telemetryKey: '',
  autoOrderId: '',
  autoOrder2Id: '',
  pendingAlerts: [] as string[],
  manualOrderId: '',
};

describe('dist/lumen conforms to its published documents (through Prism)', { timeout: 120_000 }, () => {
  it('the harness notices an answer that breaks the document (a stand-in upstream that omits required fields)', async () => {
    const liar = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok","serverTime":"yesterday"}'));
    const liarBase = await listen(liar);
    const prism = await startPrism('partner.yaml', liarBase, true);
    try {
      const res = await fetch(`${prism.base}/api/external/health`, { headers: { 'x-api-key': 'any' } });
      const violations = JSON.parse(res.headers.get('sl-violations') ?? '[]') as { location: string[] }[];
      await res.text();
      expect(res.status).toBe(500);
      expect(violations.filter((v) => v.location[0] === 'response').length).toBeGreaterThan(0);
    } finally {
      await prism.stop();
      await new Promise<void>((resolve) => liar.close(() => resolve()));
    }
  });

  it('admin: tenants, teams and partners, with 401, 404 and 409', async () => {
    s.auto.tenantId = (await lumenJson(['tenant', 'create', '--name', 'Cidade Automática', '--ibge', '3550308'], cwd, env)).id as string;
    s.manual.tenantId = (await lumenJson(['tenant', 'create', '--name', 'Cidade Manual', '--intake', 'manual'], cwd, env)).id as string;
    const csv = path.join(cwd, 'poles.csv');
    writeFileSync(csv, ['code,address,neighborhood,latitude,longitude,active,device_identifier', 'P-1,"Rua Augusta, 1500",Consolação,-23.5573,-46.6602,true,TG-1', 'P-2,"Rua Augusta, 1600",Consolação,-23.5580,-46.6610,true,TG-2', 'P-3,"Rua Frei Caneca, 569",Consolação,-23.5530,-46.6540,false,'].join('\n'));
    expect((await runLumen(['pole', 'import', '--tenant', s.auto.tenantId, csv], cwd, env)).code).toBe(0);
    s.telemetryKey = (await lumenJson(['telemetry', 'key', 'create', '--tenant', s.auto.tenantId], cwd, env)).apiKey as string;

    await ex.strict('admin', { operationId: 'listTenants', method: 'GET', path: '/api/admin/tenants', headers: bearer(), expect: 200 });
    await ex.lax('admin', { operationId: 'listTenants', method: 'GET', path: '/api/admin/tenants', expect: 401, problem: 'invalid-admin-token' });
    await ex.strict('admin', { operationId: 'listTenants', method: 'GET', path: '/api/admin/tenants', headers: { authorization: 'Bearer lmn_adm_not-a-token' }, expect: 401, problem: 'invalid-admin-token' });
    await ex.strict('admin', { operationId: 'getTenant', method: 'GET', path: `/api/admin/tenants/${s.auto.tenantId}`, headers: { ...bearer(), 'accept-language': 'en' }, expect: 200 });
    await ex.strict('admin', { operationId: 'getTenant', method: 'GET', path: `/api/admin/tenants/${randomUUID()}`, headers: bearer(), expect: 404, problem: 'not-found' });
    await ex.lax('admin', { operationId: 'getTenant', method: 'GET', path: '/api/admin/tenants/not-a-uuid', headers: bearer(), expect: 400, problem: 'invalid-parameter' });
    await ex.strict('admin', { operationId: 'setTenantIntakePolicy', method: 'PUT', path: `/api/admin/tenants/${s.auto.tenantId}/intake-policy`, headers: bearer(), body: { intakePolicy: 'automatic' }, expect: 200 });
    await ex.strict('admin', { operationId: 'setTenantIntakePolicy', method: 'PUT', path: `/api/admin/tenants/${randomUUID()}/intake-policy`, headers: bearer(), body: { intakePolicy: 'manual' }, expect: 404 });
    await ex.lax('admin', { operationId: 'setTenantIntakePolicy', method: 'PUT', path: `/api/admin/tenants/${s.auto.tenantId}/intake-policy`, headers: bearer(), body: { intakePolicy: 'sometimes' }, expect: 422, problem: 'validation-failed' });
    await ex.lax('admin', { operationId: 'setTenantIntakePolicy', method: 'PUT', path: `/api/admin/tenants/${s.auto.tenantId}/intake-policy`, headers: { ...bearer(), 'content-type': 'text/plain' }, body: 'automatic', expect: 415 });
    await ex.direct('admin', { operationId: 'setTenantIntakePolicy', method: 'PUT', path: `/api/admin/tenants/${s.auto.tenantId}/intake-policy`, headers: bearer(), body: '{"intakePolicy":', expect: 400, problem: 'malformed-json' });

    s.auto.teamId = (await ex.strict('admin', { operationId: 'createTeam', method: 'POST', path: '/api/admin/teams', headers: bearer(), body: { tenantId: s.auto.tenantId, name: 'Equipe Centro 03' }, expect: 201 })).body.id;
    await ex.strict('admin', { operationId: 'createTeam', method: 'POST', path: '/api/admin/teams', headers: bearer(), body: { tenantId: s.auto.tenantId, name: 'Equipe Centro 03' }, expect: 409 });
    await ex.strict('admin', { operationId: 'createTeam', method: 'POST', path: '/api/admin/teams', headers: bearer(), body: { tenantId: s.manual.tenantId, name: 'Equipe Norte' }, expect: 201 });
    await ex.lax('admin', { operationId: 'createTeam', method: 'POST', path: '/api/admin/teams', headers: bearer(), body: { tenantId: s.auto.tenantId }, expect: 422 });
    await ex.strict('admin', { operationId: 'listTeams', method: 'GET', path: `/api/admin/teams?tenantId=${s.auto.tenantId}`, headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'listTeams', method: 'GET', path: `/api/admin/teams?tenantId=${randomUUID()}`, headers: bearer(), expect: 404 });

    const created = async (code: string, body: Record<string, unknown>) =>
      (await ex.strict('admin', { operationId: 'createPartner', method: 'POST', path: '/api/admin/partners', headers: bearer(), body: { code, ...body }, expect: 201 })).body.apiKey as string;
    s.hook.apiKey = await created(s.hook.code, { tenantId: s.auto.tenantId, scopes: ['canCreateServiceOrders', 'canReadCityData', 'canManageIntegration'], transport: 'webhook', webhookUrl: receiverUrl, webhookSecret: WEBHOOK_SECRET });
    s.poll.apiKey = await created(s.poll.code, { tenantId: s.manual.tenantId, scopes: ['CanCreateServiceOrders', 'CanManageIntegration'], transport: 'polling', pollingUrl, pollingKey: 'partner-issued-key-0123456789', pollingIntervalSeconds: 180 });
    s.reader.apiKey = await created(s.reader.code, { tenantId: s.auto.tenantId, scopes: ['canReadCityData'] });
    // Polling transport (events pulled from /events), without an endpoint of its own to poll.
    s.writer.apiKey = await created(s.writer.code, { tenantId: s.manual.tenantId, scopes: ['canCreateAlerts'], transport: 'polling' });
    await ex.strict('admin', { operationId: 'createPartner', method: 'POST', path: '/api/admin/partners', headers: bearer(), body: { tenantId: s.auto.tenantId, code: s.hook.code, scopes: [] }, expect: 409 });
    await ex.strict('admin', { operationId: 'createPartner', method: 'POST', path: '/api/admin/partners', headers: bearer(), body: { tenantId: randomUUID(), code: 'conf-nowhere', scopes: [] }, expect: 404 });
    await ex.lax('admin', { operationId: 'createPartner', method: 'POST', path: '/api/admin/partners', headers: bearer(), body: { tenantId: s.auto.tenantId, code: '-bad code-', scopes: ['canFly'] }, expect: 422 });
    await ex.strict('admin', { operationId: 'listPartners', method: 'GET', path: `/api/admin/partners?tenantId=${s.auto.tenantId}`, headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'getPartner', method: 'GET', path: `/api/admin/partners/${s.hook.code}`, headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'getPartner', method: 'GET', path: '/api/admin/partners/conf-unknown', headers: bearer(), expect: 404 });
    await ex.strict('admin', { operationId: 'updatePartner', method: 'PATCH', path: `/api/admin/partners/${s.reader.code}`, headers: bearer(), body: { rateLimitPerMinute: 3 }, expect: 200 });
    await ex.strict('admin', { operationId: 'updatePartner', method: 'PATCH', path: '/api/admin/partners/conf-unknown', headers: bearer(), body: { enabled: true }, expect: 404 });
    await ex.lax('admin', { operationId: 'updatePartner', method: 'PATCH', path: `/api/admin/partners/${s.reader.code}`, headers: bearer(), body: {}, expect: 422 });
  });

  it('admin: tenants, operators, tokens and the console session, with 401, 403, 404, 409, 422 and 429', async () => {
    const campinas = (await ex.strict('admin', { operationId: 'createTenant', method: 'POST', path: '/api/admin/tenants', headers: bearer(), body: { name: 'Campinas', ibgeCode: '3509502', intakePolicy: 'manual' }, expect: 201 })).body.id as string;
    await ex.lax('admin', { operationId: 'createTenant', method: 'POST', path: '/api/admin/tenants', headers: bearer(), body: { name: '' }, expect: 422 });
    const password = 'correct horse battery staple';
    const ana = (await ex.strict('admin', { operationId: 'createOperator', method: 'POST', path: '/api/admin/operators', headers: bearer(), body: { email: 'ana@campinas.example', name: 'Ana', grants: [{ tenantId: campinas, role: 'triager' }], password }, expect: 201 })).body.operator.id as string;
    await ex.strict('admin', { operationId: 'createOperator', method: 'POST', path: '/api/admin/operators', headers: bearer(), body: { email: 'ana@campinas.example', name: 'Ana' }, expect: 409 });
    await ex.strict('admin', { operationId: 'createOperator', method: 'POST', path: '/api/admin/operators', headers: bearer(), body: { email: 'not-an-email', name: 'X' }, expect: 422 });
    const bia = (await ex.strict('admin', { operationId: 'createOperator', method: 'POST', path: '/api/admin/operators', headers: bearer(), body: { email: 'bia@campinas.example', name: 'Bia' }, expect: 201 })).body;
    expect(bia.initialPassword).toEqual(expect.any(String));
    await ex.strict('admin', { operationId: 'listOperators', method: 'GET', path: '/api/admin/operators', headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'getOperator', method: 'GET', path: `/api/admin/operators/${ana}`, headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'getOperator', method: 'GET', path: `/api/admin/operators/${randomUUID()}`, headers: bearer(), expect: 404 });
    await ex.strict('admin', { operationId: 'grantOperatorRole', method: 'PUT', path: `/api/admin/operators/${bia.operator.id}/grants/${campinas}`, headers: bearer(), body: { role: 'viewer' }, expect: 200 });
    await ex.lax('admin', { operationId: 'grantOperatorRole', method: 'PUT', path: `/api/admin/operators/${bia.operator.id}/grants/${campinas}`, headers: bearer(), body: { role: 'boss' }, expect: 422 });
    await ex.strict('admin', { operationId: 'revokeOperatorRole', method: 'DELETE', path: `/api/admin/operators/${bia.operator.id}/grants/${campinas}`, headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'disableOperator', method: 'POST', path: `/api/admin/operators/${bia.operator.id}/disable`, headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'enableOperator', method: 'POST', path: `/api/admin/operators/${bia.operator.id}/enable`, headers: bearer(), expect: 200 });
    const reset = await ex.strict('admin', { operationId: 'resetOperatorPassword', method: 'POST', path: `/api/admin/operators/${bia.operator.id}/reset-password`, headers: bearer(), expect: 200 });
    expect(reset.body.password).toEqual(expect.any(String));
    await ex.strict('admin', { operationId: 'resetOperatorPassword', method: 'POST', path: `/api/admin/operators/${randomUUID()}/reset-password`, headers: bearer(), expect: 404 });

    const token = (await ex.strict('admin', { operationId: 'createAdminToken', method: 'POST', path: '/api/admin/admin-tokens', headers: bearer(), body: { name: 'campinas-reader', service: true, grants: [{ tenantId: campinas, role: 'viewer' }], expiresAt: '2099-01-01T00:00:00.000Z' }, expect: 201 })).body;
    await ex.strict('admin', { operationId: 'createAdminToken', method: 'POST', path: '/api/admin/admin-tokens', headers: bearer(), body: { name: 'nowhere', service: true, grants: [{ tenantId: randomUUID(), role: 'viewer' }] }, expect: 422 });
    const reader = { authorization: `Bearer ${token.token as string}` };
    await ex.strict('admin', { operationId: 'listAdminTokens', method: 'GET', path: '/api/admin/admin-tokens', headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'listOperators', method: 'GET', path: '/api/admin/operators', headers: reader, expect: 403, problem: 'forbidden' });
    await ex.strict('admin', { operationId: 'getTenant', method: 'GET', path: `/api/admin/tenants/${s.auto.tenantId}`, headers: reader, expect: 404, problem: 'not-found' });
    await ex.strict('admin', { operationId: 'revokeAdminToken', method: 'POST', path: `/api/admin/admin-tokens/${token.id as string}/revoke`, headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'revokeAdminToken', method: 'POST', path: `/api/admin/admin-tokens/${randomUUID()}/revoke`, headers: bearer(), expect: 404 });

    // The console's session, straight to Lumen (the cookie and Origin are Lumen's own).
    await ex.direct('admin', { operationId: 'createSession', method: 'POST', path: '/api/admin/session', body: { email: 'ana@campinas.example', password: 'not the password' }, expect: 401, problem: 'invalid-credentials' });
    const signedIn = await ex.direct('admin', { operationId: 'createSession', method: 'POST', path: '/api/admin/session', body: { email: 'ana@campinas.example', password }, expect: 200 });
    const cookie = { cookie: signedIn.headers.get('set-cookie')!.split(';')[0]!, origin: lumen.base };
    await ex.direct('admin', { operationId: 'getSession', method: 'GET', path: '/api/admin/session', headers: cookie, expect: 200 });
    await ex.direct('admin', { operationId: 'getSession', method: 'GET', path: '/api/admin/session', expect: 401 });
    const csrf = { ...cookie, 'x-csrf-token': signedIn.body.csrfToken as string };
    await ex.direct('admin', { operationId: 'changeSessionPassword', method: 'POST', path: '/api/admin/session/password', headers: csrf, body: { currentPassword: 'not the password', newPassword: 'a brand new password' }, expect: 422 });
    await ex.direct('admin', { operationId: 'changeSessionPassword', method: 'POST', path: '/api/admin/session/password', headers: csrf, body: { currentPassword: password, newPassword: 'a brand new password' }, expect: 204 });
    await ex.direct('admin', { operationId: 'deleteSession', method: 'DELETE', path: '/api/admin/session', headers: cookie, expect: 403, problem: 'csrf-failed' });
    await ex.direct('admin', { operationId: 'deleteSession', method: 'DELETE', path: '/api/admin/session', headers: { ...cookie, 'x-csrf-token': signedIn.body.csrfToken as string }, expect: 204 });
    // The sign-in above cleared this e-mail's failures; the wrong current password was one: four more, then 429 even with the right password.
    for (let i = 0; i < 4; i++) await ex.direct('admin', { operationId: 'createSession', method: 'POST', path: '/api/admin/session', body: { email: 'ana@campinas.example', password: `wrong ${i}` }, expect: 401 });
    await ex.direct('admin', { operationId: 'createSession', method: 'POST', path: '/api/admin/session', body: { email: 'ana@campinas.example', password: 'a brand new password' }, expect: 429, problem: 'rate-limited' });
  });

  it('partner: health with 200, 401, 403 (disabled) and 429', async () => {
    await ex.strict('partner', { operationId: 'getHealth', method: 'GET', path: '/api/external/health', headers: { 'x-api-key': s.hook.apiKey }, expect: 200 });
    await ex.strict('partner', { operationId: 'getHealth', method: 'GET', path: '/api/external/health', headers: { 'x-api-key': s.poll.apiKey, 'accept-language': 'en-US,en;q=0.9' }, expect: 200 });
    await ex.strict('partner', { operationId: 'getHealth', method: 'GET', path: '/api/external/health', headers: { 'x-api-key': 'lmn_test_unknown' }, expect: 401, problem: 'unauthorized' });
    await ex.lax('partner', { operationId: 'getHealth', method: 'GET', path: '/api/external/health', expect: 401, problem: 'unauthorized' });
    await ex.lax('partner', { operationId: 'getHealth', method: 'GET', path: '/api/external/health?verbose=1', headers: { 'x-api-key': s.hook.apiKey }, expect: 400, problem: 'invalid-parameter' });
    await ex.strict('admin', { operationId: 'updatePartner', method: 'PATCH', path: `/api/admin/partners/${s.writer.code}`, headers: bearer(), body: { enabled: false }, expect: 200 });
    await ex.strict('partner', { operationId: 'getHealth', method: 'GET', path: '/api/external/health', headers: { 'x-api-key': s.writer.apiKey }, expect: 403, problem: 'partner-disabled' });
    await ex.strict('partner', { operationId: 'listEvents', method: 'GET', path: '/api/external/events', headers: { 'x-api-key': s.writer.apiKey }, expect: 403, problem: 'partner-disabled' });
    await ex.strict('admin', { operationId: 'updatePartner', method: 'PATCH', path: `/api/admin/partners/${s.writer.code}`, headers: bearer(), body: { enabled: true }, expect: 200 });
    // The reader's quota is 3 a minute (fixed windows): spend it, well inside one window.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 10_000) await new Promise((r) => setTimeout(r, left + 200));
    const statuses: number[] = [];
    for (let i = 0; i < 4 && !statuses.includes(429); i++) {
      const res = await fetch(`${lumen.base}/api/external/health`, { headers: { 'x-api-key': s.reader.apiKey } });
      statuses.push(res.status);
    }
    await ex.strict('partner', { operationId: 'getHealth', method: 'GET', path: '/api/external/health', headers: { 'x-api-key': s.reader.apiKey }, expect: 429, problem: 'rate-limited' });
    await ex.strict('partner', { operationId: 'listPoles', method: 'GET', path: '/api/external/poles', headers: { 'x-api-key': s.reader.apiKey }, expect: 429, problem: 'rate-limited' });
    await ex.strict('admin', { operationId: 'updatePartner', method: 'PATCH', path: `/api/admin/partners/${s.reader.code}`, headers: bearer(), body: { rateLimitPerMinute: null }, expect: 200 });
  });

  it('partner: intake in both modes, replays, resends and every refusal', async () => {
    const post = (mode: 'strict' | 'lax' | 'direct', apiKey: string | null, body: unknown, expectStatus: number, extra: Record<string, string> = {}, problem?: string) =>
      ex[mode]('partner', { operationId: 'createServiceOrder', method: 'POST', path: '/api/external/service-orders', headers: { ...(apiKey ? { 'x-api-key': apiKey } : {}), ...extra }, body, expect: expectStatus, ...(problem ? { problem } : {}) });
    const photo = { type: 'photo', contentBase64: JPEG.toString('base64'), filename: 'foto-1.jpg', contentType: 'image/jpeg' };

    const key = randomUUID();
    const automatic = await post('strict', s.hook.apiKey, intake('CONF-0001', { attachments: [photo] }), 201, { 'idempotency-key': key });
    expect(automatic.body).toMatchObject({ status: 'OPEN', alert: { status: 'Linked' } });
    s.autoOrderId = automatic.body.id;
    const replay = await post('strict', s.hook.apiKey, intake('CONF-0001', { attachments: [photo] }), 200, { 'idempotency-key': `"${key}"` });
    expect(replay.text).toBe(automatic.text);
    await post('strict', s.hook.apiKey, intake('CONF-0001', { lampType: 'Sodio' }), 422, { 'idempotency-key': key }, 'idempotency-key-reused');
    const resend = await post('strict', s.hook.apiKey, intake('CONF-0001', { problem: { description: 'Continua apagada.' } }), 200);
    // Reading one object: the request by its protocol, the order by id and by number.
    const read = await ex.strict('partner', { operationId: 'getRequest', method: 'GET', path: '/api/external/requests/CONF-0001', headers: { 'x-api-key': s.hook.apiKey }, expect: 200 });
    expect(read.body).toMatchObject({ protocolNumber: 'CONF-0001', status: 'OPEN' });
    await ex.strict('partner', { operationId: 'getRequest', method: 'GET', path: '/api/external/requests/NEVER-SENT', headers: { 'x-api-key': s.hook.apiKey }, expect: 404, problem: 'not-found' });
    await ex.strict('partner', { operationId: 'getServiceOrder', method: 'GET', path: `/api/external/service-orders/${s.autoOrderId}`, headers: { 'x-api-key': s.hook.apiKey }, expect: 200 });
    await ex.strict('partner', { operationId: 'getServiceOrder', method: 'GET', path: `/api/external/service-orders/${automatic.body.internalProtocol as string}`, headers: { 'x-api-key': s.hook.apiKey }, expect: 200 });
    await ex.strict('partner', { operationId: 'getServiceOrder', method: 'GET', path: '/api/external/service-orders/OS-2026-99999', headers: { 'x-api-key': s.hook.apiKey }, expect: 404, problem: 'not-found' });
    expect(resend.body.alert.description).toBe('Continua apagada.');
    s.autoOrder2Id = (await post('strict', s.hook.apiKey, intake('CONF-0002', { address: { street: 'Rua Augusta', number: '1600' } }), 201)).body.id;
    await post('strict', s.hook.apiKey, intake('CONF-0003', { attachments: [{ type: 'photo', url: 'https://127.0.0.1:1/foto.jpg', contentType: 'image/png' }] }), 201, { 'accept-language': 'en' });

    // Manual triage: a key with only canCreateAlerts always waits for an operator.
    const manual = await post('strict', s.writer.apiKey, intake('CONF-M-0001'), 201);
    expect(manual.body).toMatchObject({ status: 'RECEIVED', alert: { status: 'Pending' } });
    expect(manual.body.internalProtocol).toBeUndefined();
    s.pendingAlerts.push(manual.body.alert.id);
    s.pendingAlerts.push((await post('strict', s.writer.apiKey, intake('CONF-M-0002', { address: { street: 'Rua Sem Coordenadas' } }), 201)).body.alert.id);

    // The key's form is in the document now (a UUID): a bad one breaks it on purpose.
    await post('lax', s.hook.apiKey, intake('CONF-0004'), 400, { 'idempotency-key': 'not-a-uuid' }, 'invalid-idempotency-key');
    // So does an unknown property: request bodies are closed.
    await post('lax', s.hook.apiKey, intake('CONF-0004', { reasonCod: 'LAMPADA_APAGADA' }), 422, {}, 'validation-failed');
    await post('direct', s.hook.apiKey, '{"protocolNumber": "CONF-0005",', 400, {}, 'malformed-json');
    await post('lax', null, intake('CONF-0006'), 401, {}, 'unauthorized');
    await post('strict', 'lmn_test_unknown', intake('CONF-0006'), 401, {}, 'unauthorized');
    await post('strict', s.reader.apiKey, intake('CONF-0006'), 403, {}, 'forbidden');
    const big = intake('CONF-0007', { attachments: Array.from({ length: 10 }, (_, i) => ({ ...photo, filename: `f${i}.jpg`, contentBase64: randomBytes(24 * 1024).toString('base64') })) });
    await post('strict', s.hook.apiKey, big, 413, {}, 'payload-too-large');
    await post('lax', s.hook.apiKey, JSON.stringify(intake('CONF-0008')), 415, { 'content-type': 'text/plain' }, 'unsupported-media-type');
    await post('lax', s.hook.apiKey, intake('CONF-0009', { assetType: 'TREE', requester: {} }), 422, {}, 'validation-failed');
    await post('lax', s.hook.apiKey, { ...intake('CONF-0010'), attachments: [{ type: 'photo', url: 'https://x.example/a.jpg', contentBase64: 'AAAA', contentType: 'image/gif' }] }, 422, {}, 'validation-failed');

    // 429: the canCreateAlerts partner gets a quota of 2 a minute for a moment (well inside one fixed window).
    await ex.strict('admin', { operationId: 'updatePartner', method: 'PATCH', path: `/api/admin/partners/${s.writer.code}`, headers: bearer(), body: { rateLimitPerMinute: 2 }, expect: 200 });
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 10_000) await new Promise((r) => setTimeout(r, left + 200));
    for (let i = 0; i < 2; i++) await fetch(`${lumen.base}/api/external/health`, { headers: { 'x-api-key': s.writer.apiKey } });
    const limited = await post('strict', s.writer.apiKey, intake('CONF-M-0429'), 429, {}, 'rate-limited');
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    await ex.strict('admin', { operationId: 'updatePartner', method: 'PATCH', path: `/api/admin/partners/${s.writer.code}`, headers: bearer(), body: { rateLimitPerMinute: null }, expect: 200 });

    // A body sent one byte a second: 408 at the deadline (Prism would wait for the whole body first).
    const body = JSON.stringify(intake('CONF-0011'));
    const head = `POST /api/external/service-orders HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${s.hook.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    const slow = await rawExchange(Number(new URL(lumen.base).port), { pieces: [head, ...body.split('')], everyMs: 1000 }, BODY_TIMEOUT_MS + 10_000);
    const op = operationsOf('partner').get('createServiceOrder')!;
    const wrong = violation(op, { status: slow.status, headers: slow.headers, text: slow.body, body: JSON.parse(slow.body || 'null') });
    ex.records.push({ document: 'partner', operationId: 'createServiceOrder', mode: 'direct', method: 'POST', path: '/api/external/service-orders', status: slow.status, responseViolations: wrong ? [wrong] : [], requestViolations: [] });
    expect(wrong).toBeNull();
    expect(slow.status).toBe(408);
  });

  it('admin: triage and the service-order lifecycle, legal and illegal transitions', async () => {
    const post = (operationId: string, p: string, body: unknown, expectStatus: number, problem?: string) =>
      ex.strict('admin', { operationId, method: 'POST', path: p, headers: bearer(), body, expect: expectStatus, ...(problem ? { problem } : {}) });
    const [first, second] = s.pendingAlerts as [string, string];
    await ex.strict('admin', { operationId: 'listAlerts', method: 'GET', path: `/api/admin/alerts?tenantId=${s.manual.tenantId}&status=Pending&pageSize=10`, headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'listAlerts', method: 'GET', path: `/api/admin/alerts?tenantId=${s.manual.tenantId}&notGeolocated=true`, headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'listAlerts', method: 'GET', path: `/api/admin/alerts?tenantId=${s.manual.tenantId}&partnerReason=LAMPADA_APAGADA&sort=newest`, headers: bearer(), expect: 200 });
    await ex.lax('admin', { operationId: 'listAlerts', method: 'GET', path: `/api/admin/alerts?tenantId=${s.manual.tenantId}&status=Lost`, headers: bearer(), expect: 400 });
    await ex.strict('admin', { operationId: 'getAlert', method: 'GET', path: `/api/admin/alerts/${first}`, headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'getAlert', method: 'GET', path: `/api/admin/alerts/${randomUUID()}`, headers: bearer(), expect: 404 });
    await post('reclassifyAlert', `/api/admin/alerts/${first}/reclassify`, { reasonCode: 'EXTERNAL_OTHER' }, 200);
    await post('reclassifyAlert', `/api/admin/alerts/${randomUUID()}/reclassify`, { reasonCode: 'EXTERNAL_OTHER' }, 404);
    await ex.lax('admin', { operationId: 'reclassifyAlert', method: 'POST', path: `/api/admin/alerts/${first}/reclassify`, headers: bearer(), body: { reasonCode: 'not a code!' }, expect: 422 });
    // Far from the city (Manaus) it asks for a confirmation first; near it, it does not.
    await ex.strict('admin', { operationId: 'setTenantExtent', method: 'PUT', path: `/api/admin/tenants/${s.manual.tenantId}/extent`, headers: bearer(), body: { extent: { south: -24.01, west: -46.83, north: -23.35, east: -46.36 } }, expect: 200 });
    await ex.strict('admin', { operationId: 'setTenantExtent', method: 'PUT', path: `/api/admin/tenants/${randomUUID()}/extent`, headers: bearer(), body: { locationCheckMeters: 300 }, expect: 404 });
    await ex.lax('admin', { operationId: 'setTenantExtent', method: 'PUT', path: `/api/admin/tenants/${s.manual.tenantId}/extent`, headers: bearer(), body: { extent: { south: 1, west: 1, north: 0, east: 2 } }, expect: 422 });
    await post('setAlertLocation', `/api/admin/alerts/${second}/set-location`, { latitude: -3.1316, longitude: -60.0233 }, 422, 'location-unconfirmed');
    await ex.strict('admin', { operationId: 'searchTenantPlaces', method: 'GET', path: `/api/admin/tenants/${s.manual.tenantId}/places?q=${encodeURIComponent('Rua Augusta, 1500')}`, headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'searchTenantPlaces', method: 'GET', path: `/api/admin/tenants/${randomUUID()}/places?q=MAO-1`, headers: bearer(), expect: 404 });
    await ex.lax('admin', { operationId: 'searchTenantPlaces', method: 'GET', path: `/api/admin/tenants/${s.manual.tenantId}/places`, headers: bearer(), expect: 400 });
    await post('setAlertLocation', `/api/admin/alerts/${second}/set-location`, { latitude: -23.5614, longitude: -46.6559 }, 200);
    await ex.lax('admin', { operationId: 'setAlertLocation', method: 'POST', path: `/api/admin/alerts/${second}/set-location`, headers: bearer(), body: { latitude: 91, longitude: 0 }, expect: 422 });

    const teamNorte = (await ex.strict('admin', { operationId: 'listTeams', method: 'GET', path: `/api/admin/teams?tenantId=${s.manual.tenantId}`, headers: bearer(), expect: 200 })).body.items[0].id as string;
    const order = await post('createOrderFromAlert', `/api/admin/alerts/${first}/create-order`, { teamId: teamNorte }, 201);
    s.manualOrderId = order.body.id;
    await post('createOrderFromAlert', `/api/admin/alerts/${first}/create-order`, {}, 409, 'invalid-transition');
    await post('createOrderFromAlert', `/api/admin/alerts/${randomUUID()}/create-order`, {}, 404);
    await post('linkAlert', `/api/admin/alerts/${second}/link`, { serviceOrderId: randomUUID() }, 422, 'validation-failed');
    await post('linkAlert', `/api/admin/alerts/${randomUUID()}/link`, { serviceOrderId: randomUUID() }, 404);
    await post('linkAlert', `/api/admin/alerts/${second}/link`, { serviceOrderId: s.manualOrderId }, 200);
    await post('linkAlert', `/api/admin/alerts/${second}/link`, { serviceOrderId: s.manualOrderId }, 409, 'invalid-transition');
    await post('discardAlert', `/api/admin/alerts/${second}/discard`, { reason: 'duplicada' }, 409, 'invalid-transition');

    await ex.strict('admin', { operationId: 'getServiceOrder', method: 'GET', path: `/api/admin/service-orders/${s.manualOrderId}`, headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'getServiceOrder', method: 'GET', path: `/api/admin/service-orders/${randomUUID()}`, headers: bearer(), expect: 404 });
    await post('startServiceOrder', `/api/admin/service-orders/${s.manualOrderId}/start`, {}, 200);
    await post('startServiceOrder', `/api/admin/service-orders/${s.manualOrderId}/start`, { note: 'de novo' }, 409, 'invalid-transition');
    await post('completeServiceOrder', `/api/admin/service-orders/${s.manualOrderId}/complete`, { note: 'lâmpada trocada' }, 200);
    await post('completeServiceOrder', `/api/admin/service-orders/${s.manualOrderId}/complete`, {}, 409, 'invalid-transition');
    await post('cancelServiceOrder', `/api/admin/service-orders/${s.manualOrderId}/cancel`, { reason: 'tarde demais' }, 409, 'invalid-transition');
    await post('assignServiceOrder', `/api/admin/service-orders/${s.manualOrderId}/assign`, { teamId: teamNorte }, 409, 'invalid-transition');
    await post('assignServiceOrder', `/api/admin/service-orders/${randomUUID()}/assign`, { teamId: teamNorte }, 404);
    await ex.lax('admin', { operationId: 'assignServiceOrder', method: 'POST', path: `/api/admin/service-orders/${s.manualOrderId}/assign`, headers: bearer(), body: { note: 'sem equipe' }, expect: 422 });

    // A third manual alert, discarded: Alert.Cancelled.
    const third = await ex.strict('partner', { operationId: 'createServiceOrder', method: 'POST', path: '/api/external/service-orders', headers: { 'x-api-key': s.writer.apiKey }, body: intake('CONF-M-0003'), expect: 201 });
    await post('discardAlert', `/api/admin/alerts/${third.body.alert.id}/discard`, { reason: 'duplicada' }, 200);
    await post('discardAlert', `/api/admin/alerts/${third.body.alert.id}/discard`, {}, 409, 'invalid-transition');
    await post('reclassifyAlert', `/api/admin/alerts/${third.body.alert.id}/reclassify`, { reasonCode: 'EXTERNAL_OTHER' }, 409, 'invalid-transition');
    await post('setAlertLocation', `/api/admin/alerts/${third.body.alert.id}/set-location`, { latitude: 0, longitude: 0 }, 409, 'invalid-transition');

    // Triage at volume: two more manual alerts, reclassified, then one order for both; a
    // batch with a Linked alert is 409, with an unknown id 422, in an unknown city 404.
    const more: string[] = [];
    for (const n of ['CONF-M-0004', 'CONF-M-0005'])
      more.push((await ex.strict('partner', { operationId: 'createServiceOrder', method: 'POST', path: '/api/external/service-orders', headers: { 'x-api-key': s.writer.apiKey }, body: intake(n), expect: 201 })).body.alert.id as string);
    const tenantId = s.manual.tenantId as string;
    await post('bulkTriageAlerts', '/api/admin/alerts/bulk', { tenantId, alertIds: more, action: 'reclassify', reasonCode: 'EXTERNAL_OTHER' }, 200);
    await post('bulkTriageAlerts', '/api/admin/alerts/bulk', { tenantId, alertIds: [...more, randomUUID()], action: 'discard', note: 'duplicadas' }, 422, 'bulk-unknown-alerts');
    await post('bulkTriageAlerts', '/api/admin/alerts/bulk', { tenantId, alertIds: more, action: 'discard' }, 422, 'validation-failed');
    await post('bulkTriageAlerts', '/api/admin/alerts/bulk', { tenantId: randomUUID(), alertIds: more, action: 'discard', note: 'duplicadas' }, 404);
    const bulkOrder = await post('bulkTriageAlerts', '/api/admin/alerts/bulk', { tenantId, alertIds: more, action: 'create-order', teamId: teamNorte }, 200);
    expect(bulkOrder.body.handled).toBe(2);
    await post('bulkTriageAlerts', '/api/admin/alerts/bulk', { tenantId, alertIds: more, action: 'link', serviceOrderId: bulkOrder.body.serviceOrder.number }, 409, 'bulk-refused');
    await ex.lax('admin', { operationId: 'bulkTriageAlerts', method: 'POST', path: '/api/admin/alerts/bulk', headers: bearer(), body: { tenantId, alertIds: [], action: 'discard', note: 'x' }, expect: 422 });

    // The webhook partner's orders: the first event fails at the receiver until dead, the rest go through.
    refusedEvent = 'next';
    await post('assignServiceOrder', `/api/admin/service-orders/${s.autoOrderId}/assign`, { teamId: s.auto.teamId, note: 'equipe do centro' }, 200);
    await post('startServiceOrder', `/api/admin/service-orders/${s.autoOrderId}/start`, {}, 200);
    await post('completeServiceOrder', `/api/admin/service-orders/${s.autoOrderId}/complete`, {}, 200);
    await post('cancelServiceOrder', `/api/admin/service-orders/${s.autoOrder2Id}/cancel`, { reason: 'duplicada' }, 200);
    await ex.strict('admin', { operationId: 'listAuditEntries', method: 'GET', path: `/api/admin/audit?tenantId=${s.manual.tenantId}&limit=50`, headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'listAuditEntries', method: 'GET', path: `/api/admin/audit?entityType=service_order&entityId=${s.autoOrderId}`, headers: bearer(), expect: 200 });
    const audit = await ex.strict('admin', { operationId: 'listAuditEntries', method: 'GET', path: `/api/admin/audit?tenantId=${s.manual.tenantId}&actor=admin-token&since=2020-01-01T00:00:00Z&until=2099-01-01T00:00:00Z`, headers: bearer(), expect: 200 });
    expect(audit.body.items.length).toBeGreaterThan(0);
    await ex.lax('admin', { operationId: 'listAuditEntries', method: 'GET', path: '/api/admin/audit?until=tomorrow', headers: bearer(), expect: 400 });
  });

  it('admin: the working day (order list, inbox by number, timelines, reasons and mappings, poles and a pole by code, duplicates, attention, queues)', async () => {
    const get = (operationId: string, p: string, expectStatus: number, problem?: string) => ex.strict('admin', { operationId, method: 'GET', path: p, headers: bearer(), expect: expectStatus, ...(problem ? { problem } : {}) });
    const post = (operationId: string, p: string, body: unknown, expectStatus: number, method = 'POST') => ex.strict('admin', { operationId, method, path: p, headers: bearer(), body, expect: expectStatus });
    const tenant = s.manual.tenantId;
    await get('listServiceOrders', `/api/admin/service-orders?tenantId=${tenant}&status=OPEN,ASSIGNED,IN_PROGRESS,COMPLETED&sort=priority&limit=2`, 200);
    await get('listServiceOrders', `/api/admin/service-orders?tenantId=${randomUUID()}`, 200);
    await ex.lax('admin', { operationId: 'listServiceOrders', method: 'GET', path: '/api/admin/service-orders?sort=sideways', headers: bearer(), expect: 400 });
    await get('getTenantAttention', `/api/admin/tenants/${tenant}/attention`, 200);
    await get('getTenantAttention', `/api/admin/tenants/${randomUUID()}/attention`, 404);
    const since = new Date(Date.now() - 7 * 86_400_000).toISOString();
    const report = await get('getTenantReport', `/api/admin/tenants/${tenant}/report?from=${since}`, 200);
    expect(report.body.backlog).toBeDefined();
    await get('getTenantReport', `/api/admin/tenants/${randomUUID()}/report`, 404);
    await ex.lax('admin', { operationId: 'getTenantReport', method: 'GET', path: `/api/admin/tenants/${tenant}/report?from=yesterday`, headers: bearer(), expect: 400 });
    for (const [operationId, kind, query] of [
      ['exportServiceOrders', 'service-orders', `openedAfter=${since}`],
      ['exportAlerts', 'alerts', `status=Pending,Linked,Resolved,Cancelled&from=${since}`],
      ['exportAuditEntries', 'audit', `from=${since}`],
    ] as const) {
      const csv = await get(operationId, `/api/admin/tenants/${tenant}/exports/${kind}?${query}`, 200);
      expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
      expect(csv.text.split(/\r?\n/).filter(Boolean).length, operationId).toBeGreaterThan(1);
      await get(operationId, `/api/admin/tenants/${randomUUID()}/exports/${kind}`, 404);
    }
    const inbox = await get('listAlerts', `/api/admin/alerts?tenantId=${tenant}&sort=priority&text=CONF`, 200);
    const number = inbox.body.items[0].alertNumber as number;
    await get('getAlert', `/api/admin/alerts/${number}?tenantId=${tenant}`, 200);
    await get('getAlertTimeline', `/api/admin/alerts/${number}/timeline?tenantId=${tenant}`, 200);
    await get('getAlertTimeline', '/api/admin/alerts/99999999/timeline', 404);
    await get('getServiceOrderTimeline', `/api/admin/service-orders/${s.manualOrderId}/timeline`, 200);
    await get('getServiceOrderTimeline', '/api/admin/service-orders/OS-1999-99999/timeline', 404);
    await get('getAlertDuplicates', `/api/admin/alerts/${number}/duplicates?tenantId=${tenant}`, 200);
    await get('getAlertDuplicates', `/api/admin/alerts/${randomUUID()}/duplicates`, 404);
    await get('getAlertAttachment', `/api/admin/alerts/${number}/attachments/${randomUUID()}?tenantId=${tenant}&variant=thumbnail`, 404);
    await get('listMapPoles', `/api/admin/tenants/${tenant}/poles?near=-23.5573,-46.6602&radius=100`, 200);
    await get('listMapPoles', `/api/admin/tenants/${tenant}/poles?bbox=-23.6,-46.7,-23.5,-46.6&limit=10`, 200);
    await ex.lax('admin', { operationId: 'listMapPoles', method: 'GET', path: `/api/admin/tenants/${tenant}/poles`, headers: bearer(), expect: 400 });
    const pole = await get('getPole', `/api/admin/tenants/${s.auto.tenantId}/poles/P-1?states=20`, 200);
    expect(pole.body).toMatchObject({ code: 'P-1', telegestor: { identifier: 'TG-1' } });
    await get('getPole', `/api/admin/tenants/${s.auto.tenantId}/poles/P-404`, 404, 'not-found');
    // Another city's code is not found in this one, exactly like a code nobody has.
    await get('getPole', `/api/admin/tenants/${tenant}/poles/P-1`, 404, 'not-found');
    await get('getPole', `/api/admin/tenants/${randomUUID()}/poles/P-1`, 404, 'not-found');
    await ex.lax('admin', { operationId: 'getPole', method: 'GET', path: `/api/admin/tenants/${s.auto.tenantId}/poles/P-1?states=0`, headers: bearer(), expect: 400 });
    await post('setServiceOrderPole', `/api/admin/service-orders/${s.manualOrderId}/set-pole`, { poleId: null }, 409);
    await post('setServiceOrderPole', `/api/admin/service-orders/${randomUUID()}/set-pole`, { poleId: null }, 404);

    await get('listReasons', `/api/admin/tenants/${tenant}/reasons`, 200);
    await post('createReason', `/api/admin/tenants/${tenant}/reasons`, { code: 'POLE_DOWN', namePt: 'Poste caído', nameEn: 'Pole down', priority: 'Critical', slaHours: 4 }, 201);
    await post('createReason', `/api/admin/tenants/${tenant}/reasons`, { code: 'POLE_DOWN', namePt: 'Poste caído', nameEn: 'Pole down', priority: 'Critical', slaHours: 4 }, 409);
    await ex.lax('admin', { operationId: 'createReason', method: 'POST', path: `/api/admin/tenants/${tenant}/reasons`, headers: bearer(), body: { code: 'X' }, expect: 422 });
    await get('listPartnerReasonCodes', `/api/admin/partners/${s.writer.code}/reason-codes`, 200);
    await get('listPartnerReasonCodes', '/api/admin/partners/conf-unknown/reason-codes', 404);
    await post('mapPartnerReasonCode', `/api/admin/partners/${s.writer.code}/reason-codes/POSTE_CAIDO`, { reasonCode: 'POLE_DOWN' }, 200, 'PUT');
    await post('mapPartnerReasonCode', `/api/admin/partners/${s.writer.code}/reason-codes/POSTE_CAIDO`, { reasonCode: 'NOPE' }, 422, 'PUT');
    await post('applyPartnerReasonMapping', `/api/admin/partners/${s.writer.code}/reason-codes/POSTE_CAIDO/apply`, undefined, 200);
    await post('applyPartnerReasonMapping', `/api/admin/partners/${s.writer.code}/reason-codes/NEVER_MAPPED/apply`, undefined, 404);
    await post('unmapPartnerReasonCode', `/api/admin/partners/${s.writer.code}/reason-codes/POSTE_CAIDO`, undefined, 200, 'DELETE');
    await post('unmapPartnerReasonCode', '/api/admin/partners/conf-unknown/reason-codes/POSTE_CAIDO', undefined, 404, 'DELETE');

    await get('listAttachmentFailures', `/api/admin/tenants/${tenant}/attachment-failures?includeDismissed=true`, 200);
    await post('retryAttachmentFailure', `/api/admin/attachment-failures/${randomUUID()}/retry`, undefined, 404);
    await post('dismissAttachmentFailure', `/api/admin/attachment-failures/${randomUUID()}/dismiss`, undefined, 404);
    await post('retryRejectedInboundItem', `/api/admin/rejected-inbound-items/${randomUUID()}/retry`, undefined, 404);
    await post('dismissRejectedInboundItem', `/api/admin/rejected-inbound-items/${randomUUID()}/dismiss`, undefined, 404);
  });

  it('webhooks: every delivery Lumen sent matches the webhooks section; dead ones are redelivered through the admin API', async () => {
    // assign, start, complete of one order and the cancellation of another: 4 events; the first is refused 3 times.
    await until('four events delivered', async () => webhooks.filter((w) => w.answered === 204).length >= 3 && webhooks.filter((w) => w.answered === 500).length >= 3);
    const deliveries = await until('a dead delivery', async () => {
      const page = await ex.strict('admin', { operationId: 'listWebhookDeliveries', method: 'GET', path: `/api/admin/partners/${s.hook.code}/webhook-deliveries?status=dead`, headers: bearer(), expect: 200 });
      return page.body.deliveries.length > 0 ? (page.body.deliveries as { id: string; eventId: string }[]) : null;
    });
    await ex.strict('admin', { operationId: 'listWebhookDeliveries', method: 'GET', path: `/api/admin/partners/${s.hook.code}/webhook-deliveries?limit=20`, headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'listWebhookDeliveries', method: 'GET', path: '/api/admin/partners/conf-unknown/webhook-deliveries', headers: bearer(), expect: 404 });
    await ex.strict('admin', { operationId: 'getWebhookDelivery', method: 'GET', path: `/api/admin/webhook-deliveries/${deliveries[0]!.id}`, headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'getWebhookDelivery', method: 'GET', path: `/api/admin/webhook-deliveries/${randomUUID()}`, headers: bearer(), expect: 404 });
    expect(deliveries[0]!.eventId).toBe(refusedEvent);
    releaseRefused = true;
    const before = webhooks.length;
    const redelivery = await ex.strict('admin', { operationId: 'redeliverWebhook', method: 'POST', path: `/api/admin/webhook-deliveries/${deliveries[0]!.id}/redeliver`, headers: bearer(), expect: 201 });
    await ex.strict('admin', { operationId: 'redeliverWebhook', method: 'POST', path: `/api/admin/webhook-deliveries/${randomUUID()}/redeliver`, headers: bearer(), expect: 404 });
    await until('the redelivery', async () => webhooks.length > before);
    const redelivered = webhooks.at(-1)!;
    expect(redelivered.headers['x-lumen-event-id']).toBe(deliveries[0]!.eventId);
    expect(redelivered.headers['x-lumen-delivery-attempt']).toBe('1');
    await until('the redelivery to finish', async () => {
      const d = await ex.strict('admin', { operationId: 'getWebhookDelivery', method: 'GET', path: `/api/admin/webhook-deliveries/${redelivery.body.id}`, headers: bearer(), expect: 200 });
      return d.body.status === 'succeeded' || d.body.status === 'dead' ? d : null;
    });
    const settled = webhooks.length;
    const since = await ex.strict('admin', { operationId: 'redeliverWebhooksSince', method: 'POST', path: `/api/admin/partners/${s.hook.code}/webhook-deliveries/redeliver`, headers: bearer(), body: { since: new Date(started).toISOString() }, expect: 200 });
    expect(since.body.count).toBe(4);
    await ex.strict('admin', { operationId: 'redeliverWebhooksSince', method: 'POST', path: '/api/admin/partners/conf-unknown/webhook-deliveries/redeliver', headers: bearer(), body: { since: new Date(started).toISOString() }, expect: 404 });
    await ex.lax('admin', { operationId: 'redeliverWebhooksSince', method: 'POST', path: `/api/admin/partners/${s.hook.code}/webhook-deliveries/redeliver`, headers: bearer(), body: { since: 'yesterday' }, expect: 422 });
    await until('the redeliveries since T', async () => webhooks.length >= settled + 4);
    await ex.strict('admin', { operationId: 'redeliverDeadWebhooks', method: 'POST', path: `/api/admin/partners/${s.hook.code}/webhook-deliveries/redeliver-dead`, headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'redeliverDeadWebhooks', method: 'POST', path: '/api/admin/partners/conf-unknown/webhook-deliveries/redeliver-dead', headers: bearer(), expect: 404 });
    // A test event: the testPing webhook, signed like the others.
    const ping = await ex.strict('admin', { operationId: 'sendPartnerTestEvent', method: 'POST', path: `/api/admin/partners/${s.hook.code}/test-event`, headers: bearer(), expect: 202 });
    await ex.strict('admin', { operationId: 'sendPartnerTestEvent', method: 'POST', path: '/api/admin/partners/conf-unknown/test-event', headers: bearer(), expect: 404 });
    await ex.strict('admin', { operationId: 'sendPartnerTestEvent', method: 'POST', path: `/api/admin/partners/${s.poll.code}/test-event`, headers: bearer(), expect: 409 });
    await until('the Test.Ping', async () => webhooks.some((w) => w.headers['x-lumen-event-id'] === ping.body.eventId && w.answered === 204));

    // Every request received, checked against the webhooks section of partner.yaml (testPing for a Test.Ping).
    const doc = documentOf('partner');
    const problems: string[] = [];
    for (const [i, w] of webhooks.entries()) {
      const event = JSON.parse(w.raw.toString('utf8'));
      const name = event.eventType === 'Test.Ping' ? 'testPing' : 'serviceOrderEvent';
      const hook = doc.webhooks[name].post;
      const bodyErrors = schemaErrors('partner', `#/webhooks/${name}/post/requestBody/content/application~1json/schema`, event);
      if (bodyErrors) problems.push(`webhook ${i}: body: ${bodyErrors}`);
      if (!/^application\/json/.test(String(w.headers['content-type']))) problems.push(`webhook ${i}: content-type ${w.headers['content-type']}`);
      hook.parameters.forEach((p: { name: string; required: boolean; schema: { type: string } }, k: number) => {
        const raw = w.headers[p.name.toLowerCase()];
        if (raw === undefined) {
          if (p.required) problems.push(`webhook ${i}: header ${p.name} missing`);
          return;
        }
        const value = p.schema.type === 'integer' ? Number(raw) : raw;
        const err = schemaErrors('partner', `#/webhooks/${name}/post/parameters/${k}/schema`, value);
        if (err) problems.push(`webhook ${i}: header ${p.name}=${String(raw)}: ${err}`);
      });
      const signature = `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(w.raw).digest('hex')}`;
      if (w.headers['x-lumen-signature'] !== signature) problems.push(`webhook ${i}: signature does not verify`);
      // A partner created through the API signs with both schemes; its plain secret counts as whsec_ + base64 of it.
      try {
        new Webhook(`whsec_${Buffer.from(WEBHOOK_SECRET).toString('base64')}`).verify(w.raw.toString('utf8'), w.headers as Record<string, string>);
      } catch (err) {
        problems.push(`webhook ${i}: Standard Webhooks signature does not verify (${(err as Error).message})`);
      }
      if (w.headers['webhook-id'] !== event.eventId) problems.push(`webhook ${i}: webhook-id is not the eventId`);
      if (w.headers['x-lumen-event-id'] !== event.eventId || w.headers['x-lumen-event-type'] !== event.eventType) problems.push(`webhook ${i}: headers disagree with the body`);
    }
    expect(problems).toEqual([]);
    const refused = webhooks.filter((w) => w.headers['x-lumen-event-id'] === refusedEvent).map((w) => [Number(w.headers['x-lumen-delivery-attempt']), w.answered]);
    expect(refused.slice(0, 4)).toEqual([[1, 500], [2, 500], [3, 500], [1, 204]]);
    ex.records.push(
      ...webhooks.map((w) => ({ document: 'webhooks' as const, operationId: w.headers['x-lumen-event-type'] === 'Test.Ping' ? 'testPing' : 'serviceOrderEvent', mode: 'direct' as const, method: 'POST', path: '/hooks/lumen', status: w.answered, responseViolations: [], requestViolations: [] })),
    );
  });

  it('partner: events in polling mode and as the webhook partner\'s recovery path, with 400 and 429', async () => {
    const events = (mode: 'strict' | 'lax', apiKey: string, query: string, expectStatus: number, problem?: string) =>
      ex[mode]('partner', { operationId: 'listEvents', method: 'GET', path: `/api/external/events${query}`, headers: { 'x-api-key': apiKey }, expect: expectStatus, ...(problem ? { problem } : {}) });
    // The canCreateAlerts partner's requests were triaged: Created twice (create-order, link), Completed and Alert.Cancelled.
    const firstPage = await events('strict', s.writer.apiKey, '?limit=2', 200);
    expect(firstPage.body.events).toHaveLength(2);
    expect(firstPage.body.hasMore).toBe(true);
    const again = await events('strict', s.writer.apiKey, `?since=${encodeURIComponent(firstPage.body.nextSince)}&limit=200`, 200);
    expect(again.body.events.length).toBeGreaterThanOrEqual(2);
    expect(again.body.hasMore).toBe(false);
    const types = [...firstPage.body.events, ...again.body.events].map((e: { eventType: string }) => e.eventType);
    expect(types).toEqual(expect.arrayContaining(['ServiceOrder.Created', 'ServiceOrder.Completed', 'Alert.Cancelled']));
    await events('strict', s.writer.apiKey, `?since=${encodeURIComponent(again.body.nextSince)}`, 200);
    await events('lax', s.writer.apiKey, '?since=yesterday', 400, 'invalid-parameter');
    await events('lax', s.writer.apiKey, '?limit=0', 400, 'invalid-parameter');
    await events('strict', s.writer.apiKey, '?limit=5000', 200);
    await events('strict', 'lmn_test_unknown', '', 401, 'unauthorized');
    // Webhook mode: the same events, from the same endpoint.
    const recovery = await events('strict', s.hook.apiKey, '', 200);
    expect(recovery.body.events.map((e: { eventId: string }) => e.eventId)).toEqual(expect.arrayContaining([JSON.parse(webhooks[0]!.raw.toString()).eventId]));
    // A minimum interval: the last call found nothing more, so the next one within 60 s is 429.
    await ex.strict('admin', { operationId: 'updatePartner', method: 'PATCH', path: `/api/admin/partners/${s.writer.code}`, headers: bearer(), body: { eventsMinIntervalSeconds: 60 }, expect: 200 });
    await events('strict', s.writer.apiKey, '', 429, 'rate-limited');
  });

  it('partner: poles and service orders by page, cursor and updatedSince, with 400 and 403', async () => {
    for (const [operationId, p] of [
      ['listPoles', '/api/external/poles'],
      ['listServiceOrders', '/api/external/service-orders'],
    ] as const) {
      const list = (mode: 'strict' | 'lax', apiKey: string, query: string, expectStatus: number, problem?: string) =>
        ex[mode]('partner', { operationId, method: 'GET', path: `${p}${query}`, headers: { 'x-api-key': apiKey }, expect: expectStatus, ...(problem ? { problem } : {}) });
      const page1 = await list('strict', s.hook.apiKey, '?pageSize=1', 200);
      expect(page1.body.nextCursor).toEqual(expect.any(String));
      const page2 = await list('strict', s.hook.apiKey, `?cursor=${encodeURIComponent(page1.body.nextCursor)}&pageSize=1`, 200);
      await list('strict', s.hook.apiKey, '?page=2&pageSize=1', 200);
      await list('strict', s.hook.apiKey, `?updatedSince=${encodeURIComponent(page2.body.items[0]?.updatedAt ?? '2026-01-01T00:00:00.000Z')}&pageSize=5000`, 200);
      await list('strict', s.hook.apiKey, '?page=99', 200);
      await list('lax', s.hook.apiKey, '?page=0', 400, 'invalid-parameter');
      await list('lax', s.hook.apiKey, '?pageSize=abc', 400, 'invalid-parameter');
      await list('lax', s.hook.apiKey, '?updatedSince=yesterday', 400, 'invalid-parameter');
      await list('strict', s.hook.apiKey, '?cursor=bm90LWEtY3Vyc29y', 400, 'invalid-cursor');
      await list('strict', s.writer.apiKey, '', 403, 'forbidden');
      await list('strict', 'lmn_test_unknown', '', 401, 'unauthorized');
    }
  });

  it('partner polling: Lumen\'s calls to the partner\'s endpoint match partner-polling.yaml', async () => {
    await ex.strict('admin', { operationId: 'getPartnerPolling', method: 'GET', path: `/api/admin/partners/${s.poll.code}/polling`, headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'getPartnerPolling', method: 'GET', path: '/api/admin/partners/conf-unknown/polling', headers: bearer(), expect: 404 });
    await ex.strict('admin', { operationId: 'pollPartnerNow', method: 'POST', path: `/api/admin/partners/${s.poll.code}/polling/poll-now`, headers: bearer(), expect: 202 });
    await ex.strict('admin', { operationId: 'pollPartnerNow', method: 'POST', path: `/api/admin/partners/${s.hook.code}/polling/poll-now`, headers: bearer(), expect: 409, problem: 'conflict' });
    await ex.strict('admin', { operationId: 'pollPartnerNow', method: 'POST', path: '/api/admin/partners/conf-unknown/polling/poll-now', headers: bearer(), expect: 404 });
    const state = await until('a successful poll', async () => {
      const r = await ex.strict('admin', { operationId: 'getPartnerPolling', method: 'GET', path: `/api/admin/partners/${s.poll.code}/polling`, headers: bearer(), expect: 200 });
      return r.body.lastSuccessAt || r.body.lastError ? r.body : null;
    });
    // A violation on either side makes Prism refuse the exchange, which Lumen records as a failed poll.
    expect(state.lastError, `${JSON.stringify(state.lastError)}\n${children.at(-1)?.output().slice(-3000)}`).toBeNull();
    expect(polls.length).toBeGreaterThan(0);
    expect(polls[0]!.apiKey).toBe('partner-issued-key-0123456789');
    const rejected = await ex.strict('admin', { operationId: 'listRejectedInboundItems', method: 'GET', path: `/api/admin/partners/${s.poll.code}/rejected-inbound-items`, headers: bearer(), expect: 200 });
    expect(rejected.body.items).toEqual([]);
    const polled = await ex.strict('admin', { operationId: 'listAlerts', method: 'GET', path: `/api/admin/alerts?tenantId=${s.manual.tenantId}&pageSize=100`, headers: bearer(), expect: 200 });
    expect(polled.body.items.map((a: { protocolNumber: string }) => a.protocolNumber)).toEqual(expect.arrayContaining(['POLL-0001', 'POLL-0002']));
    await ex.strict('admin', { operationId: 'listRejectedInboundItems', method: 'GET', path: '/api/admin/partners/conf-unknown/rejected-inbound-items', headers: bearer(), expect: 404 });
    ex.records.push(...polls.map((p) => ({ document: 'partner-polling' as const, operationId: 'listPartnerRequests', mode: 'strict' as const, method: 'GET', path: p.url, status: 200, responseViolations: [], requestViolations: [] })));
  });

  it('admin: key rotation takes effect at once', async () => {
    const rotated = await ex.strict('admin', { operationId: 'rotatePartnerKey', method: 'POST', path: `/api/admin/partners/${s.reader.code}/rotate-key`, headers: bearer(), expect: 200 });
    await ex.strict('admin', { operationId: 'rotatePartnerKey', method: 'POST', path: '/api/admin/partners/conf-unknown/rotate-key', headers: bearer(), expect: 404 });
    await ex.strict('partner', { operationId: 'getHealth', method: 'GET', path: '/api/external/health', headers: { 'x-api-key': s.reader.apiKey }, expect: 401, problem: 'unauthorized' });
    await ex.strict('partner', { operationId: 'getHealth', method: 'GET', path: '/api/external/health', headers: { 'x-api-key': rotated.body.apiKey }, expect: 200 });
    // With an overlap the replaced key keeps working, and says until when.
    const overlapped = await ex.strict('admin', { operationId: 'rotatePartnerKey', method: 'POST', path: `/api/admin/partners/${s.reader.code}/rotate-key`, headers: bearer(), body: { overlapSeconds: 600 }, expect: 200 });
    expect(overlapped.body.previousKey.keyPrefix).toBe(rotated.body.keyPrefix);
    const old = await ex.strict('partner', { operationId: 'getHealth', method: 'GET', path: '/api/external/health', headers: { 'x-api-key': rotated.body.apiKey }, expect: 200 });
    expect(old.headers.get('lumen-key-expires')).toBe(overlapped.body.previousKey.expiresAt);
    await ex.lax('admin', { operationId: 'rotatePartnerKey', method: 'POST', path: `/api/admin/partners/${s.reader.code}/rotate-key`, headers: bearer(), body: { overlapSeconds: 999_999_999 }, expect: 422 });
    s.reader.apiKey = overlapped.body.apiKey;
  });

  it('admin: webhook secret rotation with an overlap', async () => {
    const rotate = (mode: 'strict' | 'lax', code: string, body: unknown, expectStatus: number) =>
      ex[mode]('admin', { operationId: 'rotatePartnerWebhookSecret', method: 'POST', path: `/api/admin/partners/${code}/rotate-secret`, headers: bearer(), body, expect: expectStatus });
    const rotated = await rotate('strict', s.hook.code, { overlapSeconds: 3600 }, 200);
    expect(rotated.body.webhookSecret).toMatch(/^whsec_/);
    expect(rotated.body.previousWebhookSecretUntil).not.toBeNull();
    await rotate('strict', 'conf-unknown', {}, 404);
    await rotate('lax', s.hook.code, { overlapSeconds: -5 }, 422);
    await rotate('strict', s.poll.code, {}, 422);
  });

  it('telemetry: batches applied, stale and unknown, and every refusal', async () => {
    const ingest = (mode: 'strict' | 'lax' | 'direct', apiKey: string | null, body: unknown, expectStatus: number, headers: Record<string, string> = {}, problem?: string) =>
      ex[mode]('telemetry', { operationId: 'ingestTelemetryReports', method: 'POST', path: '/api/telemetry/reports', headers: { ...(apiKey ? { 'x-api-key': apiKey } : {}), ...headers }, body, expect: expectStatus, ...(problem ? { problem } : {}) });
    const now = Date.now();
    const report = (id: string, at: number, online = true) => ({ deviceIdentifier: id, online, relayOn: online ? true : null, reportedAt: new Date(at).toISOString() });
    const first = await ingest('strict', s.telemetryKey, { reports: [report('TG-1', now - 60_000), report('TG-2', now - 30_000, false), report('TG-UNKNOWN', now)] }, 200);
    expect(first.body).toMatchObject({ received: 3, applied: 2, unknownDevices: ['TG-UNKNOWN'] });
    const stale = await ingest('strict', s.telemetryKey, { reports: [report('TG-1', now - 120_000), report('TG-1', now + 3_600_000)] }, 200);
    expect(stale.body.rejected).toHaveLength(1);
    await ingest('strict', 'lmn_tel_unknown', { reports: [report('TG-1', now)] }, 401, {}, 'unauthorized');
    await ingest('lax', null, { reports: [report('TG-1', now)] }, 401, {}, 'unauthorized');
    await ingest('lax', s.telemetryKey, { reports: [] }, 422, {}, 'validation-failed');
    await ingest('lax', s.telemetryKey, 'TG-1 online', 415, { 'content-type': 'text/plain' });
    await ingest('direct', s.telemetryKey, '{"reports": [', 400, {}, 'malformed-json');
    const huge = { reports: Array.from({ length: 4000 }, (_, i) => report(`TG-BULK-${String(i).padStart(5, '0')}`, now - i)) };
    await ingest('strict', s.telemetryKey, huge, 413, {}, 'payload-too-large');
    // The pole list shows the applied reports.
    const poles = await ex.strict('partner', { operationId: 'listPoles', method: 'GET', path: '/api/external/poles?pageSize=10', headers: { 'x-api-key': s.hook.apiKey }, expect: 200 });
    expect(poles.body.items.find((p: { code: string }) => p.code === 'P-1').device).toMatchObject({ identifier: 'TG-1', online: true, relayOn: true });
  });

  it('sandbox: every event type caused on a sandbox partner\'s request, with 401, 404, 409 and 422', async () => {
    const sandbox = await lumenJson(['partner', 'create', '--code', 'conf-sandbox', '--scopes', 'canCreateServiceOrders', '--transport', 'polling', '--sandbox'], cwd, env);
    const key = { 'x-api-key': sandbox.partner.apiKey as string };
    for (const protocolNumber of ['SBX-1', 'SBX-2']) {
      await ex.strict('partner', { operationId: 'createServiceOrder', method: 'POST', path: '/api/external/service-orders', headers: key, body: intake(protocolNumber), expect: 201 });
    }
    const cause = (protocolNumber: string, eventType: string, expect: number, problem?: string) =>
      ex.strict('sandbox', { operationId: 'triggerSandboxEvent', method: 'POST', path: '/api/external/sandbox/events', headers: key, body: { protocolNumber, eventType, note: 'conformance' }, expect, ...(problem ? { problem } : {}) });
    await cause('SBX-1', 'ServiceOrder.Created', 200);
    await cause('SBX-1', 'ServiceOrder.StatusChanged', 200);
    await cause('SBX-1', 'ServiceOrder.Completed', 200);
    await cause('SBX-1', 'ServiceOrder.Completed', 409, 'invalid-transition');
    await cause('SBX-2', 'Alert.Cancelled', 200);
    await cause('SBX-404', 'Alert.Cancelled', 404, 'not-found');
    // A real city's key: the operation does not exist for it.
    await ex.strict('sandbox', { operationId: 'triggerSandboxEvent', method: 'POST', path: '/api/external/sandbox/events', headers: { 'x-api-key': s.hook.apiKey }, body: { protocolNumber: 'SBX-1', eventType: 'Alert.Cancelled' }, expect: 404, problem: 'not-found' });
    await ex.lax('sandbox', { operationId: 'triggerSandboxEvent', method: 'POST', path: '/api/external/sandbox/events', body: { protocolNumber: 'SBX-1', eventType: 'Alert.Cancelled' }, expect: 401 });
    await ex.lax('sandbox', { operationId: 'triggerSandboxEvent', method: 'POST', path: '/api/external/sandbox/events', headers: key, body: { protocolNumber: 'SBX-1', eventType: 'ServiceOrder.Exploded' }, expect: 422, problem: 'validation-failed' });
  });

  it('open311: GeoReport v2 in XML and JSON, form and JSON posts, tokens, and its error list', async () => {
    const form = (fields: [string, string][]) => new URLSearchParams(fields).toString();
    const formHeaders = { 'content-type': 'application/x-www-form-urlencoded' };
    const hook = { 'x-api-key': s.hook.apiKey };
    const o = (mode: 'strict' | 'lax', operationId: string, method: string, path: string, expectStatus: number, extra: { headers?: Record<string, string>; body?: unknown } = {}) =>
      ex[mode]('open311', { operationId, method, path: `/open311/v2/${path}`, expect: expectStatus, ...extra });
    const xmlTag = (text: string, tag: string) => new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(text)?.[1];

    await o('strict', 'getDiscovery', 'GET', 'discovery.xml', 200);
    await o('strict', 'getDiscovery', 'GET', 'discovery.json', 200);
    // With a key, discovery names that key's jurisdiction_id; another city's is refused.
    const found = await o('strict', 'getDiscovery', 'GET', `discovery.json?api_key=${s.hook.apiKey}`, 200);
    expect(found.body.jurisdiction_id).toBe('3550308');
    await o('lax', 'listServices', 'GET', `services.json?jurisdiction_id=4106902&api_key=${s.hook.apiKey}`, 400);
    await o('strict', 'listServices', 'GET', `services.xml?jurisdiction_id=3550308&api_key=${s.hook.apiKey}`, 200);
    await o('strict', 'listServices', 'GET', 'services.json', 200, { headers: { ...hook, 'accept-language': 'en' } });
    await o('strict', 'listServices', 'GET', 'services.json', 403, { headers: { 'x-api-key': 'lmn_test_unknown' } });
    await o('strict', 'getServiceDefinition', 'GET', 'services/EXTERNAL_OTHER.json', 200, { headers: hook });
    await o('strict', 'getServiceDefinition', 'GET', 'services/EXTERNAL_OTHER.xml', 200, { headers: hook });
    await o('strict', 'getServiceDefinition', 'GET', 'services/NO_SUCH_SERVICE.json', 404, { headers: hook });

    // FixMyStreet's shape: key and jurisdiction in the form, attribute[...] fields, XML answer.
    const fms: [string, string][] = [['jurisdiction_id', '3550308'], ['api_key', s.hook.apiKey], ['lat', '-23.5573'], ['long', '-46.6602'], ['email', 'maria@example.com'], ['description', 'Lâmpada apagada'], ['service_code', 'EXTERNAL_OTHER'], ['first_name', 'Maria'], ['last_name', 'dos Santos'], ['attribute[fixmystreet_id]', 'FMS-1'], ['attribute[title]', 'Apagada']];
    const created = await o('strict', 'createServiceRequest', 'POST', 'requests.xml', 201, { headers: { ...formHeaders, ...hook }, body: form(fms) });
    const id = xmlTag(created.text, 'service_request_id')!;
    expect(id).toMatch(/^\d+$/);
    await o('strict', 'createServiceRequest', 'POST', 'requests.xml', 200, { headers: { ...formHeaders, ...hook }, body: form(fms) });
    await o('strict', 'createServiceRequest', 'POST', 'requests.json', 201, { headers: hook, body: { service_code: 'EXTERNAL_OTHER', address_string: 'Rua Augusta, 1500', attribute: { external_id: 'JSON-1' } } });
    await o('strict', 'createServiceRequest', 'POST', 'requests.json', 400, { headers: hook, body: { service_code: 'NO_SUCH_SERVICE', lat: -23.5, long: -46.6 } });
    await o('strict', 'createServiceRequest', 'POST', 'requests.json', 400, { headers: hook, body: { service_code: 'EXTERNAL_OTHER' } });
    await o('strict', 'createServiceRequest', 'POST', 'requests.json', 403, { headers: { 'x-api-key': s.reader.apiKey }, body: { service_code: 'EXTERNAL_OTHER', lat: -23.5, long: -46.6 } });
    await o('lax', 'createServiceRequest', 'POST', 'requests.xml', 400, { headers: hook, body: { lat: 'north' } });
    await o('lax', 'createServiceRequest', 'POST', 'requests.json', 415, { headers: { ...hook, 'content-type': 'text/plain' }, body: 'service_code=EXTERNAL_OTHER' });
    await o('lax', 'createServiceRequest', 'POST', 'requests.json', 403, { headers: formHeaders, body: form([['service_code', 'EXTERNAL_OTHER']]) });

    // Manual triage: a token, exchanged for the id once an operator has triaged the request.
    const queued = await o('strict', 'createServiceRequest', 'POST', 'requests.json', 201, { headers: { 'x-api-key': s.poll.apiKey }, body: { service_code: 'EXTERNAL_OTHER', lat: -23.5, long: -46.6 } });
    const token = queued.body[0].token as string;
    await o('strict', 'getServiceRequestIdFromToken', 'GET', `tokens/${token}.json`, 200, { headers: { 'x-api-key': s.poll.apiKey } });
    await ex.strict('admin', { operationId: 'createOrderFromAlert', method: 'POST', path: `/api/admin/alerts/${token}/create-order`, headers: bearer(), body: {}, expect: 201 });
    const exchanged = await o('strict', 'getServiceRequestIdFromToken', 'GET', `tokens/${token}.xml?api_key=${s.poll.apiKey}`, 200);
    expect(xmlTag(exchanged.text, 'service_request_id')).toMatch(/^\d+$/);
    await o('strict', 'getServiceRequestIdFromToken', 'GET', `tokens/${token}.json`, 404, { headers: hook });

    await o('strict', 'listServiceRequests', 'GET', `requests.xml?jurisdiction_id=3550308&api_key=${s.hook.apiKey}`, 200);
    await o('strict', 'listServiceRequests', 'GET', `requests.json?service_request_id=${id}`, 200, { headers: hook });
    await o('strict', 'listServiceRequests', 'GET', `requests.json?service_code=EXTERNAL_OTHER&status=open&start_date=2020-01-01T00:00:00Z&end_date=2099-01-01T00:00:00Z&updated_after=2020-01-01T00:00:00Z&updated_before=2099-01-01T00:00:00Z`, 200, { headers: hook });
    await o('lax', 'listServiceRequests', 'GET', 'requests.json?start_date=yesterday', 400, { headers: hook });
    await o('strict', 'listServiceRequests', 'GET', 'requests.json', 403, { headers: { 'x-api-key': 'lmn_test_unknown' } });
    await o('strict', 'getServiceRequest', 'GET', `requests/${id}.xml`, 200, { headers: hook });
    await o('strict', 'getServiceRequest', 'GET', `requests/${id}.json?api_key=${s.hook.apiKey}`, 200);
    await o('strict', 'getServiceRequest', 'GET', `requests/${id}.json`, 404, { headers: { 'x-api-key': s.poll.apiKey } });
    await o('lax', 'getServiceRequest', 'GET', 'requests/abc.json', 400, { headers: hook });
  });

  it('partner: its own integration (settings, delivery log, redelivery, test event, webhook secret, refused items, photos), with 400, 403, 404 and 409', async () => {
    const own = (mode: 'strict' | 'lax', operationId: string, method: string, p: string, apiKey: string, expectStatus: number, body?: unknown, problem?: string) =>
      ex[mode]('partner', { operationId, method, path: `/api/external/integration${p}`, headers: { 'x-api-key': apiKey }, ...(body !== undefined ? { body } : {}), expect: expectStatus, ...(problem ? { problem } : {}) });
    const me = await own('strict', 'getIntegration', 'GET', '', s.hook.apiKey, 200);
    expect(me.body).toMatchObject({ externalSystemCode: s.hook.code, transport: 'webhook' });
    await own('strict', 'getIntegration', 'GET', '', s.poll.apiKey, 200);
    await own('strict', 'getIntegration', 'GET', '', s.reader.apiKey, 403, undefined, 'forbidden');
    await own('strict', 'getIntegration', 'GET', '', 'lmn_test_unknown', 401, undefined, 'unauthorized');
    const log = await own('strict', 'listIntegrationDeliveries', 'GET', '/webhook-deliveries?status=succeeded&limit=5', s.hook.apiKey, 200);
    const delivery = log.body.deliveries[0] as { id: string; partnerCode: string };
    expect(delivery.partnerCode).toBe(s.hook.code);
    await own('lax', 'listIntegrationDeliveries', 'GET', '/webhook-deliveries?status=lost', s.hook.apiKey, 400);
    await own('strict', 'listIntegrationDeliveries', 'GET', '/webhook-deliveries', s.reader.apiKey, 403);
    await own('strict', 'getIntegrationDelivery', 'GET', `/webhook-deliveries/${delivery.id}`, s.hook.apiKey, 200);
    // Another partner's delivery is not found, as one that does not exist.
    await own('strict', 'getIntegrationDelivery', 'GET', `/webhook-deliveries/${delivery.id}`, s.poll.apiKey, 404, undefined, 'not-found');
    await own('strict', 'getIntegrationDelivery', 'GET', `/webhook-deliveries/${randomUUID()}`, s.hook.apiKey, 404);
    await own('lax', 'getIntegrationDelivery', 'GET', '/webhook-deliveries/not-a-uuid', s.hook.apiKey, 400);
    const before = webhooks.length;
    await own('strict', 'redeliverIntegrationDelivery', 'POST', `/webhook-deliveries/${delivery.id}/redeliver`, s.hook.apiKey, 201);
    await own('strict', 'redeliverIntegrationDelivery', 'POST', `/webhook-deliveries/${delivery.id}/redeliver`, s.poll.apiKey, 404);
    await until('the partner’s redelivery', async () => webhooks.length > before);
    await own('strict', 'redeliverDeadIntegrationDeliveries', 'POST', '/webhook-deliveries/redeliver-dead', s.hook.apiKey, 200);
    await own('strict', 'redeliverDeadIntegrationDeliveries', 'POST', '/webhook-deliveries/redeliver-dead', s.poll.apiKey, 409, undefined, 'conflict');
    const ping = await own('strict', 'sendIntegrationTestEvent', 'POST', '/test-event', s.hook.apiKey, 202);
    await own('strict', 'sendIntegrationTestEvent', 'POST', '/test-event', s.poll.apiKey, 409, undefined, 'conflict');
    await until('the partner’s Test.Ping', async () => webhooks.some((w) => w.headers['x-lumen-event-id'] === ping.body.eventId && w.answered === 204));
    await own('strict', 'listIntegrationRejectedItems', 'GET', '/rejected-items?status=open&page=1&pageSize=10', s.poll.apiKey, 200);
    await own('lax', 'listIntegrationRejectedItems', 'GET', '/rejected-items?page=0', s.poll.apiKey, 400);
    await own('strict', 'listIntegrationAttachmentFailures', 'GET', '/attachment-failures?limit=10', s.hook.apiKey, 200);
    await own('lax', 'listIntegrationAttachmentFailures', 'GET', '/attachment-failures?since=yesterday', s.hook.apiKey, 400);
    // Last: its own webhook secret, the replaced one signing for an hour beside the new.
    const rotated = await own('strict', 'rotateIntegrationWebhookSecret', 'POST', '/rotate-webhook-secret', s.hook.apiKey, 200, { overlapSeconds: 3600 });
    expect(rotated.body.webhookSecret).toMatch(/^whsec_/);
    await own('lax', 'rotateIntegrationWebhookSecret', 'POST', '/rotate-webhook-secret', s.hook.apiKey, 422, { overlapSeconds: -1 });
    await own('strict', 'rotateIntegrationWebhookSecret', 'POST', '/rotate-webhook-secret', s.poll.apiKey, 409, undefined, 'conflict');
  });

  it('admin: groups, the city map, crews, planned visits, completion photos and materials, undo and refused items', async () => {
    const get = (operationId: string, p: string, expectStatus: number) => ex.strict('admin', { operationId, method: 'GET', path: p, headers: bearer(), expect: expectStatus });
    const send = (operationId: string, method: string, p: string, body: unknown, expectStatus: number, headers: Record<string, string> = {}) =>
      ex.strict('admin', { operationId, method, path: p, headers: { ...bearer(), ...headers }, ...(body === undefined ? {} : { body }), expect: expectStatus });
    // Grouping settings, groups and supply faults.
    await get('getTenantAlertGrouping', `/api/admin/tenants/${s.manual.tenantId}/alert-grouping`, 200);
    await get('getTenantAlertGrouping', `/api/admin/tenants/${randomUUID()}/alert-grouping`, 404);
    await send('setTenantAlertGrouping', 'PUT', `/api/admin/tenants/${s.manual.tenantId}/alert-grouping`, { duplicateRadiusMeters: 40 }, 200);
    await ex.lax('admin', { operationId: 'setTenantAlertGrouping', method: 'PUT', path: `/api/admin/tenants/${s.manual.tenantId}/alert-grouping`, headers: bearer(), body: { duplicateRadiusMeters: -1 }, expect: 422 });
    await get('listSupplyFaults', `/api/admin/tenants/${s.auto.tenantId}/supply-faults`, 200);
    await get('listSupplyFaults', `/api/admin/tenants/${randomUUID()}/supply-faults`, 404);
    // The city map, whole city and a viewport.
    await get('getCityMap', `/api/admin/tenants/${s.auto.tenantId}/map?zoom=12`, 200);
    await get('getCityMap', `/api/admin/tenants/${s.auto.tenantId}/map?zoom=18&bbox=-23.56,-46.67,-23.55,-46.65`, 200);
    await get('getCityMap', `/api/admin/tenants/${randomUUID()}/map?zoom=12`, 404);
    // A Pending alert of its own, for its group and an undone discard.
    const sent = await ex.strict('partner', { operationId: 'createServiceOrder', method: 'POST', path: '/api/external/service-orders', headers: { 'x-api-key': s.writer.apiKey }, body: intake('CONF-M-0090', { address: { street: 'Rua Doutor Arnaldo', number: '455', latitude: -23.5540, longitude: -46.6700 } }), expect: 201 });
    const pending = sent.body.alert.id as string;
    await get('getAlertGroup', `/api/admin/alerts/${pending}/group`, 200);
    await get('getAlertGroup', `/api/admin/alerts/${randomUUID()}/group`, 404);
    const discarded = await send('discardAlert', 'POST', `/api/admin/alerts/${pending}/discard`, { reason: 'Registrado em duplicidade pelo parceiro.' }, 200, { prefer: 'undo' });
    const actionId = discarded.headers.get('lumen-undo-action');
    expect(actionId).toEqual(expect.any(String));
    await send('undoAction', 'POST', `/api/admin/actions/${actionId}/undo`, undefined, 200);
    await send('undoAction', 'POST', `/api/admin/actions/${actionId}/undo`, undefined, 409);
    await send('undoAction', 'POST', `/api/admin/actions/${randomUUID()}/undo`, undefined, 404);
    // Pending again: an open order of its own for the crew's operations below.
    const open = (await send('createOrderFromAlert', 'POST', `/api/admin/alerts/${pending}/create-order`, {}, 201)).body.id as string;
    // A crew: a member of the automatic city's team.
    const crew = (await send('createOperator', 'POST', '/api/admin/operators', { email: 'equipe.conformidade@cidade-automatica.example', name: 'Equipe Conformidade' }, 201)).body.operator.id as string;
    await send('grantOperatorRole', 'PUT', `/api/admin/operators/${crew}/grants/${s.auto.tenantId}`, { role: 'triager' }, 200);
    await send('addTeamMember', 'PUT', `/api/admin/teams/${s.auto.teamId}/members/${crew}`, undefined, 200);
    await send('addTeamMember', 'PUT', `/api/admin/teams/${randomUUID()}/members/${crew}`, undefined, 404);
    await get('listTeamMembers', `/api/admin/teams/${s.auto.teamId}/members`, 200);
    await get('listTeamMembers', `/api/admin/teams/${randomUUID()}/members`, 404);
    await get('listOperatorTeams', `/api/admin/operators/${crew}/teams`, 200);
    await get('listOperatorTeams', `/api/admin/operators/${randomUUID()}/teams`, 404);
    await send('removeTeamMember', 'DELETE', `/api/admin/teams/${s.auto.teamId}/members/${crew}`, undefined, 204);
    // "My team today" of a token: no team, so nothing (a person signed in sees their teams' orders).
    await ex.strict('admin', { operationId: 'listMyTeamOrders', method: 'GET', path: `/api/admin/my-team?tenantId=${s.auto.tenantId}`, headers: bearer(), expect: 200 });
    await ex.lax('admin', { operationId: 'listMyTeamOrders', method: 'GET', path: '/api/admin/my-team', headers: bearer(), expect: 400 });
    // A planned visit on an open order.
    const tomorrow = Date.now() + 24 * 3_600_000;
    await send('setPlannedVisit', 'PUT', `/api/admin/service-orders/${open}/planned-visit`, { startsAt: new Date(tomorrow).toISOString(), endsAt: new Date(tomorrow + 3 * 3_600_000).toISOString() }, 200);
    await ex.lax('admin', { operationId: 'setPlannedVisit', method: 'PUT', path: `/api/admin/service-orders/${open}/planned-visit`, headers: bearer(), body: { startsAt: new Date(tomorrow).toISOString(), endsAt: new Date(tomorrow - 3_600_000).toISOString() }, expect: 422 });
    await send('clearPlannedVisit', 'DELETE', `/api/admin/service-orders/${open}/planned-visit`, undefined, 200);
    await send('clearPlannedVisit', 'DELETE', `/api/admin/service-orders/${randomUUID()}/planned-visit`, undefined, 404);
    // The city's materials, and an after-repair photo of the open order.
    await get('listMaterials', `/api/admin/tenants/${s.auto.tenantId}/materials`, 200);
    const lamp = (await send('createMaterial', 'POST', `/api/admin/tenants/${s.manual.tenantId}/materials`, { kind: 'lamp', name: 'Lâmpada LED 100 W', wattage: 100 }, 201)).body.id as string;
    await send('createMaterial', 'POST', `/api/admin/tenants/${randomUUID()}/materials`, { kind: 'lamp', name: 'Lâmpada LED 100 W' }, 404);
    await send('updateMaterial', 'PATCH', `/api/admin/tenants/${s.manual.tenantId}/materials/${lamp}`, { active: false }, 200);
    await send('updateMaterial', 'PATCH', `/api/admin/tenants/${s.auto.tenantId}/materials/${randomUUID()}`, { active: false }, 404);
    const photoId = randomUUID();
    await send('uploadServiceOrderPhoto', 'PUT', `/api/admin/service-orders/${open}/photos/${photoId}`, { contentType: 'image/jpeg', data: JPEG.toString('base64') }, 200);
    await ex.lax('admin', { operationId: 'uploadServiceOrderPhoto', method: 'PUT', path: `/api/admin/service-orders/${open}/photos/${randomUUID()}`, headers: bearer(), body: { contentType: 'image/png', data: JPEG.toString('base64') }, expect: 422 });
    await get('getServiceOrderPhoto', `/api/admin/service-orders/${open}/photos/${photoId}`, 200);
    await get('getServiceOrderPhoto', `/api/admin/service-orders/${open}/photos/${randomUUID()}`, 404);
    await get('getServiceOrderCompletion', `/api/admin/service-orders/${open}/completion`, 200);
    await get('getServiceOrderCompletion', `/api/admin/service-orders/${randomUUID()}/completion`, 404);
    // A refused polled item that does not exist.
    await send('acceptRejectedInboundItem', 'POST', `/api/admin/rejected-inbound-items/${randomUUID()}/accept`, { corrections: { street: 'Rua Voluntários da Pátria' } }, 404);
  });

  it('covers every operation of every document with zero violations, and records the figures', () => {
    const all = ex.records;
    const violations = all.flatMap((r) => r.responseViolations.map((v) => `${r.document} ${r.operationId} ${r.method} ${r.path} -> ${r.status}: ${v}`));
    if (violations.length) process.stderr.write(`${violations.join('\n')}\n`);
    expect(violations).toEqual([]);
    const rows: { document: string; operations: string[] }[] = [
      { document: 'partner', operations: [...operationsOf('partner').keys()] },
      { document: 'admin', operations: [...operationsOf('admin').keys()] },
      { document: 'telemetry', operations: [...operationsOf('telemetry').keys()] },
      { document: 'sandbox', operations: [...operationsOf('sandbox').keys()] },
      { document: 'open311', operations: [...operationsOf('open311').keys()] },
    ];
    for (const { document, operations } of rows) {
      const covered = ex.covered(document);
      expect(operations.filter((o) => !covered.has(o)), `${document} operations never exercised`).toEqual([]);
      const records = all.filter((r) => r.document === document);
      const statuses = [...ex.statusesOf(document)].map(([op, set]) => `${op} ${[...set].sort().join('/')}`).join('; ');
      recordReliability(SECTION, {
        item: `${document}.yaml through Prism (${operations.length} operations)`,
        figure: `${records.length} exchanges, ${operations.length} of ${operations.length} operations, 0 violations`,
        detail: `${records.filter((r) => r.mode === 'strict').length} through prism proxy --errors, ${records.filter((r) => r.mode === 'lax').length} deliberately invalid requests through a reporting proxy (Lumen's answer still checked), ${records.filter((r) => r.mode === 'direct').length} Prism cannot carry (unparseable JSON, a one-byte-a-second body) checked against the document directly. Statuses per operation: ${statuses}.`,
      });
    }
    const hooks = all.filter((r) => r.document === 'webhooks');
    recordReliability(SECTION, {
      item: 'webhooks section of partner.yaml (requests Lumen sent)',
      figure: `${hooks.length} deliveries, 0 violations`,
      detail: 'Body against the Event schema, every documented header against its schema, HMAC signature verified; failures retried with X-Lumen-Delivery-Attempt 1, 2, 3, then dead, and redelivered through the admin API (attempt 1 again).',
    });
    const pollsMade = all.filter((r) => r.document === 'partner-polling');
    recordReliability(SECTION, {
      item: 'partner-polling.yaml (Lumen polling a partner, through prism proxy --errors)',
      figure: `${pollsMade.length} polls, 0 violations`,
      detail: 'Lumen\'s request (X-Api-Key, since, limit) and the partner\'s answer validated by Prism; the batch\'s 2 requests became alerts.',
    });
    recordReliability(SECTION, { item: 'conformance suite duration', figure: `${((Date.now() - started) / 1000).toFixed(0)} s`, detail: `dist/lumen serve, 9 Prism proxies (${EXECUTABLE.endsWith('lumen') ? 'single executable' : ''}), on a fresh database` });
  });
});
