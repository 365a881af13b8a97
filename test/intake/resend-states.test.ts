import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/audit/log.js';
import { assignServiceOrder, cancelServiceOrder, completeServiceOrder, createOrderFromAlert, discardAlert, startServiceOrder } from '../../src/services/operations/index.js';
import { makePartner, makeTeam, makeTenant } from '../support/factories.js';
import { intakeBody, postJson, startIntakeApp, type IntakeTestApp } from './support.js';

/**
 * A resend (known protocolNumber, no key or a new one) answers the request's current
 * state, for every state an alert and its order can be in: `OPEN` with the order once
 * the request has a service order (still open, or completed), `RECEIVED` with the
 * alert while it has none (awaiting triage, again after its order was cancelled, or
 * discarded). `status` says whether the request is a service order, never the order's
 * own status, which `alert.status` and the events carry.
 */
let t: IntakeTestApp;
beforeAll(async () => {
  t = await startIntakeApp();
});
afterAll(async () => {
  await t?.stop();
});

const actor = cliActor();
const ORDER_KEYS = ['alert', 'assetType', 'createdAt', 'id', 'internalProtocol', 'priority', 'protocolNumber', 'status'];
const ALERT_KEYS = ['alert', 'assetType', 'createdAt', 'id', 'protocolNumber', 'status'];

describe('the resend body in every alert and order state', () => {
  it('answers OPEN with the order while it is linked or completed, RECEIVED with the alert otherwise', async () => {
    const tenant = await makeTenant(t.rt, { intakePolicy: 'manual' });
    const team = await makeTeam(t.rt, { tenantId: tenant.id });
    const p = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canCreateServiceOrders'] });
    const protocol = `STATES-${randomUUID()}`;
    const resend = async () => {
      const res = await postJson(t, p.apiKey, intakeBody(protocol), { 'idempotency-key': randomUUID() });
      expect(res.status).toBe(200);
      return res.body;
    };

    const first = await postJson(t, p.apiKey, intakeBody(protocol));
    expect(first.status).toBe(201);
    const alertId = first.body.alert.id as string;
    const alertCreated = first.body.createdAt as string;

    // Pending: awaiting triage.
    const pending = await resend();
    expect(Object.keys(pending).sort()).toEqual(ALERT_KEYS);
    expect(pending).toMatchObject({ id: alertId, status: 'RECEIVED', createdAt: alertCreated, alert: { id: alertId, status: 'Pending' } });

    // Linked to a new order: OPEN, the order's id, number, priority and creation time,
    // and so while the order is assigned and in progress.
    const order = await createOrderFromAlert(t.rt, actor, alertId, {});
    for (const step of ['OPEN', 'ASSIGNED', 'IN_PROGRESS'] as const) {
      if (step === 'ASSIGNED') await assignServiceOrder(t.rt, actor, order.id, team.id);
      if (step === 'IN_PROGRESS') await startServiceOrder(t.rt, actor, order.id);
      const linked = await resend();
      expect(Object.keys(linked).sort(), step).toEqual(ORDER_KEYS);
      expect(linked, step).toMatchObject({ id: order.id, internalProtocol: order.number, status: 'OPEN', priority: order.priority, createdAt: order.openedAt, alert: { id: alertId, status: 'Linked' } });
    }

    // The order was cancelled: the alert waits for a new triage, so the request has no
    // service order any more: RECEIVED with the alert, as before its first triage.
    await cancelServiceOrder(t.rt, actor, order.id, 'wrong pole');
    const afterCancel = await resend();
    expect(Object.keys(afterCancel).sort()).toEqual(ALERT_KEYS);
    expect(afterCancel).toMatchObject({ id: alertId, status: 'RECEIVED', createdAt: alertCreated, alert: { id: alertId, status: 'Pending' } });

    // Triaged again into another order, completed: OPEN with that order (the request
    // became a service order; that it is done is alert.status Resolved).
    const second = await createOrderFromAlert(t.rt, actor, alertId, { teamId: team.id });
    await completeServiceOrder(t.rt, actor, second.id, 'lamp replaced');
    const resolved = await resend();
    expect(Object.keys(resolved).sort()).toEqual(ORDER_KEYS);
    expect(resolved).toMatchObject({ id: second.id, internalProtocol: second.number, status: 'OPEN', alert: { id: alertId, status: 'Resolved' } });
    expect(second.number).not.toBe(order.number);

    // The first answer is still what the first request's key replays, whatever came after.
    const key = randomUUID();
    const other = `STATES-${randomUUID()}`;
    const keyed = await postJson(t, p.apiKey, intakeBody(other), { 'idempotency-key': key });
    expect(keyed.status).toBe(201);
    // Discarded in triage: RECEIVED with the alert, alert.status Cancelled; the replay of
    // the original key still answers the original (Pending) body.
    await discardAlert(t.rt, actor, keyed.body.alert.id, 'duplicate', 'en');
    const discarded = await postJson(t, p.apiKey, intakeBody(other));
    expect(discarded.status).toBe(200);
    expect(Object.keys(discarded.body).sort()).toEqual(ALERT_KEYS);
    expect(discarded.body).toMatchObject({ id: keyed.body.alert.id, status: 'RECEIVED', alert: { status: 'Cancelled' } });
    const replay = await postJson(t, p.apiKey, intakeBody(other), { 'idempotency-key': key });
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(keyed.text);
  });
});
