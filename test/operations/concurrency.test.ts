import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makePartner, makeReason, makeTeam, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, alertRow, outboxOf } from './support.js';

let t: TestApp;
let operator1: ReturnType<typeof adminFetch>;
let operator2: ReturnType<typeof adminFetch>;
let tenantId: string;
let partnerId: string;

beforeAll(async () => {
  t = await startTestApp();
  operator1 = adminFetch(t, await adminToken(t, 'operator-1'));
  operator2 = adminFetch(t, await adminToken(t, 'operator-2'));
  tenantId = (await makeTenant(t.rt, { intakePolicy: 'manual' })).id;
  partnerId = (await makePartner(t.rt, { tenantId })).id;
});
afterAll(async () => {
  await t?.stop();
});

/**
 * Holds a row lock from outside the service, so that concurrent actions provably
 * queue on the same row: they are released together once `waiting` of them block.
 */
async function holdingRowLock<T>(table: 'alert' | 'service_order', id: string, waiting: number, race: () => Promise<T>): Promise<T> {
  const holder = new pg.Client({ connectionString: t.db.url, application_name: 'test-lock-holder' });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query(`SELECT id FROM ${table} WHERE id = $1 FOR UPDATE`, [id]);
    const racing = race();
    const deadline = Date.now() + 15_000;
    for (;;) {
      // Activity statistics are a snapshot per transaction: refresh it on every look.
      await holder.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await holder.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%for update%'`,
      );
      if (rows[0]!.n >= waiting) break;
      if (Date.now() > deadline) throw new Error(`only ${rows[0]!.n} of ${waiting} actions reached the lock`);
      await new Promise((r) => setImmediate(r));
    }
    await holder.query('COMMIT');
    return await racing;
  } finally {
    await holder.end();
  }
}

describe('two operators on the same alert at once', () => {
  it('create-order twice: exactly one order; the other operator gets invalid-transition', async () => {
    const alert = await makeAlert(t.rt, { tenantId, externalSystemId: partnerId });
    const ordersBefore = (await t.rt.db.selectFrom('service_order').select('id').where('tenant_id', '=', tenantId).execute()).length;
    const [a, b] = await holdingRowLock('alert', alert.id, 2, () =>
      Promise.all([operator1(`/alerts/${alert.id}/create-order`, { json: {} }), operator2(`/alerts/${alert.id}/create-order`, { json: {} })]),
    );
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    const loser = a.status === 409 ? a : b;
    expect(((await loser.json()) as { type: string }).type).toBe('urn:lumen:problem:invalid-transition');
    const ordersAfter = (await t.rt.db.selectFrom('service_order').select('id').where('tenant_id', '=', tenantId).execute()).length;
    expect(ordersAfter).toBe(ordersBefore + 1);
    expect((await outboxOf(t, alert.id)).map((e) => e.type)).toEqual(['ServiceOrder.Created']);
    const audit = await t.rt.db.selectFrom('audit_log').select('actor').where('entity_id', '=', alert.id).execute();
    expect(audit).toHaveLength(1);
  });

  it('create-order (API) against discard (CLI): one wins, the state matches the winner, one event', async () => {
    const alert = await makeAlert(t.rt, { tenantId, externalSystemId: partnerId });
    const [api, cli] = await holdingRowLock('alert', alert.id, 2, () =>
      Promise.all([operator1(`/alerts/${alert.id}/create-order`, { json: {} }), t.cli('alert', 'discard', alert.id, '--reason', 'duplicate', '--json')]),
    );
    const row = await alertRow(t, alert.id);
    const events = (await outboxOf(t, alert.id)).map((e) => e.type);
    if (api.status === 201) {
      expect(cli.code).toBe(1);
      expect(cli.stderr).toContain('Cannot discard the alert: the current state is Linked to an order.');
      expect(row.status).toBe('Linked');
      expect(events).toEqual(['ServiceOrder.Created']);
    } else {
      expect(api.status).toBe(409);
      expect(cli.code).toBe(0);
      expect(row.status).toBe('Cancelled');
      expect(events).toEqual(['Alert.Cancelled']);
    }
  });

  it('reclassify against create-order on the same Pending alert: never a deadlock; a stale reclassify gets conflict', async () => {
    const reason = await makeReason(t.rt, { tenantId });
    for (let round = 0; round < 3; round++) {
      const alert = await makeAlert(t.rt, { tenantId, externalSystemId: partnerId });
      const [create, reclassify] = await holdingRowLock('alert', alert.id, 2, () =>
        Promise.all([operator1(`/alerts/${alert.id}/create-order`, { json: {} }), operator2(`/alerts/${alert.id}/reclassify`, { json: { reasonCode: reason.code } })]),
      );
      expect(create.status).toBe(201);
      if (reclassify.status === 409) expect(((await reclassify.json()) as { type: string }).type).toBe('urn:lumen:problem:conflict');
      else expect(reclassify.status).toBe(200);
      expect((await alertRow(t, alert.id)).status).toBe('Linked');
    }
  });

  it('five operators at once without help: still exactly one order', async () => {
    const alert = await makeAlert(t.rt, { tenantId, externalSystemId: partnerId });
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => (i % 2 ? operator1 : operator2)(`/alerts/${alert.id}/create-order`, { json: {} })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    expect((await outboxOf(t, alert.id)).map((e) => e.type)).toEqual(['ServiceOrder.Created']);
  });
});

