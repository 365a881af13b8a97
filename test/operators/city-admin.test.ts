/**
 * City-admins manage their own cities' operators through the admin API (issue 23 §4
 * defect 10): invite, grant and revoke a role, reset a password, disable and enable,
 * in the cities they administer only. Curitiba and Manaus, and Porto Alegre where the
 * Curitiba admin is only a viewer; an operator of Curitiba and Manaus is shared.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeTenant } from '../support/factories.js';
import { makeOperator, makeToken, signIn, tokenFetch, type MadeOperator } from './support.js';

let t: TestApp;
let curitiba: string;
let manaus: string;
let portoAlegre: string;
let admin: ReturnType<typeof tokenFetch>;
/** Only Curitiba's. */
let local: MadeOperator;
/** Curitiba and Manaus. */
let shared: MadeOperator;
/** Only Manaus's. */
let foreign: MadeOperator;
/** Curitiba and a platform admin. */
let platform: MadeOperator;

type OperatorBody = { id: string; email: string; platformAdmin: boolean; grants: { tenantId: string; tenantName: string; role: string }[]; disabledAt: string | null; rolesElsewhere?: boolean };

async function problem(res: Response): Promise<{ status: number; type: string; detail: string }> {
  const body = (await res.json()) as { type: string; detail: string };
  return { status: res.status, type: body.type, detail: body.detail };
}

beforeAll(async () => {
  t = await startTestApp();
  curitiba = (await makeTenant(t.rt, { name: 'Curitiba', ibgeCode: '4106902' })).id;
  manaus = (await makeTenant(t.rt, { name: 'Manaus', ibgeCode: '1302603' })).id;
  portoAlegre = (await makeTenant(t.rt, { name: 'Porto Alegre', ibgeCode: '4314902' })).id;
  const me = await makeOperator(t.rt, { email: 'coordenacao.iluminacao@curitiba.pr.gov.br', name: 'Coordenação de Iluminação Pública de Curitiba', grants: [{ tenantId: curitiba, role: 'city-admin' }, { tenantId: portoAlegre, role: 'viewer' }] });
  admin = tokenFetch(t, (await makeToken(t.rt, { operator: me.email })).token);
  local = await makeOperator(t.rt, { email: 'joana.kowalczyk@curitiba.pr.gov.br', name: 'Joana Kowalczyk', grants: [{ tenantId: curitiba, role: 'viewer' }] });
  shared = await makeOperator(t.rt, { email: 'consorcio.norte-sul@iluminacao.example', name: 'Consórcio Norte-Sul', grants: [{ tenantId: curitiba, role: 'triager' }, { tenantId: manaus, role: 'city-admin' }] });
  foreign = await makeOperator(t.rt, { email: 'raimundo.nonato@manaus.am.gov.br', name: 'Raimundo Nonato', grants: [{ tenantId: manaus, role: 'triager' }] });
  platform = await makeOperator(t.rt, { email: 'suporte@lumen.example', name: 'Suporte Lumen', platformAdmin: true, grants: [{ tenantId: curitiba, role: 'viewer' }] });
});
afterAll(async () => {
  await t?.stop();
});

