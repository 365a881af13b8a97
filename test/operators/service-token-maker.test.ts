/**
 * A service token dies with its maker's grant: a city-admin makes a service token for
 * their city (in the console or the admin API); once that admin is disabled, or their
 * grant on the city revoked, the token rotates no partner key any more (it did before:
 * it kept its own grants). Re-enabled or granted again, the maker's token works again:
 * it is checked against the maker's current grants on every use.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/audit/index.js';
import { disableOperator, enableOperator, grantRole, revokeRole } from '../../src/services/operators/index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { makeOperator, makeToken, tokenFetch } from './support.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

describe('a service token and its maker', () => {
  it('stops when its maker is disabled or loses the grant, and works again when they have it back', async () => {
    const city = await makeTenant(t.rt, { name: 'Curitiba' });
    const partner = await makePartner(t.rt, { tenantId: city.id });
    const admin = await makeOperator(t.rt, { grants: [{ tenantId: city.id, role: 'city-admin' }] });
    // The admin's own token, through which they make a service token for their city.
    const own = tokenFetch(t, (await makeToken(t.rt, { operator: admin.email })).token);
    const made = await own('/admin-tokens', { json: { name: 'ci-rotation', service: true, grants: [{ tenantId: city.id, role: 'city-admin' }] } });
    expect(made.status).toBe(201);
    const service = tokenFetch(t, ((await made.json()) as { token: string }).token);
    const rotate = async () => (await service(`/partners/${partner.code}/rotate-key`, { method: 'POST' })).status;
    expect(await rotate()).toBe(200);

    await disableOperator(t.rt, cliActor(), admin.email);
    expect(await rotate()).toBe(401);
    await enableOperator(t.rt, cliActor(), admin.email);
    expect(await rotate()).toBe(200);

    await revokeRole(t.rt, cliActor(), admin.email, city.id);
    // It reaches no tenant any more: refused (403, a token with no city to act in).
    expect(await rotate()).toBe(403);
    expect((await service(`/tenants/${city.id}`)).status).toBe(404);
    await grantRole(t.rt, cliActor(), admin.email, city.id, 'viewer');
    // Never more than the maker holds now: a viewer rotates nothing.
    expect(await rotate()).toBe(403);
    await grantRole(t.rt, cliActor(), admin.email, city.id, 'city-admin');
    expect(await rotate()).toBe(200);

    // A service token made by the CLI (no maker) keeps its own grants, as before.
    const cli = tokenFetch(t, (await makeToken(t.rt, { service: true, grants: [{ tenantId: city.id, role: 'city-admin' }] })).token);
    await disableOperator(t.rt, cliActor(), admin.email);
    expect((await cli(`/partners/${partner.code}/rotate-key`, { method: 'POST' })).status).toBe(200);
  });
});
