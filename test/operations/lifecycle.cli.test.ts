import { ORDER_STATUS_WORDS } from '../../src/lib/status-words.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/audit/log.js';
import { assignServiceOrder, cancelServiceOrder, completeServiceOrder, startServiceOrder } from '../../src/services/operations/order-lifecycle.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makePartner, makeTeam, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, alertRow, cliJson, orderHistory, outboxOf, snapshot } from './support.js';

let t: TestApp;
let api: ReturnType<typeof adminFetch>;
let tenantId: string;
let partnerA: string;
let partnerB: string;
let team: { id: string; name: string };

beforeAll(async () => {
  t = await startTestApp();
  api = adminFetch(t, await adminToken(t));
  tenantId = (await makeTenant(t.rt)).id;
  partnerA = (await makePartner(t.rt, { tenantId })).id;
  partnerB = (await makePartner(t.rt, { tenantId })).id;
  team = await makeTeam(t.rt, { tenantId, name: 'Equipe Sul 02' });
});
afterAll(async () => {
  await t?.stop();
});

type Status = 'OPEN' | 'ASSIGNED' | 'IN_PROGRESS' | 'COMPLETED' | 'CANCELLED';

/** An order in `status` with two alerts from two partners, driven there through the services. */
async function orderIn(status: Status) {
  const first = await makeAlert(t.rt, { tenantId, externalSystemId: partnerA, status: 'Linked' });
  const second = await makeAlert(t.rt, { tenantId, externalSystemId: partnerB, status: 'Linked', orderId: first.serviceOrderId! });
  const id = first.serviceOrderId!;
  const actor = cliActor();
  if (status === 'ASSIGNED' || status === 'IN_PROGRESS' || status === 'COMPLETED') await assignServiceOrder(t.rt, actor, id, team.id);
  if (status === 'IN_PROGRESS') await startServiceOrder(t.rt, actor, id);
  if (status === 'COMPLETED') await completeServiceOrder(t.rt, actor, id);
  if (status === 'CANCELLED') await cancelServiceOrder(t.rt, actor, id);
  return { id, number: first.serviceOrderNumber!, alerts: [first, second] };
}

const LEGAL: Record<string, { from: Status[]; to: Status; event: string; alertStatus: string }> = {
  assign: { from: ['OPEN', 'ASSIGNED'], to: 'ASSIGNED', event: 'ServiceOrder.StatusChanged', alertStatus: 'Linked' },
  start: { from: ['ASSIGNED'], to: 'IN_PROGRESS', event: 'ServiceOrder.StatusChanged', alertStatus: 'Linked' },
  complete: { from: ['ASSIGNED', 'IN_PROGRESS'], to: 'COMPLETED', event: 'ServiceOrder.Completed', alertStatus: 'Resolved' },
  cancel: { from: ['OPEN', 'ASSIGNED', 'IN_PROGRESS'], to: 'CANCELLED', event: 'ServiceOrder.Cancelled', alertStatus: 'Pending' },
};
const VERB: Record<string, string> = { assign: 'assign a team to the service order', start: 'start the service order', complete: 'complete the service order', cancel: 'cancel the service order' };

describe('lumen order: every (status, action) pair through the CLI', () => {
  for (const [action, rule] of Object.entries(LEGAL)) {
    for (const from of ['OPEN', 'ASSIGNED', 'IN_PROGRESS', 'COMPLETED', 'CANCELLED'] as Status[]) {
      const allowed = rule.from.includes(from);
      it(`order ${action} from ${from}: ${allowed ? rule.to : 'refused'}`, async () => {
        const o = await orderIn(from);
        // Reassigning needs another team, or nothing would change.
        const other = action === 'assign' ? await makeTeam(t.rt, { tenantId }) : null;
        const argv = ['order', action, o.id, ...(other ? ['--team', other.id] : []), '--json'];
        const ids = o.alerts.map((a) => a.id);
        const before = await snapshot(t, ids, [o.id]);
        const eventsBefore = await Promise.all(ids.map((id) => outboxOf(t, id)));
        const out = await t.cli(...argv);
        if (!allowed) {
          expect(out.code).toBe(1);
          expect(out.stdout).toBe('');
          expect(out.stderr).toContain(`Cannot ${VERB[action]}: the current state is ${ORDER_STATUS_WORDS[from]!.en}.`);
          expect(await snapshot(t, ids, [o.id])).toBe(before);
          return;
        }
        const order = cliJson(out);
        // The read adds the list's fields (tenant, deadline, linked alerts) to the same order.
        expect(await (await api(`/service-orders/${o.id}`)).json()).toMatchObject(order);
        expect(order.status).toBe(rule.to);
        expect(order.closedAt === null).toBe(rule.to !== 'COMPLETED' && rule.to !== 'CANCELLED');
        expect((await orderHistory(t, o.id)).at(-1)).toMatchObject({ from_status: from, to_status: rule.to, actor: cliActor().kind + ':' + cliActor().name });
        for (const [i, alert] of o.alerts.entries()) {
          expect((await alertRow(t, alert.id)).status).toBe(rule.alertStatus);
          const events = await outboxOf(t, alert.id);
          expect(events.length).toBe(eventsBefore[i]!.length + 1);
          expect(events.at(-1)).toMatchObject({ type: rule.event, partnerId: i === 0 ? partnerA : partnerB, serviceOrderId: o.id });
          expect(events.at(-1)!.payload).toMatchObject({ serviceOrder: { id: o.id, status: rule.to }, alert: { id: alert.id, status: rule.alertStatus } });
        }
      });
    }
  }

  it('order show prints the 2.3 order; unknown ids and missing options fail clearly', async () => {
    const o = await orderIn('OPEN');
    const shown = cliJson(await t.cli('order', 'show', o.id, '--json'));
    expect(shown).toMatchObject({ id: o.id, number: o.number, status: 'OPEN', team: null });
    const human = await t.cli('order', 'show', o.id);
    expect(human.stdout).toContain(`${o.number} OPEN`);
    const missing = await t.cli('order', 'start', '00000000-0000-4000-8000-000000000000');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('service order 00000000-0000-4000-8000-000000000000 does not exist');
    expect((await t.cli('order', 'assign', o.id)).code).toBe(2);
    const badTeam = await t.cli('order', 'assign', o.id, '--team', 'x');
    expect(badTeam.code).toBe(1);
    expect(badTeam.stderr).toContain("teamId: no such team in the order's tenant");
  });

  it('order cancel --reason keeps the reason in the history and the audit log', async () => {
    const o = await orderIn('ASSIGNED');
    cliJson(await t.cli('order', 'cancel', o.id, '--reason', 'duplicate of OS-2026-00001', '--json'));
    expect((await orderHistory(t, o.id)).at(-1)).toMatchObject({ to_status: 'CANCELLED', note: 'duplicate of OS-2026-00001' });
    const audit = cliJson(await t.cli('audit', 'list', '--entity-type', 'service_order', '--entity-id', o.id, '--json'));
    expect(audit.items.map((e: { action: string }) => e.action)).toEqual(['service-order.assign', 'service-order.cancel']);
    expect(audit.items[1]).toMatchObject({ note: 'duplicate of OS-2026-00001', before: { status: 'ASSIGNED' }, after: { status: 'CANCELLED' } });
  });
});
