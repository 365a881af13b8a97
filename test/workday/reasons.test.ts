import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makeCityOrder, makePartner, makeReason, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, auditOf, cliJson, problemOf } from '../operations/support.js';
import { applyReasonMapping, mapReason, partnerReasonCodes, tenantAttention } from '../../src/services/operations/index.js';
import { AppError } from '../../src/lib/errors.js';
import { cityAccess, outsiderCaller } from './support.js';

let t: TestApp;
let api: ReturnType<typeof adminFetch>;
let tenantId: string;
let partner: { id: string; code: string };

beforeAll(async () => {
  t = await startTestApp();
  api = adminFetch(t, await adminToken(t, 'reasons-desk'));
  tenantId = (await makeTenant(t.rt, { intakePolicy: 'manual' })).id;
  partner = await makePartner(t.rt, { tenantId });
});
afterAll(async () => {
  await t?.stop();
});


async function withPartnerCode(code: string, n: number, status: 'Pending' | 'Linked' = 'Pending') {
  const made = [];
  for (let i = 0; i < n; i++) {
    const a = await makeAlert(t.rt, { tenantId, externalSystemId: partner.id, status });
    await t.rt.db.updateTable('alert').set({ partner_reason_code: code }).where('id', '=', a.id).execute();
    made.push(a);
  }
  return made;
}

