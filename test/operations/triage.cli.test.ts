import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makePartner, makeReason, makeTeam, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, alertHistory, alertRow, auditOf, cliJson, orderRow, outboxOf, snapshot } from './support.js';

let t: TestApp;
let api: ReturnType<typeof adminFetch>;
let tenantId: string;
let partnerId: string;
const cliActor = `cli:${userInfo().username}`;

beforeAll(async () => {
  t = await startTestApp();
  api = adminFetch(t, await adminToken(t));
  tenantId = (await makeTenant(t.rt, { intakePolicy: 'manual' })).id;
  partnerId = (await makePartner(t.rt, { tenantId })).id;
});
afterAll(async () => {
  await t?.stop();
});

const pending = (o: Partial<Parameters<typeof makeAlert>[1]> = {}) => makeAlert(t.rt, { tenantId, externalSystemId: partnerId, ...o });

/** A refused CLI action: non-zero exit, nothing on stdout, the reason on stderr, nothing changed. */
async function refused(argv: string[], message: string, alertIds: string[], orderIds: string[] = []) {
  const before = await snapshot(t, alertIds, orderIds);
  const out = await t.cli(...argv);
  expect(out.code).toBe(1);
  expect(out.stdout).toBe('');
  expect(out.stderr).toContain(message);
  expect(await snapshot(t, alertIds, orderIds)).toBe(before);
}

