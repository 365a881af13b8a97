/**
 * Reading one object: a service order of the key's city by id or number, a request the
 * partner sent by its own protocol number (Pending included), and the replay marker
 * that tells a 200 replay from a 200 resend. Another city or partner gets 404.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/audit/index.js';
import { createOrderFromAlert } from '../../src/services/operations/index.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { intakeBody, postJson, startIntakeApp, type IntakeTestApp } from './support.js';

let t: IntakeTestApp;
let manaus: string;
let sender: { apiKey: string; id: string };
let otherPartner: { apiKey: string };
let reader: { apiKey: string };
let foreign: { apiKey: string };

beforeAll(async () => {
  t = await startIntakeApp();
  manaus = (await makeTenant(t.rt, { name: 'Manaus', intakePolicy: 'manual' })).id;
  sender = await makePartner(t.rt, { tenantId: manaus, scopes: ['canCreateAlerts'] });
  otherPartner = await makePartner(t.rt, { tenantId: manaus, scopes: ['canCreateAlerts', 'canReadCityData'] });
  reader = await makePartner(t.rt, { tenantId: manaus, scopes: ['canReadCityData'] });
  foreign = await makePartner(t.rt, { scopes: ['canCreateServiceOrders', 'canReadCityData'] });
});
afterAll(async () => {
  await t?.stop();
});

describe('reading one object', () => {
  it('a request the partner sent, by its protocol number, as it stands now; no one else’s', async () => {
    const protocol = `156-MAO-${randomUUID().slice(0, 8)}`;
    const created = await postJson(t, sender.apiKey, intakeBody(protocol));
    expect(created.status).toBe(201);
    const pending = await t.fetch(`/api/external/requests/${protocol}`, { apiKey: sender.apiKey });
    expect(pending.status).toBe(200);
    expect(await pending.json()).toEqual(created.body);

    const order = await createOrderFromAlert(t.rt, cliActor(), created.body.alert.id, {});
    const now = (await (await t.fetch(`/api/external/requests/${encodeURIComponent(protocol)}`, { apiKey: sender.apiKey })).json()) as Record<string, any>;
    expect(now).toMatchObject({ internalProtocol: order.number, status: 'OPEN', alert: { status: 'Linked' } });

    // Another partner of the same city, a partner of another city: 404; a reader without a creating scope: 403.
    expect((await t.fetch(`/api/external/requests/${protocol}`, { apiKey: otherPartner.apiKey })).status).toBe(404);
    expect((await t.fetch(`/api/external/requests/${protocol}`, { apiKey: foreign.apiKey })).status).toBe(404);
    expect((await t.fetch(`/api/external/requests/${protocol}`, { apiKey: reader.apiKey })).status).toBe(403);
    expect((await t.fetch('/api/external/requests/never-sent', { apiKey: sender.apiKey })).status).toBe(404);
  });

  it('a service order of the key’s city by id or number (any case), as the list shows it; another city’s is 404', async () => {
    const created = await postJson(t, sender.apiKey, intakeBody(`156-MAO-${randomUUID().slice(0, 8)}`));
    const order = await createOrderFromAlert(t.rt, cliActor(), created.body.alert.id, {});
    const list = (await (await t.fetch('/api/external/service-orders?pageSize=1000', { apiKey: reader.apiKey })).json()) as { items: { id: string }[] };
    const item = list.items.find((i) => i.id === order.id);
    for (const ref of [order.id, order.number, order.number.toLowerCase()]) {
      const res = await t.fetch(`/api/external/service-orders/${ref}`, { apiKey: reader.apiKey });
      expect(res.status, ref).toBe(200);
      expect(await res.json()).toEqual(item);
    }
    expect((await t.fetch(`/api/external/service-orders/${order.number}`, { apiKey: foreign.apiKey })).status).toBe(404);
    expect((await t.fetch(`/api/external/service-orders/${order.id}`, { apiKey: foreign.apiKey })).status).toBe(404);
    expect((await t.fetch(`/api/external/service-orders/${order.id}`, { apiKey: sender.apiKey })).status).toBe(403);
    expect((await t.fetch('/api/external/service-orders/OS-2026-99999', { apiKey: reader.apiKey })).status).toBe(404);
  });

  it('marks a replayed intake answer Idempotent-Replayed: true, and a resend not', async () => {
    const key = randomUUID();
    const body = intakeBody(`156-MAO-${randomUUID().slice(0, 8)}`);
    const first = await postJson(t, sender.apiKey, body, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    expect(first.res.headers.get('idempotent-replayed')).toBeNull();
    const replay = await postJson(t, sender.apiKey, body, { 'idempotency-key': key });
    expect(replay.status).toBe(200);
    expect(replay.res.headers.get('idempotent-replayed')).toBe('true');
    const resend = await postJson(t, sender.apiKey, body, { 'idempotency-key': randomUUID() });
    expect(resend.status).toBe(200);
    expect(resend.res.headers.get('idempotent-replayed')).toBeNull();
  });
});
