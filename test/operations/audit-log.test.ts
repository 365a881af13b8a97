/**
 * The audit log as an operator reads it: what each entry is about by the name a person
 * uses (an alert's number, an order's number, a team's name, a partner's code), filters
 * by who did it and by a period, and never an entry of another city.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makePartner, makeTeam, makeTenant } from '../support/factories.js';
import { makeToken, tokenFetch } from '../operators/support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

type Entry = { action: string; actor: string; entityType: string; entityLabel: string | null; at: string };

describe('the audit log', () => {
  it('names each entry’s object, filters by who and when, and keeps to the caller’s cities', async () => {
    const natal = (await makeTenant(t.rt, { name: 'Natal', ibgeCode: '2408102', intakePolicy: 'manual' })).id;
    const manaus = (await makeTenant(t.rt, { name: 'Manaus', ibgeCode: '1302603', intakePolicy: 'manual' })).id;
    const partner = await makePartner(t.rt, { tenantId: natal, code: 'PORTAL-NATAL-156' });
    const team = await makeTeam(t.rt, { tenantId: natal, name: 'Equipe Ponta Negra — Iluminação Litorânea' });
    const desk = (await makeToken(t.rt, { service: true, name: 'mesa-de-triagem-natal', grants: [{ tenantId: natal, role: 'city-admin' }] })).token;
    const night = (await makeToken(t.rt, { service: true, name: 'plantao-noturno', grants: [{ tenantId: natal, role: 'triager' }] })).token;
    const asDesk = tokenFetch(t, desk);
    const asNight = tokenFetch(t, night);
    const a1 = await makeAlert(t.rt, { tenantId: natal, externalSystemId: partner.id });
    const a2 = await makeAlert(t.rt, { tenantId: natal, externalSystemId: partner.id });
    const created = await asDesk(`/alerts/${a1.id}/create-order`, { json: { teamId: team.id } });
    expect(created.status).toBe(201);
    const order = (await created.json()) as { id: string; number: string };
    expect((await asNight(`/alerts/${a2.id}/discard`, { json: { reason: 'Poste de condomínio particular.' } })).status).toBe(200);
    const cut = new Date().toISOString();
    expect((await asNight(`/service-orders/${order.id}/start`, { json: {} })).status).toBe(200);

    const list = async (query: string, as = asDesk) => {
      const res = await as(`/audit?tenantId=${natal}&${query}`);
      expect(res.status, await res.clone().text()).toBe(200);
      return ((await res.json()) as { items: Entry[] }).items;
    };
    const all = await list('limit=100');
    expect(all.map((e) => [e.action, e.entityLabel])).toEqual(
      expect.arrayContaining([
        ['alert.create-order', `#${a1.alertNumber}`],
        ['alert.discard', `#${a2.alertNumber}`],
        ['service-order.start', order.number],
      ]),
    );
    const byNight = await list('actor=PLANTAO');
    expect(byNight.map((e) => e.action).sort()).toEqual(['alert.discard', 'service-order.start']);
    expect(byNight.every((e) => e.actor === 'admin-token:plantao-noturno')).toBe(true);
    expect((await list(`until=${encodeURIComponent(cut)}`)).map((e) => e.action)).not.toContain('service-order.start');
    expect((await list(`since=${encodeURIComponent(cut)}`)).map((e) => e.action)).toEqual(['service-order.start']);
    const bad = await asDesk(`/audit?tenantId=${natal}&until=amanha`);
    expect(bad.status).toBe(400);
    // Another city's operator reads none of it, whatever the filter.
    const outsider = tokenFetch(t, (await makeToken(t.rt, { service: true, grants: [{ tenantId: manaus, role: 'city-admin' }] })).token);
    const res = await outsider(`/audit?actor=plantao`);
    expect(((await res.json()) as { items: Entry[] }).items).toEqual([]);
    // A refused sign-in for an e-mail nobody has records no entity id; a platform admin
    // still reads the whole log (it answered 500 while the label lookup cast every id).
    expect((await t.fetch('/api/admin/session', { method: 'POST', json: { email: 'ninguem@natal.example', password: 'not-a-password-at-all' } })).status).toBe(401);
    const platform = tokenFetch(t, (await makeToken(t.rt, { service: true, platformAdmin: true })).token);
    const everything = await platform('/audit?limit=1000');
    expect(everything.status, await everything.clone().text()).toBe(200);
    const failed = ((await everything.json()) as { items: (Entry & { entityId: string })[] }).items.find((e) => e.action === 'session.sign-in-failed');
    expect(failed).toMatchObject({ entityLabel: null });
  });
});