describe('lumen alert (triage through the CLI)', () => {
  it('list and show print the API shapes', async () => {
    const alert = await pending({ latitude: null });
    const page = cliJson(await t.cli('alert', 'list', '--tenant', tenantId, '--status', 'Pending', '--not-geolocated', '--json'));
    const fromApi = (await (await api(`/alerts?tenantId=${tenantId}&status=Pending&notGeolocated=true`, { headers: { 'accept-language': 'en' } })).json()) as Record<string, unknown>;
    expect(page).toEqual(fromApi);
    expect(page.items.map((a: { id: string }) => a.id)).toContain(alert.id);
    const shown = cliJson(await t.cli('alert', 'show', alert.id, '--json'));
    expect(shown).toEqual(await (await api(`/alerts/${alert.id}`, { headers: { 'accept-language': 'en' } })).json());
    const human = await t.cli('alert', 'list', '--tenant', tenantId, '--status', 'Pending');
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`#${alert.alertNumber} Pending`);
    expect(human.stdout).toContain('NOT GEOLOCATED');
    const bad = await t.cli('alert', 'list', '--tenant', tenantId, '--status', 'Open');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('status: must be one of: Pending, Linked, Resolved, Cancelled');
    expect((await t.cli('alert', 'list')).code).toBe(2);
  });

  it('create-order: Pending -> Linked; --json prints the new order (2.3); ServiceOrder.Created in the outbox', async () => {
    const team = await makeTeam(t.rt, { tenantId });
    const reason = await makeReason(t.rt, { tenantId, priority: 'High' });
    const alert = await pending();
    const order = cliJson(await t.cli('alert', 'create-order', alert.id, '--team', team.id, '--reason', reason.code, '--json'));
    expect(Object.keys(order).sort()).toEqual(['address', 'closedAt', 'id', 'latitude', 'longitude', 'neighborhood', 'number', 'openedAt', 'poleId', 'priority', 'status', 'team', 'type', 'updatedAt']);
    expect(order).toMatchObject({ status: 'ASSIGNED', team: { id: team.id }, type: reason.code, priority: 'High', number: expect.stringMatching(/^OS-\d{4}-\d{5}$/) });
    expect(await (await api(`/service-orders/${order.id}`)).json()).toMatchObject({ ...order, tenantId, alertCount: 1 });
    expect(await alertRow(t, alert.id)).toMatchObject({ status: 'Linked', service_order_id: order.id, reason_code: reason.code });
    expect((await alertHistory(t, alert.id)).at(-1)).toMatchObject({ from_status: 'Pending', to_status: 'Linked', actor: cliActor });
    expect((await auditOf(t, alert.id))[0]).toMatchObject({ action: 'alert.create-order', actor: cliActor, request_id: null });
    const events = await outboxOf(t, alert.id);
    expect(events.map((e) => [e.type, e.partnerId, e.serviceOrderId])).toEqual([['ServiceOrder.Created', partnerId, order.id]]);

    const human = await t.cli('alert', 'create-order', (await pending()).id);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^Created OS-\d{4}-\d{5} OPEN/);
  });

  it('create-order is refused for Linked, Resolved and Cancelled alerts and for unknown ids', async () => {
    const linked = await pending({ status: 'Linked' });
    await refused(['alert', 'create-order', linked.id, '--json'], 'Cannot create a service order for the alert: the current state is Linked to an order.', [linked.id], [linked.serviceOrderId!]);
    const gone = await pending();
    cliJson(await t.cli('alert', 'discard', gone.id, '--json'));
    await refused(['alert', 'create-order', gone.id], 'the current state is Discarded', [gone.id]);
    const team = await makeTeam(t.rt, { tenantId });
    cliJson(await t.cli('order', 'assign', linked.serviceOrderId!, '--team', team.id, '--json'));
    cliJson(await t.cli('order', 'complete', linked.serviceOrderId!, '--json'));
    await refused(['alert', 'create-order', linked.id], 'the current state is Resolved', [linked.id], [linked.serviceOrderId!]);
    await refused(['alert', 'create-order', '00000000-0000-4000-8000-000000000000'], 'alert 00000000-0000-4000-8000-000000000000 does not exist', []);
    const alert = await pending();
    await refused(['alert', 'create-order', alert.id, '--team', '00000000-0000-4000-8000-000000000000'], "teamId: no such team in the alert's tenant", [alert.id]);
  });

  it('link: Pending -> Linked to an open order (ServiceOrder.Created); refused for a closed order or a non-Pending alert', async () => {
    const first = await pending({ status: 'Linked' });
    const dup = await pending();
    const linked = cliJson(await t.cli('alert', 'link', dup.id, '--order', first.serviceOrderId!, '--json'));
    expect(linked).toMatchObject({ id: dup.id, status: 'Linked', serviceOrder: { id: first.serviceOrderId, status: 'OPEN' } });
    expect((await outboxOf(t, dup.id)).map((e) => [e.type, e.serviceOrderId])).toEqual([['ServiceOrder.Created', first.serviceOrderId]]);

    await refused(['alert', 'link', dup.id, '--order', first.serviceOrderId!], 'Cannot link the alert: the current state is Linked to an order.', [dup.id], [first.serviceOrderId!]);
    cliJson(await t.cli('order', 'cancel', first.serviceOrderId!, '--json'));
    const another = await pending();
    await refused(['alert', 'link', another.id, '--order', first.serviceOrderId!], `Cannot link the alert (${first.serviceOrderNumber}): the current state is Cancelled.`, [another.id], [first.serviceOrderId!]);
    expect((await t.cli('alert', 'link', another.id)).code).toBe(2);
  });

  it('discard: Pending -> Cancelled (Alert.Cancelled); refused for a Linked alert', async () => {
    const alert = await pending();
    const out = cliJson(await t.cli('alert', 'discard', alert.id, '--reason', 'prank', '--json'));
    expect(out).toMatchObject({ id: alert.id, status: 'Cancelled', cancelReason: 'prank', serviceOrder: null });
    const events = await outboxOf(t, alert.id);
    expect(events.map((e) => [e.type, e.serviceOrderId])).toEqual([['Alert.Cancelled', null]]);
    expect(events[0]!.payload).toMatchObject({ serviceOrder: null, alert: { status: 'Cancelled' } });
    const linked = await pending({ status: 'Linked' });
    await refused(['alert', 'discard', linked.id, '--reason', 'x'], 'Cannot discard the alert: the current state is Linked to an order.', [linked.id], [linked.serviceOrderId!]);
    await refused(['alert', 'discard', alert.id], 'the current state is Discarded', [alert.id]);
  });

  it('reclassify: Pending and Linked (the order follows); refused for Resolved; unknown reason named', async () => {
    const reason = await makeReason(t.rt, { tenantId, priority: 'Critical', slaHours: 2 });
    const alert = await pending();
    expect(cliJson(await t.cli('alert', 'reclassify', alert.id, '--reason', reason.code, '--json'))).toMatchObject({ reasonCode: reason.code, priority: 'Critical', status: 'Pending' });
    const linked = await pending({ status: 'Linked' });
    cliJson(await t.cli('alert', 'reclassify', linked.id, '--reason', reason.code, '--json'));
    expect(await orderRow(t, linked.serviceOrderId!)).toMatchObject({ reason_code: reason.code, priority: 'Critical' });
    expect(await outboxOf(t, linked.id)).toEqual([]);
    await refused(['alert', 'reclassify', alert.id, '--reason', 'NOPE'], 'reasonCode: no reason "NOPE"', [alert.id]);
    const team = await makeTeam(t.rt, { tenantId });
    cliJson(await t.cli('order', 'assign', linked.serviceOrderId!, '--team', team.id, '--json'));
    cliJson(await t.cli('order', 'complete', linked.serviceOrderId!, '--json'));
    await refused(['alert', 'reclassify', linked.id, '--reason', 'EXTERNAL_OTHER'], 'Cannot reclassify the alert: the current state is Resolved.', [linked.id], [linked.serviceOrderId!]);
  });

  it('set-location: takes negative coordinates, clears not-geolocated; refused for Cancelled and for bad numbers', async () => {
    const alert = await pending({ latitude: null });
    const out = cliJson(await t.cli('alert', 'set-location', alert.id, '--lat', '-23.561', '--lon', '-46.656', '--json'));
    expect(out).toMatchObject({ latitude: -23.561, longitude: -46.656, geolocated: true, locationSource: 'operator' });
    expect((await auditOf(t, alert.id)).at(-1)).toMatchObject({ action: 'alert.set-location', actor: cliActor });
    await refused(['alert', 'set-location', alert.id, '--lat', 'north', '--lon', '1'], '--lat must be a number', [alert.id]);
    await refused(['alert', 'set-location', alert.id, '--lat', '100', '--lon', '1'], 'latitude: must be a number from -90 to 90', [alert.id]);
    cliJson(await t.cli('alert', 'discard', alert.id, '--json'));
    await refused(['alert', 'set-location', alert.id, '--lat', '1', '--lon', '1'], 'Cannot set the location of the alert: the current state is Discarded.', [alert.id]);
  });
});
