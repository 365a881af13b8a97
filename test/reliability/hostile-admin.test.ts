/**
 * Hostile input against every operation of the administrative API and the telemetry
 * ingestion API: path parameters (real ids, unknown ids, injection strings, encoded
 * slashes, NUL), query values and bodies generated from each operation's schemas,
 * valid or mutated. Oracle: a documented 4xx problem+json or a 2xx that matches the
 * document, never a 5xx; a refused request changes no table (no audit entry, no event,
 * no half-made transition). Partners' webhook and polling URLs point at a loopback stub
 * that always succeeds; the tables that the delivery and polling jobs write in the
 * background (after an accepted action) are left out of the comparison.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makeCityPole, makePartner, makeReason, makeTeam, makeTenant } from '../support/factories.js';
import { recordReliability } from '../support/reliability.js';
import { makeQueueRows } from '../support/queues.js';
import { emit, subjectFor } from '../events/support.js';
import { adminToken, cliJson } from '../operations/support.js';
import { startStub, type StubServer } from '../intake/support.js';
import {
  dateTimeArb,
  documentOf,
  HostileClient,
  HOSTILE_STRINGS,
  mutationArb,
  operationsOf,
  requestSchema,
  serialise,
  serverLog,
  snapshotDiff,
  tableSnapshotQuery,
  Tally,
  valueArb,
  violation,
  type Answer,
  type OperationInfo,
} from './hostile-support.js';

const SECTION = 'Hostile and broken input';
const RUNS_PER_OPERATION = 60;
const TELEMETRY_RUNS = 250;

/** Written by the webhook delivery and partner polling jobs, in the background, after accepted actions. */
const BACKGROUND_TABLES = ['webhook_delivery', 'webhook_attempt', 'webhook_send_permit', 'partner_poll_state', 'rejected_inbound_item'];
/** A refused sign-in is recorded by design: counted for the throttle and audited. */
const WRITTEN_WHEN_REFUSED: Record<string, readonly string[]> = { createSession: ['audit_log', 'sign_in_failure'] };
/** Operations that need no credentials (x-lumen-role: public). */
const isPublic = (op: OperationInfo): boolean => documentOf('admin').paths[op.path][op.method.toLowerCase()]['x-lumen-role'] === 'public';

let t: TestApp;
let partnerStub: StubServer;
let client: HostileClient;
let snapshot: () => Promise<Record<string, string>>;
let token: string;
let telemetryKey: string;
/** Real identifiers to aim at, per path parameter name. */
const ids: Record<string, string[]> = {};
const tally = new Tally();
let refusals = 0;
let failures = 0;
const covered = new Set<string>();
const started = Date.now();

beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_RATE_LIMIT_PER_MINUTE: '10000000' } });
  partnerStub = await startStub((req, res) => {
    if (req.url?.startsWith('/lumen/requests')) res.writeHead(200, { 'content-type': 'application/json' }).end('{"items":[],"hasMore":false}');
    else res.writeHead(204).end();
  });
  client = new HostileClient(t.baseUrl);
  token = await adminToken(t, 'hostile-input');
  const manual = await makeTenant(t.rt, { intakePolicy: 'manual' });
  const other = await makeTenant(t.rt);
  const partner = await makePartner(t.rt, { tenantId: manual.id, transport: 'webhook', webhookUrl: `${partnerStub.url}/hooks`, webhookSecret: 'whsec-hostile-0123456789' });
  const polling = await makePartner(t.rt, { tenantId: other.id, transport: 'polling', pollingUrl: `${partnerStub.url}/lumen/requests`, pollingKey: 'key-0123456789', pollingIntervalSeconds: 180 });
  const team = await makeTeam(t.rt, { tenantId: manual.id });
  await makeReason(t.rt, { tenantId: manual.id, code: 'LAMP_OUT' });
  const pole = await makeCityPole(t.rt, { tenantId: manual.id, device: 'TG-ADM-1' });
  const alerts = [];
  for (let i = 0; i < 6; i++) alerts.push(await makeAlert(t.rt, { tenantId: manual.id, externalSystemId: partner.id, status: i % 2 ? 'Linked' : 'Pending' }));
  await emit(t.rt, ['ServiceOrder.StatusChanged', await subjectFor(t.rt, { tenantId: manual.id, partner: { id: partner.id } })]);
  const deliveries = await t.rt.db.selectFrom('webhook_delivery').select('id').execute();
  ids.tenantId = [manual.id, other.id];
  ids.alertId = alerts.map((a) => a.id);
  ids.serviceOrderId = alerts.map((a) => a.serviceOrderId).filter((x): x is string => x !== null);
  ids.code = [partner.code, polling.code];
  ids.deliveryId = deliveries.map((d) => d.id);
  ids.teamId = [team.id];
  // The pole page: a real code, and one of the other city.
  ids.poleCode = [pole.code, (await makeCityPole(t.rt, { tenantId: other.id })).code];
  // The queues operators clear by hand, and a mapped partner reason code.
  const queues = await makeQueueRows(t.rt, { tenantId: manual.id, externalSystemId: partner.id, alertId: alerts[0]!.id, protocolNumber: alerts[0]!.protocolNumber });
  ids.attachmentId = [queues.attachmentId];
  ids.failureId = [queues.failureId];
  ids.itemId = [queues.itemId];
  cliJson(await t.cli('reason', 'map', '--partner', partner.code, '--from', 'LAMPADA', '--to', 'LAMP_OUT', '--json'));
  ids.partnerCode = ['LAMPADA', 'NUNCA_VISTO'];
  telemetryKey = cliJson(await t.cli('telemetry', 'key', 'create', '--tenant', manual.id, '--json')).apiKey as string;
  snapshot = await tableSnapshotQuery(t.rt.pool, BACKGROUND_TABLES);
});

