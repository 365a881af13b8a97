import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makePartner, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, cliJson } from '../operations/support.js';
import { alertTimeline, resolveAlert } from '../../src/services/operations/index.js';
import { PLATFORM_ACCESS } from '../../src/services/operators/index.js';
import { AppError } from '../../src/lib/errors.js';
import { cityAccess } from './support.js';

let t: TestApp;
let api: ReturnType<typeof adminFetch>;
let tenantId: string;
let partner: { id: string; code: string };

beforeAll(async () => {
  t = await startTestApp();
  api = adminFetch(t, await adminToken(t, 'timeline-desk'));
  tenantId = (await makeTenant(t.rt, { intakePolicy: 'manual' })).id;
  partner = await makePartner(t.rt, { tenantId });
});
afterAll(async () => {
  await t?.stop();
});

type Entry = { at: string; kind: string; actor: string | null; title: string; note: string | null; data: Record<string, unknown> };

describe('timelines', () => {
  it("merges an alert's status history, audit entries and events, oldest first, by display number; the order's too", async () => {
    const alert = await makeAlert(t.rt, { tenantId, externalSystemId: partner.id });
    const order = (await (await api(`/alerts/${alert.alertNumber}/create-order`, { json: {} })).json()) as { id: string; number: string };
    expect((await api(`/service-orders/${order.number}/cancel`, { json: { reason: 'duplicate' } })).status).toBe(200);

    const res = await api(`/alerts/${alert.alertNumber}/timeline`);
    expect(res.status).toBe(200);
    const items = ((await res.json()) as { items: Entry[] }).items;
    expect(items.map((e) => [e.kind, e.title])).toEqual([
      ['status', 'Pending'],
      ['status', 'Pending -> Linked'],
      ['audit', 'alert.create-order'],
      ['event', 'ServiceOrder.Created'],
      ['status', 'Linked -> Pending'],
      ['event', 'ServiceOrder.Cancelled'],
    ]);
    expect(items[2]!.actor).toBe('admin-token:timeline-desk');
    expect(items[2]!.data).toMatchObject({ before: { status: 'Pending' }, after: { status: 'Linked' } });
    expect(items[3]!.data).toMatchObject({ partner: partner.code, alertNumber: alert.alertNumber });
    expect([...items].map((e) => e.at)).toEqual([...items].map((e) => e.at).sort());

    const orderItems = ((await (await api(`/service-orders/${order.number}/timeline`)).json()) as { items: Entry[] }).items;
    expect(orderItems.map((e) => [e.kind, e.title])).toEqual(
      expect.arrayContaining([
        ['status', 'OPEN'],
        ['status', 'OPEN -> CANCELLED'],
        ['audit', 'service-order.cancel'],
        ['event', 'ServiceOrder.Created'],
        ['event', 'ServiceOrder.Cancelled'],
      ]),
    );
    // An order's events come from each of its alerts: each says which one.
    for (const e of orderItems.filter((x) => x.kind === 'event' || x.kind === 'delivery')) expect(e.data.alertNumber).toBe(alert.alertNumber);
    const cli = cliJson(await t.cli('order', 'timeline', order.number, '--json'));
    expect(cli.items).toHaveLength(orderItems.length);
    expect(cliJson(await t.cli('alert', 'timeline', `#${alert.alertNumber}`, '--tenant', tenantId, '--json')).items).toHaveLength(items.length);
  });

  it('shows another city nothing: 404 as for an unknown alert', async () => {
    const alert = await makeAlert(t.rt, { tenantId, externalSystemId: partner.id });
    const other = (await makeTenant(t.rt)).id;
    const err = await resolveAlert(t.rt.db, cityAccess(other), alert.id).then(() => null, (e: unknown) => e);
    expect((err as AppError).code).toBe('not-found');
    const ref = await resolveAlert(t.rt.db, PLATFORM_ACCESS, alert.id);
    const direct = await alertTimeline(t.rt.db, cityAccess(other), ref).then(() => null, (e: unknown) => e);
    expect((direct as AppError).code).toBe('not-found');
    expect((await api('/alerts/999999/timeline')).status).toBe(404);
  });
});
