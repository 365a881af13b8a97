import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPartner } from '../../src/services/partners/index.js';
import { createSandboxPartner } from '../../src/services/sandbox/index.js';
import { cliJson, startTestApp, type TestApp } from '../support/app.js';
import { makeTenant } from '../support/factories.js';
import { intakeBody, postJson } from '../intake/support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

const SCOPES = 'canCreateServiceOrders,canReadCityData';

async function sandbox(code: string): Promise<{ apiKey: string; tenantId: string }> {
  const out = cliJson(await t.cli('partner', 'create', '--code', code, '--scopes', SCOPES, '--transport', 'polling', '--sandbox', '--json'));
  return { apiKey: out.partner.apiKey, tenantId: out.tenant.id };
}

function trigger(apiKey: string, body: unknown) {
  return t.fetch('/api/external/sandbox/events', { method: 'POST', apiKey, json: body, headers: { 'accept-language': 'en' } });
}

async function drainTypes(apiKey: string): Promise<string[]> {
  const types: string[] = [];
  let since: string | null = null;
  for (;;) {
    const res = await t.fetch(`/api/external/events${since ? `?since=${encodeURIComponent(since)}` : ''}`, { apiKey });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { events: { eventType: string }[]; nextSince: string; hasMore: boolean };
    types.push(...page.events.map((e) => e.eventType));
    since = page.nextSince;
    if (!page.hasMore) return types;
  }
}

describe('lumen partner create --sandbox', () => {
  it('creates a sandbox city with demo data, manual triage, and a partner whose key is lmn_test_', async () => {
    const out = cliJson(await t.cli('partner', 'create', '--code', 'sandbox-cli', '--scopes', SCOPES, '--sandbox', '--json'));
    expect(out.tenant).toMatchObject({ sandbox: true, intakePolicy: 'manual' });
    expect(out.partner.apiKey).toMatch(/^lmn_test_/);
    expect(out.city.poles).toBeGreaterThan(0);
    const poles = await t.fetch('/api/external/poles?pageSize=1', { apiKey: out.partner.apiKey });
    expect(((await poles.json()) as { total: number }).total).toBe(out.city.poles);
  });

  it('keeps lmn_test_ keys for sandbox partners in production, where other partners get lmn_live_', async () => {
    const production = { ...t.rt, config: { ...t.rt.config, isProduction: true } };
    const made = await createSandboxPartner(production, { code: 'sandbox-prod', scopes: SCOPES });
    expect(made.partner.apiKey).toMatch(/^lmn_test_/);
    const city = await makeTenant(t.rt);
    const live = await createPartner(production, { tenantId: city.id, code: 'live-prod', scopes: SCOPES });
    expect(live.apiKey).toMatch(/^lmn_live_/);
  });

  it('refuses --sandbox with --tenant, and leaves no sandbox city behind when the partner cannot be created', async () => {
    const city = await makeTenant(t.rt);
    const both = await t.cli('partner', 'create', '--code', 'both', '--scopes', SCOPES, '--sandbox', '--tenant', city.id);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/leave out --tenant/);

    await sandbox('taken-code');
    const before = await t.rt.db.selectFrom('tenant').select((eb) => eb.fn.countAll<number>().as('n')).where('sandbox', '=', true).executeTakeFirstOrThrow();
    const again = await t.cli('partner', 'create', '--code', 'taken-code', '--scopes', SCOPES, '--sandbox', '--json');
    expect(again.code).not.toBe(0);
    const after = await t.rt.db.selectFrom('tenant').select((eb) => eb.fn.countAll<number>().as('n')).where('sandbox', '=', true).executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });
});

