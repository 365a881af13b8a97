import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makeCityOrder, makePartner, makeTeam, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, cliJson, problemOf } from '../operations/support.js';
import { listServiceOrders, resolveAlert, resolveOrder, resolveTeam } from '../../src/services/operations/index.js';
import { AppError } from '../../src/lib/errors.js';
import { cityAccess } from './support.js';

let t: TestApp;
let api: ReturnType<typeof adminFetch>;
let cityA: string;
let cityB: string;
let partnerA: { id: string; code: string };
let teamA: { id: string; name: string };

beforeAll(async () => {
  t = await startTestApp();
  api = adminFetch(t, await adminToken(t, 'orders-desk'));
  cityA = (await makeTenant(t.rt, { intakePolicy: 'manual' })).id;
  cityB = (await makeTenant(t.rt, { intakePolicy: 'manual' })).id;
  partnerA = await makePartner(t.rt, { tenantId: cityA });
  teamA = await makeTeam(t.rt, { tenantId: cityA, name: 'Equipe Centro 03' });
});
afterAll(async () => {
  await t?.stop();
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(AppError);
  return (err as AppError).code;
}

describe('display numbers', () => {
  it('finds alerts by 42 and #42, orders by OS number in any case, teams by name; another city sees none of them', async () => {
    const alert = await makeAlert(t.rt, { tenantId: cityA, externalSystemId: partnerA.id, status: 'Linked' });
    const access = cityAccess(cityA, 'viewer');
    expect(await resolveAlert(t.rt.db, access, String(alert.alertNumber))).toEqual({ id: alert.id, tenantId: cityA });
    expect(await resolveAlert(t.rt.db, access, `#${alert.alertNumber}`)).toEqual({ id: alert.id, tenantId: cityA });
    const lower = alert.serviceOrderNumber!.toLowerCase().replace(/-0+/, '-');
    expect(await resolveOrder(t.rt.db, access, lower)).toEqual({ id: alert.serviceOrderId, tenantId: cityA });
    expect(await resolveTeam(t.rt.db, access, 'equipe centro 03')).toEqual({ id: teamA.id, tenantId: cityA });

    const other = cityAccess(cityB);
    expect(await codeOf(resolveAlert(t.rt.db, other, String(alert.alertNumber)))).toBe('not-found');
    expect(await codeOf(resolveAlert(t.rt.db, other, alert.id))).toBe('not-found');
    expect(await codeOf(resolveOrder(t.rt.db, other, alert.serviceOrderNumber!))).toBe('not-found');
    expect(await codeOf(resolveTeam(t.rt.db, other, teamA.name))).toBe('not-found');
  });

  it('answers 409 ambiguous for a number two visible tenants share, and takes tenantId to pick one', async () => {
    const partnerB = await makePartner(t.rt, { tenantId: cityB });
    // Both tenants number their alerts from 1: some number exists in both.
    const a = await makeAlert(t.rt, { tenantId: cityA, externalSystemId: partnerA.id });
    let b = await makeAlert(t.rt, { tenantId: cityB, externalSystemId: partnerB.id });
    while (b.alertNumber < a.alertNumber) b = await makeAlert(t.rt, { tenantId: cityB, externalSystemId: partnerB.id });
    const shared = Math.min(a.alertNumber, b.alertNumber);
    const res = await api(`/alerts/${shared}`);
    expect(res.status).toBe(409);
    expect((await problemOf(res)).type).toBe('urn:lumen:problem:ambiguous');
    const picked = await api(`/alerts/${shared}?tenantId=${cityB}`);
    expect(picked.status).toBe(200);
    expect(((await picked.json()) as { tenantId: string }).tenantId).toBe(cityB);
    // An operator of one city is never ambiguous: it sees one tenant.
    expect((await resolveAlert(t.rt.db, cityAccess(cityA), String(shared))).tenantId).toBe(cityA);
  });

  it('takes numbers and names in paths and bodies: link by order number, assign by team name, through the API and the CLI', async () => {
    const order = await makeAlert(t.rt, { tenantId: cityA, externalSystemId: partnerA.id, status: 'Linked' });
    const dup = await makeAlert(t.rt, { tenantId: cityA, externalSystemId: partnerA.id });
    const linked = await api(`/alerts/${dup.alertNumber}/link?tenantId=${cityA}`, { json: { serviceOrderId: order.serviceOrderNumber } });
    expect(linked.status).toBe(200);
    expect(((await linked.json()) as { serviceOrder: { id: string } }).serviceOrder.id).toBe(order.serviceOrderId);
    const assigned = await api(`/service-orders/${order.serviceOrderNumber}/assign?tenantId=${cityA}`, { json: { teamId: 'EQUIPE CENTRO 03' } });
    expect(assigned.status).toBe(200);
    expect(((await assigned.json()) as { team: { id: string } }).team.id).toBe(teamA.id);
    const badTeam = await api(`/service-orders/${order.serviceOrderNumber}/assign?tenantId=${cityA}`, { json: { teamId: 'Equipe Inexistente' } });
    expect(badTeam.status).toBe(422);
    expect((await problemOf(badTeam)).errors).toEqual([{ pointer: '/teamId', message: expect.any(String) }]);

    const shown = cliJson(await t.cli('order', 'show', order.serviceOrderNumber!, '--tenant', cityA, '--json'));
    expect(shown.id).toBe(order.serviceOrderId);
    const started = cliJson(await t.cli('order', 'start', order.serviceOrderNumber!, '--tenant', cityA, '--json'));
    expect(started.status).toBe('IN_PROGRESS');
    const alertShown = cliJson(await t.cli('alert', 'show', `#${dup.alertNumber}`, '--tenant', cityA, '--json'));
    expect(alertShown.id).toBe(dup.id);
  });
});

describe('GET /api/admin/service-orders', () => {
  it('filters by status, team, overdue, reason, partner and text, sorts, and walks keyset pages without gaps or repeats', async () => {
    const tenant = (await makeTenant(t.rt)).id;
    const partner = await makePartner(t.rt, { tenantId: tenant });
    const team = await makeTeam(t.rt, { tenantId: tenant });
    const made = [];
    for (let i = 0; i < 7; i++) {
      made.push(await makeCityOrder(t.rt, { tenantId: tenant, status: i % 3 === 0 ? 'ASSIGNED' : 'OPEN', teamId: i % 3 === 0 ? team.id : null, priority: i === 4 ? 'Critical' : 'Medium', address: i === 5 ? 'Avenida Paulista, 900' : 'Rua Augusta, 1500' }));
    }
    await t.rt.db.updateTable('service_order').set({ sla_due_at: new Date(Date.now() - 3_600_000) }).where('id', '=', made[2]!.id).execute();
    await makeAlert(t.rt, { tenantId: tenant, externalSystemId: partner.id, status: 'Linked', orderId: made[6]!.id });

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await api(`/service-orders?tenantId=${tenant}&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      const page = (await res.json()) as { items: { id: string }[]; total: number; nextCursor: string | null };
      expect(page.total).toBe(7);
      seen.push(...page.items.map((o) => o.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(made.map((o) => o.id).reverse());

    const ids = async (query: string) => ((await (await api(`/service-orders?tenantId=${tenant}&${query}`)).json()) as { items: { id: string }[] }).items.map((o) => o.id);
    expect(new Set(await ids('status=ASSIGNED'))).toEqual(new Set([made[0]!.id, made[3]!.id, made[6]!.id]));
    expect(new Set(await ids(`team=${encodeURIComponent(team.name)}`))).toEqual(new Set([made[0]!.id, made[3]!.id, made[6]!.id]));
    expect(await ids('overdue=true')).toEqual([made[2]!.id]);
    expect(await ids('text=PAULISTA')).toEqual([made[5]!.id]);
    expect(await ids(`partner=${partner.code}`)).toEqual([made[6]!.id]);
    expect(await ids('reason=NOPE')).toEqual([]);
    expect((await ids('sort=priority'))[0]).toBe(made[4]!.id);
    expect((await ids('sort=sla'))[0]).toBe(made[2]!.id);

    const first = (await (await api(`/service-orders?tenantId=${tenant}&limit=2`)).json()) as { nextCursor: string };
    const misuse = await api(`/service-orders?tenantId=${tenant}&status=OPEN&cursor=${encodeURIComponent(first.nextCursor)}`);
    expect(misuse.status).toBe(400);
    expect((await problemOf(misuse)).type).toBe('urn:lumen:problem:invalid-cursor');
    expect((await api('/service-orders?status=DONE')).status).toBe(400);

    const cli = cliJson(await t.cli('order', 'list', '--tenant', tenant, '--overdue', '--json'));
    expect(cli.items.map((o: { id: string }) => o.id)).toEqual([made[2]!.id]);
  });

  it('shows an operator of another city none of them: an empty page for the tenant, and no row or total in its own list', async () => {
    const tenant = (await makeTenant(t.rt)).id;
    await makeCityOrder(t.rt, { tenantId: tenant });
    const outsider = cityAccess(cityB);
    expect(await listServiceOrders(t.rt, outsider, { tenantId: tenant })).toMatchObject({ items: [], total: 0, nextCursor: null });
    const own = await listServiceOrders(t.rt, outsider, {});
    expect(own.items.every((o) => o.tenantId === cityB)).toBe(true);
    const ownTotal = await t.rt.db.selectFrom('service_order').select((eb) => eb.fn.countAll<number>().as('n')).where('tenant_id', '=', cityB).executeTakeFirstOrThrow();
    expect(own.total).toBe(Number(ownTotal.n));
  });

  it('reads one order as the list shows it: its tenant, deadline and linked alerts, so its alerts can be asked for', async () => {
    const alert = await makeAlert(t.rt, { tenantId: cityA, externalSystemId: partnerA.id, status: 'Linked' });
    const res = await api(`/service-orders/${alert.serviceOrderId}`);
    expect(res.status).toBe(200);
    const order = (await res.json()) as { id: string; tenantId: string; alertCount: number; partners: string[]; overdue: boolean; slaDueAt: string };
    expect(order).toMatchObject({ id: alert.serviceOrderId, tenantId: cityA, alertCount: 1, partners: [partnerA.code], overdue: false });
    const listed = await listServiceOrders(t.rt, cityAccess(cityA, 'viewer'), { tenantId: cityA, text: alert.serviceOrderNumber! });
    expect(listed.items.find((o) => o.id === alert.serviceOrderId)).toEqual(order);
    const alerts = await api(`/alerts?tenantId=${order.tenantId}&serviceOrderId=${order.id}`);
    expect(((await alerts.json()) as { items: { id: string }[] }).items.map((a) => a.id)).toEqual([alert.id]);
  });
});