describe('an order and its alerts changing at once (orders are locked before alerts: no deadlock)', () => {
  it('complete against a link to the same order: either the new alert is linked and then Resolved, or refused', async () => {
    const team = await makeTeam(t.rt, { tenantId });
    const first = await makeAlert(t.rt, { tenantId, externalSystemId: partnerId, status: 'Linked' });
    expect((await operator1(`/service-orders/${first.serviceOrderId}/assign`, { json: { teamId: team.id } })).status).toBe(200);
    const dup = await makeAlert(t.rt, { tenantId, externalSystemId: partnerId });
    const [complete, link] = await holdingRowLock('service_order', first.serviceOrderId!, 2, () =>
      Promise.all([operator1(`/service-orders/${first.serviceOrderId}/complete`, { json: {} }), operator2(`/alerts/${dup.id}/link`, { json: { serviceOrderId: first.serviceOrderId } })]),
    );
    expect(complete.status).toBe(200);
    const row = await alertRow(t, dup.id);
    if (link.status === 200) {
      expect(row.status).toBe('Resolved');
      expect((await outboxOf(t, dup.id)).map((e) => e.type)).toEqual(['ServiceOrder.Created', 'ServiceOrder.Completed']);
    } else {
      expect(link.status).toBe(409);
      expect(row.status).toBe('Pending');
      expect(await outboxOf(t, dup.id)).toEqual([]);
    }
  });

  it('reclassify a Linked alert against completing its order: both serialise, no deadlock', async () => {
    const team = await makeTeam(t.rt, { tenantId });
    const reason = await makeReason(t.rt, { tenantId });
    const alert = await makeAlert(t.rt, { tenantId, externalSystemId: partnerId, status: 'Linked' });
    await operator1(`/service-orders/${alert.serviceOrderId}/assign`, { json: { teamId: team.id } });
    const [complete, reclassify] = await holdingRowLock('service_order', alert.serviceOrderId!, 2, () =>
      Promise.all([operator1(`/service-orders/${alert.serviceOrderId}/complete`, { json: {} }), operator2(`/alerts/${alert.id}/reclassify`, { json: { reasonCode: reason.code } })]),
    );
    expect(complete.status).toBe(200);
    expect([200, 409]).toContain(reclassify.status);
    expect((await alertRow(t, alert.id)).status).toBe('Resolved');
  });
});
