/**
 * Cross-tenant: every operation of the admin document (iterated from the document, so a
 * new operation is covered the day it is added) called by an operator of city B, with
 * B's operator token and with B's console session, aimed at city A's tenant, alerts,
 * orders, partners, teams, deliveries, operators and tokens. Oracle: 404 (as an unknown
 * id) or 403 (a platform operation, a role B does not hold), or 422 where a body names
 * what B cannot see; a read answers 200 only with none of A's data; and nothing changes,
 * in any table. Figures go to RELIABILITY.md.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makeCityPole, makePartner, makeReason, makeTeam, makeTenant } from '../support/factories.js';
import { recordReliability } from '../support/reliability.js';
import { makeQueueRows } from '../support/queues.js';
import { emit, subjectFor } from '../events/support.js';
import { startStub, type StubServer } from '../intake/support.js';
import { operationsOf, requestSchema, snapshotDiff, tableSnapshotQuery, valueArb, type OperationInfo } from '../reliability/hostile-support.js';
import { makeOperator, makeToken, sessionFetch, signIn, tokenFetch, type Session } from './support.js';

const SECTION = 'Security: tenant isolation';
/** Written by background jobs, and the session's last-seen stamp: not what a request under test changes. */
const EXCLUDED = ['webhook_delivery', 'webhook_attempt', 'webhook_send_permit', 'partner_poll_state', 'rejected_inbound_item', 'operator_session', 'sign_in_failure'];
/** About the caller itself, not a tenant: covered by the session tests. */
const SELF = new Set(['createSession', 'getSession', 'deleteSession', 'changeSessionPassword']);

let t: TestApp;
let stub: StubServer;
let snapshot: () => Promise<Record<string, string>>;
let session: Session;
let bToken: string;
let bTenantId: string;
/** A's identifiers, per path parameter name. */
const a: Record<string, string> = {};
/** Text of A that must never appear in an answer to B. */
const secrets: string[] = [];

beforeAll(async () => {
  t = await startTestApp();
  stub = await startStub((_req, res) => {
    res.writeHead(204).end();
  });
  const cityA = await makeTenant(t.rt, { name: 'Cidade ALFA Secreta', intakePolicy: 'manual' });
  const cityB = await makeTenant(t.rt, { name: 'Cidade BETA' });
  const partner = await makePartner(t.rt, { tenantId: cityA.id, code: 'alfa-portal', transport: 'webhook', webhookUrl: `${stub.url}/hooks`, webhookSecret: 'whsec-alfa-0123456789' });
  const team = await makeTeam(t.rt, { tenantId: cityA.id, name: 'Equipe ALFA' });
  await makeReason(t.rt, { tenantId: cityA.id, code: 'LAMP_OUT' });
  const pending = await makeAlert(t.rt, { tenantId: cityA.id, externalSystemId: partner.id, status: 'Pending' });
  const linked = await makeAlert(t.rt, { tenantId: cityA.id, externalSystemId: partner.id, status: 'Linked' });
  await emit(t.rt, ['ServiceOrder.StatusChanged', await subjectFor(t.rt, { tenantId: cityA.id, partner: { id: partner.id } })]);
  const delivery = await t.rt.db.selectFrom('webhook_delivery').select('id').executeTakeFirstOrThrow();
  const adminA = await makeOperator(t.rt, { grants: [{ tenantId: cityA.id, role: 'city-admin' }], name: 'Alice ALFA' });
  const tokenA = await makeToken(t.rt, { operator: adminA.email, name: 'alfa-token' });
  const queues = await makeQueueRows(t.rt, { tenantId: cityA.id, externalSystemId: partner.id, alertId: pending.id, protocolNumber: pending.protocolNumber });
  await t.rt.db.insertInto('reason_mapping').values({ external_system_id: partner.id, partner_code: 'LAMPADA', tenant_id: cityA.id, reason_code: 'LAMP_OUT' }).execute();
  // A's pole on one of A's orders: B asking for its code is answered as for a code nobody has.
  const pole = await makeCityPole(t.rt, { tenantId: cityA.id, code: 'POSTE-ALFA-0001', address: 'Rua ALFA Secreta, 7', device: 'TG-ALFA-0001' });
  await t.rt.db.updateTable('service_order').set({ pole_id: pole.id }).where('id', '=', linked.serviceOrderId!).execute();
  Object.assign(a, { poleCode: pole.code });
  secrets.push(pole.id, 'Rua ALFA Secreta, 7', 'TG-ALFA-0001');
  Object.assign(a, { partnerCode: 'LAMPADA', attachmentId: queues.attachmentId, failureId: queues.failureId, itemId: queues.itemId });
  secrets.push(queues.attachmentId, queues.failureId, queues.itemId);
  Object.assign(a, { tenantId: cityA.id, alertId: pending.id, serviceOrderId: linked.serviceOrderId!, code: partner.code, deliveryId: delivery.id, teamId: team.id, operatorId: adminA.id, tokenId: tokenA.id });
  secrets.push(cityA.id, cityA.name, partner.code, partner.id, pending.id, linked.id, linked.serviceOrderId!, linked.serviceOrderNumber!, team.id, 'Equipe ALFA', delivery.id, adminA.id, adminA.email, tokenA.id, 'Maria da Silva', '+5511987654321');

  const adminB = await makeOperator(t.rt, { grants: [{ tenantId: cityB.id, role: 'city-admin' }] });
  bToken = (await makeToken(t.rt, { operator: adminB.email })).token;
  bTenantId = cityB.id;
  session = await signIn(t, adminB.email, adminB.password);
  snapshot = await tableSnapshotQuery(t.rt.pool, EXCLUDED);
});