let last: Record<string, string> | null = null;
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') failures++;
  last = null;
});

afterAll(async () => {
  client?.close();
  await t?.stop();
  await partnerStub?.close();
});

async function exchange(op: OperationInfo, path: string, query: string, body: string | undefined, headers: Record<string, string>, label: string): Promise<Answer> {
  const before = last ?? (await snapshot());
  last = null;
  const answer = await client.send({
    method: op.method,
    path: `${path}${query ? `?${query}` : ''}`,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body,
  });
  tally.add(answer.status);
  covered.add(`${op.document}:${op.operationId}`);
  const wrong = violation(op, answer);
  if (wrong) throw new Error(`${serverLog(t, answer)}\n${op.operationId} ${path}?${query} (${label}): ${wrong}\nbody sent (start): ${String(body).slice(0, 300)}`);
  const after = await snapshot();
  if (answer.status >= 400) {
    const changed = snapshotDiff(before, after).filter((table) => !(WRITTEN_WHEN_REFUSED[op.operationId] ?? []).includes(table));
    if (changed.length > 0) throw new Error(`${op.operationId} ${path} (${label}): refused with ${answer.status} but tables changed: ${changed.join(', ')}`);
    refusals++;
  }
  last = after;
  return answer;
}

const hostilePathValue = fc.oneof(
  // Not '.' or '..': the URL would lose the segment and name another operation.
  fc.constantFrom(...HOSTILE_STRINGS.filter((s) => s !== ''), '..%2F..%2Fhealth', 'a/b', 'a'.repeat(5000), '%00', '00000000-0000-0000-0000-000000000000', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'),
  fc.uuid(),
  fc.string({ minLength: 1, maxLength: 30 }).filter((v) => v !== '.' && v !== '..'),
);

function encodePath(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return encodeURIComponent(value.replace(/[\ud800-\udfff]/g, '\ufffd'));
  }
}

/** A concrete path for an operation: real ids mostly, hostile values sometimes. */
function pathArb(op: OperationInfo): fc.Arbitrary<string> {
  const names = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  if (names.length === 0) return fc.constant(op.path);
  return fc.tuple(...names.map((n) => fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...(ids[n] ?? [randomUUID()])) }, { weight: 2, arbitrary: hostilePathValue }))).map((values) => {
    let path = op.path;
    names.forEach((n, i) => (path = path.replace(`{${n}}`, encodePath(values[i]!))));
    return path;
  });
}

/** A query string from the operation's query parameters: schema values, real ids, or hostile strings. */
function queryArb(op: OperationInfo): fc.Arbitrary<string> {
  const params = op.parameters.filter((p) => p.in === 'query');
  if (params.length === 0) return fc.oneof({ weight: 5, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constant('unknown=1') });
  const valueOf = (p: Record<string, any>): fc.Arbitrary<string> =>
    fc.oneof(
      { weight: 3, arbitrary: ids[p.name as string] ? fc.constantFrom(...ids[p.name as string]!) : valueArb(op.document, p.schema ?? {}).map((v) => String(v)) },
      { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_STRINGS.filter((s) => !/[\ud800-\udfff]/.test(s)), '-1', '0', '1e400', 'Infinity', '2026-02-30T00:00:00Z', '2026-06-30T23:59:60Z') },
    );
  return fc
    .subarray(params, { minLength: 0 })
    .chain((chosen) => (chosen.length ? fc.tuple(...chosen.map((p) => valueOf(p).map((v) => `${encodeURIComponent(p.name)}=${encodeURIComponent(v)}`))) : fc.constant([] as string[])))
    .map((pairs) => pairs.join('&'));
}

