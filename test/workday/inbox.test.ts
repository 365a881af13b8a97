import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makePartner, makeReason, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, cliJson } from '../operations/support.js';
import { intakeBody, PNG, postJson } from '../intake/support.js';
import { listAlerts } from '../../src/services/operations/index.js';
import { cityAccess } from './support.js';

let t: TestApp;
let api: ReturnType<typeof adminFetch>;
let tenantId: string;
let partner: { id: string; code: string; apiKey: string };

beforeAll(async () => {
  t = await startTestApp();
  api = adminFetch(t, await adminToken(t, 'inbox-desk'));
  tenantId = (await makeTenant(t.rt, { intakePolicy: 'manual' })).id;
  partner = (await makePartner(t.rt, { tenantId })) as never;
});
afterAll(async () => {
  await t?.stop();
});

type Item = { id: string; alertNumber: number; description: string; partner: { code: string }; partnerReasonCode: string | null; photos: { id: string; success: boolean; error: string | null }[]; ageMinutes: number; overdue: boolean; slaDueAt: string; geolocated: boolean };

describe('the triage inbox in one call', () => {
  it('lists what triage needs (photos, partner code and raw reason, age, SLA, overdue) with filters and sorts', async () => {
    const withPhoto = await postJson(t, partner.apiKey, intakeBody('INBOX-1', { reasonCode: 'POSTE_PISCANDO', attachments: [{ type: 'photo', contentBase64: PNG.toString('base64'), contentType: 'image/png' }, { type: 'photo', contentBase64: PNG.toString('base64'), contentType: 'image/jpeg' }] }));
    expect(withPhoto.status).toBe(201);
    const other = await makePartner(t.rt, { tenantId });
    const late = await makeAlert(t.rt, { tenantId, externalSystemId: other.id, street: 'Avenida Paulista', latitude: null });
    await t.rt.db.updateTable('alert').set({ sla_due_at: new Date(Date.now() - 60_000), created_at: new Date(Date.now() - 2 * 3_600_000) }).where('id', '=', late.id).execute();
    const critical = await makeReason(t.rt, { tenantId, code: 'POLE_DOWN', priority: 'Critical' });
    const urgent = await makeAlert(t.rt, { tenantId, externalSystemId: other.id, reasonCode: critical.code });
    await t.rt.db.updateTable('alert').set({ priority: 'Critical' }).where('id', '=', urgent.id).execute();

    const res = await api(`/alerts?tenantId=${tenantId}&status=Pending`);
    expect(res.status).toBe(200);
    const items = ((await res.json()) as { items: Item[] }).items;
    const first = items.find((i) => i.id === withPhoto.body.alert.id)!;
    expect(first).toMatchObject({ description: expect.any(String), partner: { code: partner.code }, partnerReasonCode: 'POSTE_PISCANDO', overdue: false, geolocated: true });
    expect(first.photos.map((p) => [p.success, p.error])).toEqual([
      [true, null],
      [false, 'content-mismatch'],
    ]);
    expect((await api(`/alerts/${first.alertNumber}/attachments/${first.photos[0]!.id}?variant=thumbnail`)).status).toBe(200);
    const lateItem = items.find((i) => i.id === late.id)!;
    expect(lateItem).toMatchObject({ overdue: true, geolocated: false });
    expect(lateItem.ageMinutes).toBeGreaterThanOrEqual(119);

    const ids = async (q: string) => ((await (await api(`/alerts?tenantId=${tenantId}&${q}`)).json()) as { items: Item[] }).items.map((i) => i.id);
    expect(await ids('overdue=true')).toEqual([late.id]);
    expect(await ids(`partner=${partner.code}`)).toEqual([withPhoto.body.alert.id]);
    expect(await ids('reason=POLE_DOWN')).toEqual([urgent.id]);
    // The partner's own code is its own filter: as `reason` it is an internal code nobody has.
    expect(await ids('partnerReason=POSTE_PISCANDO')).toEqual([withPhoto.body.alert.id]);
    expect(await ids('reason=POSTE_PISCANDO')).toEqual([]);
    expect(await ids(`partner=${partner.code}&partnerReason=NUNCA_ENVIADO`)).toEqual([]);
    expect(await ids('text=PAULISTA')).toEqual([late.id]);
    expect(await ids('text=INBOX-1')).toEqual([withPhoto.body.alert.id]);
    expect((await ids('sort=priority'))[0]).toBe(urgent.id);
    expect((await ids('sort=age'))[0]).toBe(late.id);
    expect((await ids('sort=newest'))[0]).toBe(urgent.id);
    expect((await api(`/alerts?tenantId=${tenantId}&sort=sideways`)).status).toBe(400);

    const cli = cliJson(await t.cli('alert', 'list', '--tenant', tenantId, '--overdue', '--json'));
    expect(cli.items.map((i: Item) => i.id)).toEqual([late.id]);
    // Another city's operator sees an empty inbox for this tenant.
    const outsider = await listAlerts(t.rt, cityAccess((await makeTenant(t.rt)).id), { tenantId }, 'en');
    expect(outsider).toMatchObject({ items: [], total: 0 });
  });
});
