/**
 * A partner's resend that changes what operators triage by (the description or the
 * place) leaves an audit entry `alert.partner-update` with the changed fields before and
 * after, in the resend's transaction; the alert's timeline shows it and the admin Alert
 * carries `updatedByPartnerAt` (the inbox marks such alerts). A resend that changes
 * nothing, or only the requester, leaves none. Two cities: São Paulo and Manaus.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/audit/log.js';
import { createOrderFromAlert } from '../../src/services/operations/index.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken } from '../operations/support.js';
import { intakeBody, postJson, startIntakeApp, type IntakeTestApp } from './support.js';

let t: IntakeTestApp;
let api: ReturnType<typeof adminFetch>;
const MANAUS = { street: 'Avenida Djalma Batista', number: '1661', neighborhood: 'Chapada', reference: 'Ao lado do Manauara Shopping', latitude: -3.1044, longitude: -60.0119 };

beforeAll(async () => {
  t = await startIntakeApp();
  api = adminFetch(t, await adminToken(t, 'partner-update-desk'));
});
afterAll(async () => {
  await t?.stop();
});

async function city(name: string) {
  const tenant = await makeTenant(t.rt, { name: `${name} ${randomUUID().slice(0, 6)}`, intakePolicy: 'manual' });
  const partner = await makePartner(t.rt, { tenantId: tenant.id });
  return { tenant, partner };
}

const auditOf = (alertId: string) => t.rt.db.selectFrom('audit_log').select(['action', 'actor', 'before', 'after', 'tenant_id']).where('entity_type', '=', 'alert').where('entity_id', '=', alertId).where('action', '=', 'alert.partner-update').orderBy('id').execute();

async function adminAlert(alertId: string) {
  const res = await api(`/alerts/${alertId}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, any>;
}

describe('a resend that changes the description or the place', () => {
  it('in Manaus: records before and after of the changed fields only, shows on the timeline, and sets updatedByPartnerAt on the alert and in the list', async () => {
    const { tenant, partner } = await city('Manaus');
    const protocol = `MAO-${randomUUID()}`;
    const first = await postJson(t, partner.apiKey, intakeBody(protocol, { address: MANAUS }));
    expect(first.status).toBe(201);
    const alertId = first.body.alert.id as string;
    expect((await adminAlert(alertId)).updatedByPartnerAt).toBeNull();

    const description = 'Três postes apagados na avenida inteira, perto do shopping; moradores relatam risco de assalto à noite.';
    const moved = { ...MANAUS, number: '1780', latitude: -3.1031, longitude: -60.0125 };
    const resend = await postJson(t, partner.apiKey, intakeBody(protocol, { address: moved, problem: { description, additionalNotes: 'A rua fica totalmente escura depois das 19h.' } }), { 'idempotency-key': randomUUID() });
    expect(resend.status).toBe(200);

    const rows = await auditOf(alertId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ actor: `partner:${partner.code}`, tenant_id: tenant.id });
    expect(rows[0]!.before).toEqual({ description: 'Lâmpada do poste apagada há três noites.', number: '1661', latitude: -3.1044, longitude: -60.0119 });
    expect(rows[0]!.after).toEqual({ description, number: '1780', latitude: -3.1031, longitude: -60.0125 });

    const alert = await adminAlert(alertId);
    expect(alert.description).toBe(description);
    expect(Date.parse(alert.updatedByPartnerAt)).toBeGreaterThan(Date.parse(alert.createdAt) - 1);

    const timeline = (await (await api(`/alerts/${alertId}/timeline`)).json()) as { items: any[] };
    const entry = timeline.items.find((e) => e.kind === 'audit' && e.title === 'alert.partner-update');
    expect(entry).toMatchObject({ actor: `partner:${partner.code}`, data: { before: { number: '1661' }, after: { number: '1780', description } } });

    const list = (await (await api(`/alerts?tenantId=${tenant.id}&pageSize=20`)).json()) as { items: any[] };
    expect(list.items.find((a) => a.id === alertId)?.updatedByPartnerAt).toBe(alert.updatedByPartnerAt);
  });

  it('in São Paulo: a linked alert whose description changes is marked too (its address stays as triaged)', async () => {
    const { partner } = await city('São Paulo');
    const protocol = `SP-${randomUUID()}`;
    const first = await postJson(t, partner.apiKey, intakeBody(protocol));
    const alertId = first.body.alert.id as string;
    await createOrderFromAlert(t.rt, cliActor(), alertId, {});
    const res = await postJson(t, partner.apiKey, intakeBody(protocol, { problem: { description: 'Lâmpada piscando a noite toda, acende e apaga.', additionalNotes: 'A rua fica totalmente escura depois das 19h.' } }), { 'idempotency-key': randomUUID() });
    expect(res.status).toBe(200);
    const rows = await auditOf(alertId);
    expect(rows.map((r) => Object.keys(r.after as object))).toEqual([['description']]);
    expect((await adminAlert(alertId)).updatedByPartnerAt).not.toBeNull();
  });
});

describe('a resend that changes neither', () => {
  it('leaves no entry when nothing changed, or only the requester did', async () => {
    const { partner } = await city('São Paulo');
    const protocol = `SP-${randomUUID()}`;
    const first = await postJson(t, partner.apiKey, intakeBody(protocol));
    const alertId = first.body.alert.id as string;
    expect((await postJson(t, partner.apiKey, intakeBody(protocol), { 'idempotency-key': randomUUID() })).status).toBe(200);
    const requester = { name: 'Maria Aparecida dos Santos Figueiredo de Albuquerque', phone: '+5511912345678' };
    expect((await postJson(t, partner.apiKey, intakeBody(protocol, { requester }), { 'idempotency-key': randomUUID() })).status).toBe(200);
    expect(await auditOf(alertId)).toEqual([]);
    expect((await adminAlert(alertId)).updatedByPartnerAt).toBeNull();
  });
});