afterAll(async () => {
  await t?.stop();
  await stub?.close();
});

/** A valid body aimed at A: A's tenant, team, order and reason wherever the schema has them. */
function bodyFor(op: OperationInfo): string | undefined {
  if (!op.bodyPointer) return undefined;
  const arb = valueArb(op.document, requestSchema(op), {
    byFormat: { uri: fc.constant(`${stub.url}/hooks`), email: fc.constant('someone@city.example') },
    byProperty: {
      tenantId: fc.constant(a.tenantId),
      teamId: fc.constant(a.teamId),
      serviceOrderId: fc.constant(a.serviceOrderId),
      alertIds: fc.constant([a.alertId]),
      reasonCode: fc.constant('LAMP_OUT'),
      since: fc.constant(new Date(Date.now() - 3_600_000).toISOString()),
      grants: fc.constant([{ tenantId: a.tenantId, role: 'viewer' }]),
      operator: fc.constant(a.operatorId),
      pollingIntervalSeconds: fc.constant(60),
      latitude: fc.constant(-23.5),
      longitude: fc.constant(-46.6),
    },
  });
  return JSON.stringify(fc.sample(arb, { numRuns: 1, seed: 42 })[0]);
}

function pathFor(op: OperationInfo): string {
  const values = [
    ...(op.parameters.some((p) => p.in === 'query' && p.name === 'tenantId') ? [`tenantId=${a.tenantId}`] : []),
    // Other required query values: text (the place search's) aimed at A's streets, a
    // number (the city map's zoom) at its smallest valid value.
    ...op.parameters
      .filter((p) => p.in === 'query' && p.required && p.name !== 'tenantId')
      .map((p) => `${p.name}=${p.schema?.type === 'integer' ? String(p.schema.minimum ?? 0) : encodeURIComponent('Rua Augusta, 1500')}`),
  ];
  return op.path.replace('/api/admin', '').replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(a[name] ?? randomUUID())) + (values.length ? `?${values.join('&')}` : '');
}

const tally = { requests: 0, notFound: 0, forbidden: 0, unprocessable: 0, emptyReads: 0 };

async function attempt(op: OperationInfo, via: 'token' | 'session') {
  const call = via === 'token' ? tokenFetch(t, bToken) : sessionFetch(t, session);
  const before = await snapshot();
  const body = bodyFor(op);
  const path = pathFor(op);
  const res = await call(path, { method: op.method, body, headers: body === undefined ? {} : { 'content-type': 'application/json' } });
  const text = await res.text();
  const after = await snapshot();
  tally.requests++;
  const changed = snapshotDiff(before, after);
  // What the request itself named may be echoed (a 404's detail); anything else of A is a leak.
  const leaked = secrets.filter((s) => text.includes(s) && !decodeURIComponent(path).includes(s) && !(body ?? '').includes(s));
  const label = `${op.operationId} via ${via}: ${res.status} ${text.slice(0, 300)}`;
  expect(changed, label).toEqual([]);
  expect(leaked, label).toEqual([]);
  expect(res.status, label).toBeLessThan(500);
  if (res.status === 404) tally.notFound++;
  else if (res.status === 403) tally.forbidden++;
  else if (res.status === 422) tally.unprocessable++;
  else {
    // Only a read may answer 2xx, and only with nothing of A (checked above).
    expect(op.method, label).toBe('GET');
    expect(res.status, label).toBe(200);
    tally.emptyReads++;
  }
  return res.status;
}

