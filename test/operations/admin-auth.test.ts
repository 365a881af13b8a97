import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, cliJson, problemOf } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

describe('admin tokens and the admin surface', () => {
  it('prints a token once; it opens /api/admin; only its hash is stored', async () => {
    const out = await t.cli('admin-token', 'create', '--name', 'ops-desk');
    expect(out.code).toBe(0);
    const token = /lmn_adm_[A-Za-z0-9]{40}/.exec(out.stdout)?.[0];
    expect(token).toBeDefined();
    expect(out.stdout).toContain('shown once');
    const res = await adminFetch(t, token)('/tenants');
    expect(res.status).toBe(200);
    const row = await t.rt.db.selectFrom('admin_token').selectAll().where('name', '=', 'ops-desk').executeTakeFirstOrThrow();
    expect(row.key_hash.length).toBe(32);
    expect(JSON.stringify(row)).not.toContain(token!.slice(16));
    const listed = cliJson(await t.cli('admin-token', 'list', '--json'));
    expect(listed.tokens.find((x: { name: string }) => x.name === 'ops-desk')).toMatchObject({ keyPrefix: token!.slice(0, 16), revokedAt: null });
    expect(JSON.stringify(listed)).not.toContain(token!.slice(16));
  });

  it('answers 401 invalid-admin-token with a Bearer challenge to no token, a bad token, a partner key, or X-Api-Key', async () => {
    const tenant = await makeTenant(t.rt);
    const partner = await makePartner(t.rt, { tenantId: tenant.id });
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer nonsense' },
      { authorization: 'Basic b3BzOnNlY3JldA==' },
      { authorization: `Bearer lmn_adm_${'A'.repeat(40)}` },
      { authorization: `Bearer ${partner.apiKey}` },
      { 'x-api-key': partner.apiKey },
    ];
    for (const headers of attempts) {
      const res = await t.fetch('/api/admin/tenants', { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="lumen-admin"');
      expect((await problemOf(res)).type).toBe('urn:lumen:problem:invalid-admin-token');
    }
  });

  it('never accepts an admin token on the partner API', async () => {
    const token = await adminToken(t, 'crossing');
    expect((await t.fetch('/api/external/health', { apiKey: token })).status).toBe(401);
    expect((await t.fetch('/api/external/health', { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
  });

  it('stops accepting a revoked token at once, and audits creation and revocation', async () => {
    const created = cliJson(await t.cli('admin-token', 'create', '--name', 'temp', '--json'));
    const api = adminFetch(t, created.token);
    expect((await api('/tenants')).status).toBe(200);
    const revoked = cliJson(await t.cli('admin-token', 'revoke', created.id, '--json'));
    expect(revoked.revokedAt).toEqual(expect.any(String));
    expect(revoked.token).toBeUndefined();
    expect((await api('/tenants')).status).toBe(401);
    const audit = await t.rt.db.selectFrom('audit_log').selectAll().where('entity_id', '=', created.id).orderBy('id').execute();
    expect(audit.map((a) => a.action)).toEqual(['admin-token.create', 'admin-token.revoke']);
    expect(audit[0]!.actor).toMatch(/^cli:/);
    expect(JSON.stringify(audit)).not.toContain(created.token.slice(16));
    const again = await t.cli('admin-token', 'revoke', '00000000-0000-4000-8000-000000000000');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('admin token 00000000-0000-4000-8000-000000000000');
  });

  it('publishes its own document and docs page', async () => {
    const doc = (await (await t.fetch('/api/admin/openapi.json')).json()) as { openapi: string; info: { title: string }; paths: Record<string, unknown> };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBe('Lumen administrative API');
    expect(Object.keys(doc.paths)).toContain('/api/admin/tenants');
    expect(await (await t.fetch('/docs/admin')).text()).toContain('spec-url="/api/admin/openapi.json"');
  });
});

describe('tenants through the admin API', () => {
  it('lists, shows and sets the intake policy (audited, as the token)', async () => {
    const api = adminFetch(t, await adminToken(t, 'tenant-admin'));
    const tenant = await makeTenant(t.rt, { intakePolicy: 'automatic' });
    const list = (await (await api('/tenants')).json()) as { items: { id: string }[] };
    expect(list.items.map((x) => x.id)).toContain(tenant.id);
    expect(await (await api(`/tenants/${tenant.id}`)).json()).toMatchObject({ id: tenant.id, intakePolicy: 'automatic' });
    const set = await api(`/tenants/${tenant.id}/intake-policy`, { method: 'PUT', json: { intakePolicy: 'manual' } });
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({ id: tenant.id, intakePolicy: 'manual' });
    const audit = await t.rt.db.selectFrom('audit_log').selectAll().where('entity_id', '=', tenant.id).execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: 'admin-token:tenant-admin', action: 'tenant.set-intake', tenant_id: tenant.id, before: { intakePolicy: 'automatic' }, after: { intakePolicy: 'manual' } });
    expect(audit[0]!.request_id).toBe(set.headers.get('x-request-id'));

    const bad = await api(`/tenants/${tenant.id}/intake-policy`, { method: 'PUT', json: { intakePolicy: 'sometimes' } });
    expect(bad.status).toBe(422);
    expect((await problemOf(bad)).errors?.[0]?.pointer).toBe('/intakePolicy');
    const missing = await api('/tenants/00000000-0000-4000-8000-000000000000');
    expect(missing.status).toBe(404);
    const notUuid = await api('/tenants/abc');
    expect(notUuid.status).toBe(400);
  });
});