/** Bodies from the operation's schema: valid (URLs only ever on loopback), or mutated. */
function bodyArb(op: OperationInfo): fc.Arbitrary<{ text: string | undefined; mutated: boolean }> {
  if (!op.bodyPointer) return fc.constant({ text: undefined, mutated: false });
  const valid = valueArb(op.document, requestSchema(op), {
    byFormat: { uri: fc.constantFrom(`${partnerStub.url}/hooks`, `${partnerStub.url}/lumen/requests`) },
    byProperty: {
      pollingIntervalSeconds: fc.constant(180),
      tenantId: fc.constantFrom(...ids.tenantId!, randomUUID()),
      teamId: fc.constantFrom(...ids.teamId!, randomUUID()),
      serviceOrderId: fc.constantFrom(...ids.serviceOrderId!, randomUUID()),
      reasonCode: fc.constantFrom('LAMP_OUT', 'EXTERNAL_OTHER', 'UNKNOWN_REASON'),
      since: fc.oneof(dateTimeArb, fc.constant(new Date(Date.now() - 3_600_000).toISOString())),
      deviceIdentifier: fc.constantFrom('TG-ADM-1', 'TG-UNKNOWN'),
      reportedAt: fc.oneof(dateTimeArb, fc.constant(new Date().toISOString())),
    },
  });
  return fc.tuple(valid, fc.option(mutationArb(), { freq: 3 })).map(([value, mutate]) => {
    const m = mutate ? mutate(value as never) : null;
    return { text: serialise(m ? m.value : value), mutated: m !== null };
  });
}

describe('administrative and telemetry APIs under hostile input', { timeout: 240_000 }, () => {
  it('answers every admin operation with a documented status, whatever the path, query and body, and refusals change nothing', async () => {
    const operations = [...operationsOf('admin').values()];
    for (const op of operations) {
      await fc.assert(
        fc.asyncProperty(pathArb(op), queryArb(op), bodyArb(op), fc.constantFrom('en', 'pt-BR', 'xx'), async (path, query, body, lang) => {
          await exchange(op, path, query, body.text, { authorization: `Bearer ${token}`, 'accept-language': lang }, op.operationId);
        }),
        { numRuns: RUNS_PER_OPERATION, endOnFailure: true },
      );
      // Without a token, or with a partner-style key: 401, nothing changed.
      const answer = await exchange(op, op.path.replace(/\{(\w+)\}/g, (_m, n: string) => ids[n]?.[0] ?? randomUUID()), '', op.bodyPointer ? '{}' : undefined, { 'x-api-key': telemetryKey }, 'no admin token');
      if (!isPublic(op)) expect(answer.status).toBe(401);
    }
    expect([...covered].filter((c) => c.startsWith('admin:'))).toHaveLength(operations.length);
  });

  it('answers a path value with a broken percent-escape with 400 and a pointer, not a 500', async () => {
    const res = await t.fetch('/api/admin/alerts/%E0%A4%A', { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(await res.json()).toMatchObject({ status: 400, errors: [{ pointer: '/path' }] });
  });

  it('answers telemetry batches, valid and mutated, with a documented status, and refusals change nothing', async () => {
    const op = operationsOf('telemetry').get('ingestTelemetryReports')!;
    await fc.assert(
      fc.asyncProperty(bodyArb(op), fc.constantFrom(telemetryKey, telemetryKey, telemetryKey, 'lmn_tel_wrong'), async (body, key) => {
        const answer = await exchange(op, op.path, '', body.text, { 'x-api-key': key }, 'telemetry');
        if (!body.mutated && key === telemetryKey) expect(answer.status, answer.text).toBe(200);
      }),
      { numRuns: TELEMETRY_RUNS, endOnFailure: true },
    );
  });

  it('records the figures', () => {
    expect(tally.serverErrors).toBe(0);
    expect(failures, 'figures are recorded only when every case above held').toBe(0);
    recordReliability(SECTION, {
      item: `admin API (${operationsOf('admin').size} operations) and telemetry ingestion: hostile paths, queries and bodies`,
      figure: `${tally.cases} requests, 0 answered 5xx, ${refusals} refusals changed 0 rows`,
      detail: `fast-check over every operation's parameters and request schema: real and unknown ids, injection strings, encoded slashes and NUL in paths, schema values and edge cases in queries, valid and mutated bodies (wrong types, missing/extra fields, huge strings, deep nesting, unicode edge cases), no or wrong credentials. Statuses: ${tally.summary()}. ${((Date.now() - started) / 1000).toFixed(0)} s.`,
    });
  });
});