describe('another city\'s token and session, on every admin operation', () => {
  const operations = [...operationsOf('admin').values()].filter((op) => !SELF.has(op.operationId));

  it('never reaches, shows or changes anything of the other city', async () => {
    expect(operations.length).toBeGreaterThan(30);
    const statuses: Record<string, number[]> = {};
    for (const op of operations) {
      statuses[op.operationId] = [await attempt(op, 'token'), await attempt(op, 'session')];
    }
    // An id of A is answered exactly as an unknown id: the reads by id are 404, never 403.
    for (const id of ['getAlert', 'getServiceOrder', 'getPole', 'getPartner', 'getTenant', 'getWebhookDelivery', 'getPartnerPolling', 'listWebhookDeliveries', 'listRejectedInboundItems', 'listTeams'])
      expect(statuses[id], id).toEqual([404, 404]);
    for (const id of ['discardAlert', 'bulkTriageAlerts', 'startServiceOrder', 'rotatePartnerKey', 'updatePartner', 'redeliverWebhook', 'setTenantIntakePolicy', 'revokeAdminToken']) expect(statuses[id], id).toEqual([404, 404]);
    expect(statuses.createTenant, 'createTenant').toEqual([403, 403]);
    // B's city-admin manages B's operators: A's operator does not exist for it, its list holds only B's.
    for (const id of ['getOperator', 'disableOperator', 'enableOperator', 'resetOperatorPassword', 'grantOperatorRole', 'revokeOperatorRole']) expect(statuses[id], id).toEqual([404, 404]);
    expect(statuses.listOperators, 'listOperators').toEqual([200, 200]);
    // An invitation naming A (404) or asking for a platform admin (403 platform-admin-only): never made.
    for (const status of statuses.createOperator!) expect([403, 404], 'createOperator').toContain(status);
  });

  it('answers an id of another city exactly as an unknown id (same status, same problem type)', async () => {
    const call = tokenFetch(t, bToken);
    for (const [path, unknown] of [
      [`/alerts/${a.alertId}`, `/alerts/${randomUUID()}`],
      [`/service-orders/${a.serviceOrderId}`, `/service-orders/${randomUUID()}`],
      [`/partners/${a.code}`, '/partners/no-such-partner'],
      [`/webhook-deliveries/${a.deliveryId}`, `/webhook-deliveries/${randomUUID()}`],
    ] as const) {
      const [theirs, none] = [await call(path), await call(unknown)];
      expect([theirs.status, none.status]).toEqual([404, 404]);
      expect(((await theirs.json()) as { type: string }).type).toBe(((await none.json()) as { type: string }).type);
    }
  });

  it("refuses another city's alert in a batch of the caller's own city exactly as an unknown id, and changes nothing", async () => {
    const call = tokenFetch(t, bToken);
    const before = await snapshot();
    const answers = [];
    for (const id of [a.alertId, randomUUID()]) {
      const res = await call('/alerts/bulk', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tenantId: bTenantId, alertIds: [id], action: 'discard', note: 'x' }) });
      const body = (await res.json()) as { type: string; results: { outcome: string; reason: string }[] };
      answers.push([res.status, body.type, body.results.map((r) => [r.outcome, r.reason])]);
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]).toEqual([422, 'urn:lumen:problem:bulk-unknown-alerts', [['refused', 'not-found']]]);
    expect(snapshotDiff(before, await snapshot())).toEqual([]);
  });

  it('records the figures', () => {
    expect(tally.requests).toBe(operations.length * 2);
    recordReliability(SECTION, {
      item: `admin API (${operations.length} operations, from the document) called by another city's operator, with a token and with a console session`,
      figure: `${tally.requests} requests: ${tally.notFound} 404, ${tally.forbidden} 403, ${tally.unprocessable} 422, ${tally.emptyReads} reads with nothing of the other city; 0 leaks, 0 rows changed`,
      detail: 'Every path id, tenantId query and body reference aimed at the other city (tenant, alerts, orders, partner, team, delivery, operator, token); each answer searched for the other city\'s ids, names, codes and requester data; every table fingerprinted before and after each request (test/operators/cross-tenant.test.ts).',
    });
  });
});
