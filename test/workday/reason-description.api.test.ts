/**
 * A partner's reason code carries a description (what the partner means by it), kept
 * with its mapping: set with the mapping (PUT .../reason-codes/{code}), kept when a later
 * mapping leaves it out, removed with null; listed in the reason-mapping table's read;
 * audited; another city's partner is 404 and changes nothing.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner, makeReason, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, auditOf, problemOf } from '../operations/support.js';
import { makeOperator, makeToken } from '../operators/support.js';

let t: TestApp;
let api: ReturnType<typeof adminFetch>;
let manaus: { tenantId: string; partner: { id: string; code: string } };
let portoAlegre: { tenantId: string; partner: { id: string; code: string } };

beforeAll(async () => {
  t = await startTestApp();
  api = adminFetch(t, await adminToken(t, 'mapping-desk'));
  for (const [key, name] of [
    ['manaus', 'Manaus'],
    ['poa', 'Porto Alegre'],
  ] as const) {
    const tenantId = (await makeTenant(t.rt, { name: `${name} ${randomUUID().slice(0, 6)}`, intakePolicy: 'manual' })).id;
    const partner = await makePartner(t.rt, { tenantId });
    await makeReason(t.rt, { tenantId, code: 'POLE_DOWN', priority: 'Critical', slaHours: 4 });
    if (key === 'manaus') manaus = { tenantId, partner };
    else portoAlegre = { tenantId, partner };
  }
});
afterAll(async () => {
  await t?.stop();
});

const DESCRIPTION = 'Poste caído ou inclinado com risco de queda sobre a via (Avenida Constantino Nery e travessas)';
const codesOf = async (partner: string) => ((await (await api(`/partners/${partner}/reason-codes`)).json()) as { items: { partnerCode: string; description: string | null }[] }).items;

describe('a partner code with a description', () => {
  it('is set with the mapping, listed, kept when left out, removed with null; audited', async () => {
    const put = (body: Record<string, unknown>) => api(`/partners/${manaus.partner.code}/reason-codes/POSTE_CAIDO`, { method: 'PUT', json: body });
    const set = await put({ reasonCode: 'POLE_DOWN', description: `  ${DESCRIPTION}  ` });
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({ partnerCode: 'POSTE_CAIDO', reasonCode: 'POLE_DOWN', description: DESCRIPTION });
    expect((await codesOf(manaus.partner.code)).find((c) => c.partnerCode === 'POSTE_CAIDO')?.description).toBe(DESCRIPTION);

    // A new mapping without the field keeps it.
    expect(await (await put({ reasonCode: 'EXTERNAL_OTHER' })).json()).toMatchObject({ reasonCode: 'EXTERNAL_OTHER', description: DESCRIPTION });
    // null (or only spaces) removes it.
    expect(await (await put({ reasonCode: 'POLE_DOWN', description: '   ' })).json()).toMatchObject({ description: null });
    await put({ reasonCode: 'POLE_DOWN', description: DESCRIPTION });
    expect(await (await put({ reasonCode: 'POLE_DOWN', description: null })).json()).toMatchObject({ description: null });
    expect((await codesOf(manaus.partner.code)).find((c) => c.partnerCode === 'POSTE_CAIDO')?.description).toBeNull();

    const audit = (await auditOf(t, manaus.partner.id)).filter((a) => a.action === 'reason.map');
    expect(audit.map((a) => (a.after as { description: string | null }).description)).toEqual(expect.arrayContaining([DESCRIPTION, null]));
  });

  it('longer than 500 characters is 400/422 with a pointer at /description; nothing changes', async () => {
    const res = await api(`/partners/${manaus.partner.code}/reason-codes/LAMPADA_APAGADA`, { method: 'PUT', json: { reasonCode: 'POLE_DOWN', description: 'x'.repeat(501) } });
    expect([400, 422]).toContain(res.status);
    expect((await problemOf(res)).errors?.[0]?.pointer).toBe('/description');
    expect((await codesOf(manaus.partner.code)).find((c) => c.partnerCode === 'LAMPADA_APAGADA')).toBeUndefined();
  });

  it("Porto Alegre's partner, by a Manaus city-admin: 404, nothing written", async () => {
    const admin = await makeOperator(t.rt, { grants: [{ tenantId: manaus.tenantId, role: 'city-admin' }] });
    const call = adminFetch(t, (await makeToken(t.rt, { operator: admin.email })).token);
    const res = await call(`/partners/${portoAlegre.partner.code}/reason-codes/POSTE_CAIDO`, { method: 'PUT', json: { reasonCode: 'POLE_DOWN', description: DESCRIPTION } });
    expect(res.status).toBe(404);
    expect(await codesOf(portoAlegre.partner.code)).toEqual([]);
  });
});