describe('POST /api/external/sandbox/events', () => {
  it('causes every event type on the partner’s own requests, with real payloads on the events stream', async () => {
    const { apiKey } = await sandbox('sandbox-flow');
    for (const p of ['SB-1', 'SB-2', 'SB-3']) expect((await postJson(t, apiKey, intakeBody(p))).status).toBe(201);

    const steps: [string, string, string[]][] = [
      ['SB-1', 'ServiceOrder.Created', ['ServiceOrder.Created']],
      ['SB-1', 'ServiceOrder.StatusChanged', ['ServiceOrder.StatusChanged']],
      ['SB-1', 'ServiceOrder.StatusChanged', ['ServiceOrder.StatusChanged']],
      ['SB-1', 'ServiceOrder.Completed', ['ServiceOrder.Completed']],
      ['SB-2', 'Alert.Cancelled', ['Alert.Cancelled']],
      ['SB-3', 'ServiceOrder.Created', ['ServiceOrder.Created']],
      ['SB-3', 'ServiceOrder.Cancelled', ['ServiceOrder.Cancelled']],
      ['SB-3', 'ServiceOrder.Created', ['ServiceOrder.Created']],
      // Completing an OPEN order assigns it first, as an operator must.
      ['SB-3', 'ServiceOrder.Completed', ['ServiceOrder.StatusChanged', 'ServiceOrder.Completed']],
    ];
    const caused: string[] = [];
    for (const [protocolNumber, eventType, expected] of steps) {
      const res = await trigger(apiKey, { protocolNumber, eventType, note: `sandbox ${eventType}` });
      const body = (await res.json()) as { events: { eventId: string; eventType: string }[] };
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body.events.map((e) => e.eventType)).toEqual(expected);
      caused.push(...expected);
    }
    expect(await drainTypes(apiKey)).toEqual(caused);
  });

  it('answers 409 for a state that cannot cause the event, 404 for an unknown request, and changes nothing', async () => {
    const { apiKey } = await sandbox('sandbox-refusals');
    await postJson(t, apiKey, intakeBody('SB-R'));
    const noOrder = await trigger(apiKey, { protocolNumber: 'SB-R', eventType: 'ServiceOrder.Completed' });
    expect(noOrder.status).toBe(409);
    expect(await noOrder.json()).toMatchObject({ type: 'urn:lumen:problem:invalid-transition' });
    expect((await trigger(apiKey, { protocolNumber: 'SB-R', eventType: 'ServiceOrder.Created' })).status).toBe(200);
    const twice = await trigger(apiKey, { protocolNumber: 'SB-R', eventType: 'ServiceOrder.Created' });
    expect(twice.status).toBe(409);
    const unknown = await trigger(apiKey, { protocolNumber: 'NOPE', eventType: 'Alert.Cancelled' });
    expect(unknown.status).toBe(404);
    expect(await drainTypes(apiKey)).toEqual(['ServiceOrder.Created']);
  });

  it('does not exist for a real city’s tenant: 404, and nothing changes', async () => {
    const city = await makeTenant(t.rt, { intakePolicy: 'manual' });
    const partner = await createPartner(t.rt, { tenantId: city.id, code: 'real-city', scopes: SCOPES, transport: 'polling' });
    await postJson(t, partner.apiKey, intakeBody('REAL-1'));
    const res = await trigger(partner.apiKey, { protocolNumber: 'REAL-1', eventType: 'Alert.Cancelled' });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const alert = await t.rt.db.selectFrom('alert').select('status').where('protocol_number', '=', 'REAL-1').executeTakeFirstOrThrow();
    expect(alert.status).toBe('Pending');
    expect(await drainTypes(partner.apiKey)).toEqual([]);
  });

  it('validates the body against the sandbox document (422 with a pointer) and needs a key (401)', async () => {
    const { apiKey } = await sandbox('sandbox-validation');
    const bad = await trigger(apiKey, { protocolNumber: 'X', eventType: 'ServiceOrder.Exploded' });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { errors: { pointer: string }[] }).errors.map((e) => e.pointer)).toContain('/eventType');
    const anonymous = await t.fetch('/api/external/sandbox/events', { method: 'POST', json: { protocolNumber: 'X', eventType: 'Alert.Cancelled' } });
    expect(anonymous.status).toBe(401);
    const doc = await t.fetch('/api/external/sandbox/openapi.json');
    expect(doc.status).toBe(200);
  });
});
