/**
 * Roles per tenant: a viewer reads and changes nothing (403), a triager acts on alerts
 * and orders but not on partners, keys, teams or tenant settings, a city-admin does,
 * only a platform admin manages tenants and operators; lists and totals hold only the
 * caller's tenants; tokens never reach more than their operator, and follow the
 * operator's roles at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makePartner, makeTeam, makeTenant } from '../support/factories.js';
import { makeOperator, makeToken, tokenFetch } from './support.js';

let t: TestApp;
let city: { id: string };
let other: { id: string };
let partner: { id: string; code: string };
beforeAll(async () => {
  t = await startTestApp();
  city = await makeTenant(t.rt, { intakePolicy: 'manual' });
  other = await makeTenant(t.rt);
  partner = await makePartner(t.rt, { tenantId: city.id });
  await makePartner(t.rt, { tenantId: other.id });
});
afterAll(async () => {
  await t?.stop();
});

async function asRole(role: 'viewer' | 'triager' | 'city-admin') {
  const op = await makeOperator(t.rt, { grants: [{ tenantId: city.id, role }] });
  return { op, call: tokenFetch(t, (await makeToken(t.rt, { operator: op.email })).token) };
}

describe('roles', () => {
  it('a viewer reads its city but changes nothing: 403 forbidden', async () => {
    const { call } = await asRole('viewer');
    const alert = await makeAlert(t.rt, { tenantId: city.id, externalSystemId: partner.id });
    expect((await call(`/alerts/${alert.id}`)).status).toBe(200);
    const refused = await call(`/alerts/${alert.id}/discard`, { json: { reason: 'x' } });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { type: string }).type).toBe('urn:lumen:problem:forbidden');
    expect((await call(`/partners/${partner.code}`, { method: 'PATCH', json: { rateLimitPerMinute: 5 } })).status).toBe(403);
    expect((await t.rt.db.selectFrom('alert').select('status').where('id', '=', alert.id).executeTakeFirstOrThrow()).status).toBe('Pending');
  });

  it('a triager triages but cannot touch partners, keys, teams or tenant settings', async () => {
    const { call } = await asRole('triager');
    const alert = await makeAlert(t.rt, { tenantId: city.id, externalSystemId: partner.id });
    expect((await call(`/alerts/${alert.id}/discard`, { json: { reason: 'duplicada' } })).status).toBe(200);
    const before = await t.rt.db.selectFrom('api_key').select(['id', 'revoked_at']).where('external_system_id', '=', partner.id).execute();
    expect((await call(`/partners/${partner.code}/rotate-key`, { method: 'POST' })).status).toBe(403);
    expect((await call(`/partners/${partner.code}`, { method: 'PATCH', json: { enabled: false } })).status).toBe(403);
    expect((await call('/partners', { json: { tenantId: city.id, code: 'triager-made', scopes: [] } })).status).toBe(403);
    expect((await call('/teams', { json: { tenantId: city.id, name: 'Equipe do triador' } })).status).toBe(403);
    expect((await call(`/tenants/${city.id}/intake-policy`, { method: 'PUT', json: { intakePolicy: 'automatic' } })).status).toBe(403);
    expect(await t.rt.db.selectFrom('api_key').select(['id', 'revoked_at']).where('external_system_id', '=', partner.id).execute()).toEqual(before);
  });

  it('a city-admin changes its partners and teams, never another city\'s; not tenants; operators of its own city only (test/operators/city-admin.test.ts)', async () => {
    const { call } = await asRole('city-admin');
    expect((await call('/teams', { json: { tenantId: city.id, name: 'Equipe Centro' } })).status).toBe(201);
    expect((await call(`/partners/${partner.code}/rotate-key`, { method: 'POST' })).status).toBe(200);
    expect((await call('/teams', { json: { tenantId: other.id, name: 'Equipe alheia' } })).status).toBe(422);
    expect((await call('/partners', { json: { tenantId: other.id, code: 'alheio', scopes: [] } })).status).toBe(404);
    expect((await call('/tenants', { json: { name: 'Nova cidade' } })).status).toBe(403);
    const operators = await call('/operators');
    expect(operators.status).toBe(200);
    const listed = (await operators.json()) as { items: { grants: { tenantId: string }[] }[] };
    expect(listed.items.every((o) => o.grants.every((g) => g.tenantId === city.id))).toBe(true);
  });

  it('lists and totals show only the granted tenants', async () => {
    const { call } = await asRole('viewer');
    await makeAlert(t.rt, { tenantId: other.id, externalSystemId: (await t.rt.db.selectFrom('external_system').select('id').where('tenant_id', '=', other.id).executeTakeFirstOrThrow()).id });
    const tenants = (await (await call('/tenants')).json()) as { items: { id: string }[] };
    expect(tenants.items.map((x) => x.id)).toEqual([city.id]);
    const partners = (await (await call('/partners')).json()) as { items: { tenantId: string }[] };
    expect(new Set(partners.items.map((p) => p.tenantId))).toEqual(new Set([city.id]));
    const foreign = (await (await call(`/alerts?tenantId=${other.id}`)).json()) as { items: unknown[]; total: number };
    expect(foreign).toMatchObject({ items: [], total: 0 });
    const audit = (await (await call('/audit')).json()) as { items: { tenantId: string | null }[] };
    expect(audit.items.every((e) => e.tenantId === city.id)).toBe(true);
  });

  it('a platform admin creates tenants and operators; the new operator\'s token reaches only what was granted', async () => {
    const admin = await makeOperator(t.rt, { platformAdmin: true });
    const call = tokenFetch(t, (await makeToken(t.rt, { operator: admin.email })).token);
    const created = await call('/tenants', { json: { name: 'Campinas', ibgeCode: '3509502', intakePolicy: 'manual' } });
    expect(created.status).toBe(201);
    const tenant = (await created.json()) as { id: string };
    const op = await call('/operators', { json: { email: 'Bia@Campinas.example', name: 'Bia', grants: [{ tenantId: tenant.id, role: 'triager' }] } });
    expect(op.status).toBe(201);
    expect(op.headers.get('cache-control')).toBe('no-store');
    const body = (await op.json()) as { operator: { id: string; email: string; grants: unknown[] }; initialPassword: string };
    expect(body.operator).toMatchObject({ email: 'bia@campinas.example', grants: [{ tenantId: tenant.id, tenantName: 'Campinas', role: 'triager' }] });
    expect(body.initialPassword.length).toBeGreaterThanOrEqual(12);
    const stored = await t.rt.db.selectFrom('operator').select('password_hash').where('id', '=', body.operator.id).executeTakeFirstOrThrow();
    // scrypt at the configured cost (LUMEN_PASSWORD_COST: 15 by default, 10 in the suite's env).
    expect(stored.password_hash).toMatch(new RegExp(`^scrypt\\$${t.env.LUMEN_PASSWORD_COST}\\$8\\$1\\$`));
    expect(stored.password_hash).not.toContain(body.initialPassword);
    const audit = await t.rt.db.selectFrom('audit_log').select(['action', 'actor', 'operator_id']).where('entity_id', '=', body.operator.id).execute();
    expect(audit).toEqual([{ action: 'operator.create', actor: `operator:${admin.email}`, operator_id: admin.id }]);
  });

  it('a token never reaches more than its operator, and follows the operator\'s roles at once', async () => {
    const { op, call: ownerCall } = await asRole('triager');
    // More than the operator holds: refused.
    const tooMuch = await ownerCall('/admin-tokens', { json: { name: 'too much', grants: [{ tenantId: city.id, role: 'city-admin' }] } });
    expect(tooMuch.status).toBe(422);
    const narrowed = await ownerCall('/admin-tokens', { json: { name: 'read only', grants: [{ tenantId: city.id, role: 'viewer' }] } });
    expect(narrowed.status).toBe(201);
    const readOnly = tokenFetch(t, ((await narrowed.json()) as { token: string }).token);
    const alert = await makeAlert(t.rt, { tenantId: city.id, externalSystemId: partner.id });
    expect((await readOnly(`/alerts/${alert.id}`)).status).toBe(200);
    expect((await readOnly(`/alerts/${alert.id}/discard`, { json: {} })).status).toBe(403);
    // The operator loses the city: their tokens lose it at the next request.
    expect((await t.cli('operator', 'revoke', op.email, '--tenant', city.id)).code).toBe(0);
    expect((await readOnly(`/alerts/${alert.id}`)).status).toBe(404);
    expect((await ownerCall(`/alerts/${alert.id}`)).status).toBe(404);
  });

  it('a city-admin lists and revokes the tokens that reach its city, not others\'', async () => {
    const { call } = await asRole('city-admin');
    const cityToken = await makeToken(t.rt, { grants: [{ tenantId: city.id, role: 'viewer' }] });
    const otherToken = await makeToken(t.rt, { grants: [{ tenantId: other.id, role: 'viewer' }] });
    const listed = ((await (await call('/admin-tokens')).json()) as { items: { id: string }[] }).items.map((x) => x.id);
    expect(listed).toContain(cityToken.id);
    expect(listed).not.toContain(otherToken.id);
    expect((await call(`/admin-tokens/${otherToken.id}/revoke`, { method: 'POST' })).status).toBe(404);
    expect((await call(`/admin-tokens/${cityToken.id}/revoke`, { method: 'POST' })).status).toBe(200);
    expect((await tokenFetch(t, cityToken.token)('/tenants')).status).toBe(401);
    expect((await tokenFetch(t, otherToken.token)('/tenants')).status).toBe(200);
  });

  it('an expired token stops; a service token with grants reaches only them', async () => {
    const service = await makeToken(t.rt, { grants: [{ tenantId: city.id, role: 'triager' }], expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    const call = tokenFetch(t, service.token);
    expect(((await (await call('/tenants')).json()) as { items: { id: string }[] }).items.map((x) => x.id)).toEqual([city.id]);
    await t.rt.db.updateTable('admin_token').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', service.id).execute();
    expect((await call('/tenants')).status).toBe(401);
  });
});