describe('what a city-admin sees', () => {
  it("lists only operators with a role in its cities, each with only those cities' roles", async () => {
    const res = await admin('/operators');
    expect(res.status).toBe(200);
    const text = await res.clone().text();
    const items = ((await res.json()) as { items: OperatorBody[] }).items;
    const emails = items.map((o) => o.email);
    expect(emails).toContain(local.email);
    expect(emails).toContain(shared.email);
    expect(emails).not.toContain(foreign.email);
    // Never another city's role, id or name.
    expect(text).not.toContain(manaus);
    expect(text).not.toContain('Manaus');
    expect(text).not.toContain(portoAlegre);
    const s = items.find((o) => o.email === shared.email)!;
    expect(s.grants).toEqual([{ tenantId: curitiba, tenantName: 'Curitiba', role: 'triager' }]);
    expect(s.rolesElsewhere).toBe(true);
    expect(items.find((o) => o.email === local.email)!.rolesElsewhere).toBe(false);
    expect(items.find((o) => o.email === platform.email)!.rolesElsewhere).toBe(true);
  });

  it('reads one operator of its cities; one with no role there is 404, as an unknown one', async () => {
    const s = await admin(`/operators/${shared.id}`);
    expect(s.status).toBe(200);
    expect(await s.text()).not.toContain('Manaus');
    expect((await admin(`/operators/${foreign.id}`)).status).toBe(404);
    expect((await admin(`/operators/${foreign.email}`)).status).toBe(404);
    expect((await admin('/operators/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('a triager or viewer manages no operators', async () => {
    const viewer = tokenFetch(t, (await makeToken(t.rt, { operator: local.email })).token);
    expect((await viewer('/operators')).status).toBe(403);
    expect((await viewer(`/operators/${local.id}/disable`, { method: 'POST' })).status).toBe(403);
  });
});

describe('invite', () => {
  it('invites with roles in its cities; the password comes back once', async () => {
    const res = await admin('/operators', { json: { email: 'Ana.Paula.Wisniewski@Curitiba.pr.gov.br', name: 'Ana Paula Wiśniewski', grants: [{ tenantId: curitiba, role: 'triager' }] } });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as { operator: OperatorBody; initialPassword: string };
    expect(body.operator).toMatchObject({ email: 'ana.paula.wisniewski@curitiba.pr.gov.br', platformAdmin: false, grants: [{ tenantId: curitiba, role: 'triager' }], rolesElsewhere: false });
    expect(body.initialPassword.length).toBeGreaterThanOrEqual(12);
    await signIn(t, body.operator.email, body.initialPassword);
  });

  it('never a platform admin (403 platform-admin-only), never in another city (404), never without a role in its cities (422)', async () => {
    const before = await t.rt.db.selectFrom('operator').select('id').execute();
    const p = await problem(await admin('/operators', { json: { email: 'novo.admin@curitiba.pr.gov.br', name: 'Novo', platformAdmin: true, grants: [{ tenantId: curitiba, role: 'viewer' }] } }));
    expect(p).toMatchObject({ status: 403, type: 'urn:lumen:problem:platform-admin-only' });
    expect(p.detail).toContain('administrador da plataforma');
    expect((await admin('/operators', { json: { email: 'x1@manaus.am.gov.br', name: 'X', grants: [{ tenantId: manaus, role: 'viewer' }] } })).status).toBe(404);
    expect((await admin('/operators', { json: { email: 'x2@curitiba.pr.gov.br', name: 'X', grants: [{ tenantId: curitiba, role: 'viewer' }, { tenantId: portoAlegre, role: 'viewer' }] } })).status).toBe(404);
    expect((await admin('/operators', { json: { email: 'x3@curitiba.pr.gov.br', name: 'X', grants: [] } })).status).toBe(422);
    expect(await t.rt.db.selectFrom('operator').select('id').execute()).toEqual(before);
  });
});

describe('grant and revoke', () => {
  it('grants and revokes a role in its city, audited', async () => {
    const g = await admin(`/operators/${local.id}/grants/${curitiba}`, { method: 'PUT', json: { role: 'triager' } });
    expect(g.status).toBe(200);
    expect(((await g.json()) as OperatorBody).grants).toEqual([{ tenantId: curitiba, tenantName: 'Curitiba', role: 'triager' }]);
    // The shared operator's Curitiba role changes; Manaus's stays as it was.
    expect((await admin(`/operators/${shared.id}/grants/${curitiba}`, { method: 'PUT', json: { role: 'viewer' } })).status).toBe(200);
    const grants = await t.rt.db.selectFrom('operator_grant').select(['tenant_id', 'role']).where('operator_id', '=', shared.id).orderBy('role').execute();
    expect(grants).toEqual([{ tenant_id: manaus, role: 'city-admin' }, { tenant_id: curitiba, role: 'viewer' }]);
    const r = await admin(`/operators/${shared.id}/grants/${curitiba}`, { method: 'DELETE' });
    expect(r.status).toBe(200);
    const after = (await r.json()) as OperatorBody;
    expect(after.grants).toEqual([]);
    expect(JSON.stringify(after)).not.toContain(manaus);
    const audit = await t.rt.db.selectFrom('audit_log').select('action').where('entity_id', '=', shared.id).orderBy('id').execute();
    expect(audit.map((a) => a.action)).toEqual(['operator.create', 'operator.grant', 'operator.revoke']);
    // Gone from its city: the operator no longer exists for this admin.
    expect((await admin(`/operators/${shared.id}`)).status).toBe(404);
    await t.rt.db.insertInto('operator_grant').values({ operator_id: shared.id, tenant_id: curitiba, role: 'triager' }).execute();
  });

  it('never in a city it does not administer: 404 where it holds nothing, 403 where it holds a lower role', async () => {
    expect((await admin(`/operators/${shared.id}/grants/${manaus}`, { method: 'PUT', json: { role: 'viewer' } })).status).toBe(404);
    expect((await admin(`/operators/${shared.id}/grants/${manaus}`, { method: 'DELETE' })).status).toBe(404);
    expect((await admin(`/operators/${local.id}/grants/${portoAlegre}`, { method: 'PUT', json: { role: 'viewer' } })).status).toBe(403);
    const grants = await t.rt.db.selectFrom('operator_grant').select(['tenant_id', 'role']).where('operator_id', 'in', [shared.id, local.id]).execute();
    expect(grants.filter((g) => g.tenant_id === manaus)).toEqual([{ tenant_id: manaus, role: 'city-admin' }]);
    expect(grants.filter((g) => g.tenant_id === portoAlegre)).toEqual([]);
  });

  it('never platform-admin (not a role on a city)', async () => {
    const res = await admin(`/operators/${local.id}/grants/${curitiba}`, { method: 'PUT', json: { role: 'platform-admin' } });
    expect([400, 422]).toContain(res.status);
    expect((await t.rt.db.selectFrom('operator').select('platform_admin').where('id', '=', local.id).executeTakeFirstOrThrow()).platform_admin).toBe(false);
  });

  it("an operator with no role in the admin's cities is 404 for every action", async () => {
    for (const [path, init] of [
      [`/operators/${foreign.id}/grants/${curitiba}`, { method: 'PUT', json: { role: 'viewer' } }],
      [`/operators/${foreign.id}/grants/${curitiba}`, { method: 'DELETE' }],
      [`/operators/${foreign.id}/disable`, { method: 'POST' }],
      [`/operators/${foreign.id}/enable`, { method: 'POST' }],
      [`/operators/${foreign.id}/reset-password`, { method: 'POST' }],
    ] as const) {
      expect((await admin(path, init as RequestInit & { json?: unknown })).status, path).toBe(404);
    }
    expect(await t.rt.db.selectFrom('operator_grant').select('tenant_id').where('operator_id', '=', foreign.id).execute()).toEqual([{ tenant_id: manaus }]);
  });
});

describe('reset a password, disable, enable', () => {
  it("resets the password of its city's operator: a new one, once; the old one and the sessions end", async () => {
    const before = await signIn(t, local.email, local.password);
    const res = await admin(`/operators/${local.id}/reset-password`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const { password } = (await res.json()) as { password: string };
    expect(password.length).toBeGreaterThanOrEqual(12);
    expect((await t.fetch('/api/admin/session', { headers: { cookie: before.cookie } })).status).toBe(401);
    expect((await t.fetch('/api/admin/session', { method: 'POST', json: { email: local.email, password: local.password } })).status).toBe(401);
    await signIn(t, local.email, password);
    local.password = password;
    const audit = await t.rt.db.selectFrom('audit_log').select(['action', 'after']).where('entity_id', '=', local.id).where('action', '=', 'operator.reset-password').execute();
    expect(audit).toHaveLength(1);
    expect(JSON.stringify(audit)).not.toContain(password);
  });

  it('disables and enables its city operator', async () => {
    const d = await admin(`/operators/${local.id}/disable`, { method: 'POST' });
    expect(d.status).toBe(200);
    expect(((await d.json()) as OperatorBody).disabledAt).not.toBeNull();
    expect((await t.fetch('/api/admin/session', { method: 'POST', json: { email: local.email, password: local.password } })).status).toBe(401);
    const e = await admin(`/operators/${local.id}/enable`, { method: 'POST' });
    expect(((await e.json()) as OperatorBody).disabledAt).toBeNull();
  });

  it('refuses with 403 operator-beyond-your-cities, in words, for an operator who also holds a role elsewhere or is a platform admin', async () => {
    for (const who of [shared, platform]) {
      for (const action of ['disable', 'enable', 'reset-password']) {
        const p = await problem(await admin(`/operators/${who.id}/${action}`, { method: 'POST' }));
        expect(p, `${who.email} ${action}`).toMatchObject({ status: 403, type: 'urn:lumen:problem:operator-beyond-your-cities' });
        expect(p.detail).toContain('uma cidade que você não administra');
        expect(p.detail).not.toContain('Manaus');
      }
    }
    const en = await admin(`/operators/${shared.id}/disable`, { method: 'POST', headers: { 'accept-language': 'en' } });
    expect(((await en.json()) as { detail: string }).detail).toContain('a city you do not administer');
    const rows = await t.rt.db.selectFrom('operator').select(['disabled_at', 'password_hash']).where('id', 'in', [shared.id, platform.id]).execute();
    expect(rows.every((r) => r.disabled_at === null)).toBe(true);
    await signIn(t, shared.email, shared.password);
  });

  it('a platform admin still does all of it, everywhere', async () => {
    const root = tokenFetch(t, (await makeToken(t.rt, { service: true, platformAdmin: true })).token);
    expect(((await (await root(`/operators/${shared.id}`)).json()) as OperatorBody).grants.map((g) => g.tenantName).sort()).toEqual(['Curitiba', 'Manaus']);
    expect((await root(`/operators/${shared.id}/reset-password`, { method: 'POST' })).status).toBe(200);
    expect((await root(`/operators/${foreign.id}/disable`, { method: 'POST' })).status).toBe(200);
  });
});
