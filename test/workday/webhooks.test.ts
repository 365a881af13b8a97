import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, auditOf, cliJson } from '../operations/support.js';
import { emit, makeEventPartner, startReceiver, subjectFor, waitFor } from '../events/support.js';
import { redeliverDead } from '../../src/services/events/index.js';
import { AppError } from '../../src/lib/errors.js';
import { cityAccess } from './support.js';

let t: TestApp;
let admin: ReturnType<typeof adminFetch>;
let rx: Awaited<ReturnType<typeof startReceiver>>;
let down = false;
beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_WEBHOOK_RETRY_SCHEDULE: '50ms' } });
  admin = adminFetch(t, await adminToken(t, 'webhook-desk'));
  rx = await startReceiver(() => ({ status: down ? 503 : 200 }));
});
afterAll(async () => {
  await t?.stop();
  await rx?.close();
});

const deliveriesOf = (eventId: string) => t.rt.db.selectFrom('webhook_delivery').selectAll().where('event_id', '=', eventId).orderBy('position').execute();

describe('redeliver every dead delivery of a partner', () => {
  it('queues again only the events whose last delivery is dead, and the attention count follows', async () => {
    const p = await makeEventPartner(t.rt, { webhookUrl: rx.url });
    down = true;
    const [dead] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, p)]);
    await waitFor(async () => (await deliveriesOf(dead!.eventId))[0]?.status === 'dead', 10_000, 'a dead delivery');
    down = false;
    const [ok] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, p)]);
    await waitFor(async () => (await deliveriesOf(ok!.eventId))[0]?.status === 'succeeded', 10_000, 'a delivered event');
    expect(((await (await admin(`/tenants/${p.tenantId}/attention`)).json()) as { deadDeliveries: number }).deadDeliveries).toBe(1);

    const outsider = await redeliverDead(t.rt, p.partner.code, { kind: 'admin-token', name: 'other', access: cityAccess((await makeTenant(t.rt)).id) }).then(() => null, (e: unknown) => e);
    expect((outsider as AppError).code).toBe('not-found');
    expect(await deliveriesOf(dead!.eventId)).toHaveLength(1);

    const res = await admin(`/partners/${p.partner.code}/webhook-deliveries/redeliver-dead`, { method: 'POST' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { count: number; deliveryIds: string[] };
    expect(body.count).toBe(1);
    const again = await waitFor(async () => {
      const rows = await deliveriesOf(dead!.eventId);
      return rows.length === 2 && rows[1]!.status === 'succeeded' ? rows : null;
    }, 10_000, 'the redelivery');
    expect(again[1]).toMatchObject({ id: body.deliveryIds[0], redelivery_of: again[0]!.id, requested_by: 'admin-token:webhook-desk' });
    expect(await deliveriesOf(ok!.eventId)).toHaveLength(1);
    expect(((await (await admin(`/tenants/${p.tenantId}/attention`)).json()) as { deadDeliveries: number }).deadDeliveries).toBe(0);
    expect((await auditOf(t, p.partner.id)).map((a) => a.action)).toContain('webhook.redeliver-dead');
    // Nothing dead is left: the CLI queues nothing.
    expect(cliJson(await t.cli('webhook', 'redeliver', '--partner', p.partner.code, '--dead', '--json')).count).toBe(0);
  });
});