describe('reason catalogue and partner reason mapping', () => {
  it('creates and lists reasons through the API (audited), shows codes seen but unmapped, maps one and applies it to the waiting Pending alerts', async () => {
    const created = await api(`/tenants/${tenantId}/reasons`, { json: { code: 'POLE_DOWN', namePt: 'Poste caído', nameEn: 'Pole down', priority: 'Critical', slaHours: 4 } });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ code: 'POLE_DOWN', priority: 'Critical', slaHours: 4 });
    expect((await api(`/tenants/${tenantId}/reasons`, { json: { code: 'POLE_DOWN', namePt: 'x', nameEn: 'x', priority: 'Low', slaHours: 1 } })).status).toBe(409);
    const list = (await (await api(`/tenants/${tenantId}/reasons`)).json()) as { items: { code: string }[] };
    expect(list.items.map((r) => r.code)).toEqual(expect.arrayContaining(['EXTERNAL_OTHER', 'POLE_DOWN']));
    expect((await auditOf(t, tenantId)).map((a) => a.action)).toContain('reason.create');

    const pending = await withPartnerCode('POSTE_CAIDO', 2);
    const [linked] = await withPartnerCode('POSTE_CAIDO', 1, 'Linked');
    const codes = (await (await api(`/partners/${partner.code}/reason-codes`)).json()) as { items: { partnerCode: string; reasonCode: string | null; alerts: number; pendingAlerts: number }[] };
    expect(codes.items).toContainEqual({ partnerCode: 'POSTE_CAIDO', reasonCode: null, description: null, alerts: 3, pendingAlerts: 2, alertsToApply: 0, lastSeenAt: expect.any(String) });
    const toApply = async () => ((await (await api(`/partners/${partner.code}/reason-codes`)).json()) as { items: { partnerCode: string; alertsToApply: number }[] }).items.find((c) => c.partnerCode === 'POSTE_CAIDO')!.alertsToApply;

    const mapped = await api(`/partners/${partner.code}/reason-codes/POSTE_CAIDO`, { method: 'PUT', json: { reasonCode: 'POLE_DOWN' } });
    expect(mapped.status).toBe(200);
    expect(await mapped.json()).toEqual({ partner: partner.code, partnerCode: 'POSTE_CAIDO', tenantId, reasonCode: 'POLE_DOWN', description: null });
    const unknown = await api(`/partners/${partner.code}/reason-codes/POSTE_CAIDO`, { method: 'PUT', json: { reasonCode: 'NOPE' } });
    expect(unknown.status).toBe(422);
    expect((await problemOf(unknown)).errors).toEqual([{ pointer: '/reasonCode', message: expect.any(String) }]);
    const mapAudit = (await auditOf(t, partner.id)).find((a) => a.action === 'reason.map')!;
    expect(mapAudit).toMatchObject({ before: null, after: { partnerCode: 'POSTE_CAIDO', reasonCode: 'POLE_DOWN' }, actor: 'admin-token:reasons-desk' });
    // The two Pending alerts still carry EXTERNAL_OTHER: apply would change them (the Linked one is left alone).
    expect(await toApply()).toBe(2);

    const applied = await api(`/partners/${partner.code}/reason-codes/POSTE_CAIDO/apply`, { method: 'POST' });
    expect(applied.status).toBe(200);
    expect(await applied.json()).toEqual({ partner: partner.code, partnerCode: 'POSTE_CAIDO', reasonCode: 'POLE_DOWN', reclassified: 2, alertNumbers: pending.map((a) => a.alertNumber) });
    for (const a of pending) {
      const row = await t.rt.db.selectFrom('alert').selectAll().where('id', '=', a.id).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ reason_code: 'POLE_DOWN', priority: 'Critical' });
      expect(row.sla_due_at.getTime()).toBe(row.created_at.getTime() + 4 * 3_600_000);
      expect((await auditOf(t, a.id)).map((e) => e.action)).toEqual(['alert.reclassify']);
    }
    expect((await t.rt.db.selectFrom('alert').select('reason_code').where('id', '=', linked!.id).executeTakeFirstOrThrow()).reason_code).toBe('EXTERNAL_OTHER');
    // Applying again finds nothing left to change, as the list said.
    expect(await toApply()).toBe(0);
    expect(((await (await api(`/partners/${partner.code}/reason-codes/POSTE_CAIDO/apply`, { method: 'POST' })).json()) as { reclassified: number }).reclassified).toBe(0);
    expect((await api(`/partners/${partner.code}/reason-codes/NEVER_MAPPED/apply`, { method: 'POST' })).status).toBe(404);

    const removed = await api(`/partners/${partner.code}/reason-codes/POSTE_CAIDO`, { method: 'DELETE' });
    expect(await removed.json()).toEqual({ partner: partner.code, partnerCode: 'POSTE_CAIDO', removed: true });
    expect((await auditOf(t, partner.id)).map((a) => a.action)).toEqual(expect.arrayContaining(['reason.map', 'reason.apply-mapping', 'reason.unmap']));
  });

  it('does the same through the CLI, audited as the system user', async () => {
    await withPartnerCode('APAGADA', 1);
    await makeReason(t.rt, { tenantId, code: 'LAMP_OUT' });
    cliJson(await t.cli('reason', 'map', '--partner', partner.code, '--from', 'APAGADA', '--to', 'LAMP_OUT', '--json'));
    const codes = cliJson(await t.cli('reason', 'codes', '--partner', partner.code, '--json'));
    expect(codes.items).toContainEqual(expect.objectContaining({ partnerCode: 'APAGADA', reasonCode: 'LAMP_OUT', pendingAlerts: 1 }));
    const applied = cliJson(await t.cli('reason', 'apply', '--partner', partner.code, '--from', 'APAGADA', '--json'));
    expect(applied.reclassified).toBe(1);
    expect((await auditOf(t, partner.id)).filter((a) => a.action === 'reason.map').at(-1)!.actor).toMatch(/^cli:/);
  });

  it('refuses another city (404, nothing changed) and a viewer (403)', async () => {
    const other = (await makeTenant(t.rt)).id;
    await withPartnerCode('OUTRO', 1);
    await makeReason(t.rt, { tenantId, code: 'OTHER_CITY_TRY' });
    cliJson(await t.cli('reason', 'map', '--partner', partner.code, '--from', 'OUTRO', '--to', 'OTHER_CITY_TRY', '--json'));
    const before = JSON.stringify(await t.rt.db.selectFrom('alert').selectAll().where('tenant_id', '=', tenantId).orderBy('id').execute()) + (await auditOf(t, partner.id)).length;
    const them = outsiderCaller(cityAccess(other));
    const code = async (p: Promise<unknown>) => ((await p.then(() => null, (e: unknown) => e)) as AppError).code;
    expect(await code(partnerReasonCodes(t.rt, partner.code, them))).toBe('not-found');
    expect(await code(mapReason(t.rt, { partnerCode: partner.code, from: 'OUTRO', to: 'LAMP_OUT' }, them))).toBe('not-found');
    expect(await code(applyReasonMapping(t.rt, partner.code, 'OUTRO', them))).toBe('not-found');
    expect(await code(tenantAttention(t.rt, them.access, tenantId))).toBe('not-found');
    const viewer = outsiderCaller(cityAccess(tenantId, 'viewer'));
    expect(await code(applyReasonMapping(t.rt, partner.code, 'OUTRO', viewer))).toBe('forbidden');
    expect(await code(mapReason(t.rt, { partnerCode: partner.code, from: 'OUTRO', to: 'LAMP_OUT' }, outsiderCaller(cityAccess(tenantId, 'triager'))))).toBe('forbidden');
    expect((await partnerReasonCodes(t.rt, partner.code, viewer)).partner).toBe(partner.code);
    const after = JSON.stringify(await t.rt.db.selectFrom('alert').selectAll().where('tenant_id', '=', tenantId).orderBy('id').execute()) + (await auditOf(t, partner.id)).length;
    expect(after).toBe(before);
  });
});

describe('attention counts', () => {
  it("counts one tenant's queues and nothing of another's", async () => {
    const city = (await makeTenant(t.rt, { intakePolicy: 'manual' })).id;
    const p = await makePartner(t.rt, { tenantId: city });
    await makeAlert(t.rt, { tenantId: city, externalSystemId: p.id });
    await makeAlert(t.rt, { tenantId: city, externalSystemId: p.id, latitude: null });
    const late = await makeCityOrder(t.rt, { tenantId: city });
    await t.rt.db.updateTable('service_order').set({ sla_due_at: new Date(Date.now() - 60_000) }).where('id', '=', late.id).execute();
    const res = await api(`/tenants/${city}/attention`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ tenantId: city, pendingAlerts: 2, overduePendingAlerts: 0, notGeolocatedAlerts: 1, overdueServiceOrders: 1, deadDeliveries: 0, rejectedInboundItems: 0, failedAttachmentUrls: 0 });
    expect(cliJson(await t.cli('tenant', 'attention', city, '--json')).pendingAlerts).toBe(2);
    expect((await api(`/tenants/${tenantId}/attention`)).status).toBe(200);
    expect((await tenantAttention(t.rt, cityAccess(city, 'viewer'), city)).pendingAlerts).toBe(2);
  });
});
