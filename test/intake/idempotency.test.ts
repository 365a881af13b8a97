import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReason, mapReason } from '../../src/services/operations/reasons.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { eventually, intakeBody, intakeFootprint, JPEG, PNG, post, postJson, startIntakeApp, type IntakeTestApp } from './support.js';

let t: IntakeTestApp;
beforeAll(async () => {
  t = await startIntakeApp();
});
afterAll(async () => {
  await t?.stop();
});

const photo = (bytes: Buffer, filename: string, contentType = 'image/jpeg') => ({ type: 'photo', contentBase64: bytes.toString('base64'), filename, contentType });

/** The alert row's version and stamp: both move on any write to the row. */
async function alertVersion(alertId: string): Promise<{ xmin: string; updated_at: Date }> {
  return t.rt.db.selectFrom('alert').select([sql<string>`xmin::text`.as('xmin'), 'updated_at']).where('id', '=', alertId).executeTakeFirstOrThrow();
}

describe('Idempotency-Key (N1)', () => {
  it('replays the stored original response, byte for byte, with 200 and no side effect', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const key = randomUUID();
    const first = await postJson(t, p.apiKey, intakeBody('IDEM-1', { attachments: [photo(JPEG, 'a.jpg')] }), { 'idempotency-key': key });
    expect(first.status).toBe(201);
    const footprint = await intakeFootprint(t, tenant.id);
    const version = await alertVersion(first.body.alert.id);
    // Same body with keys in another order and the quoted form of the key: still the same request.
    const reordered = Object.fromEntries(Object.entries(intakeBody('IDEM-1', { attachments: [photo(JPEG, 'a.jpg')] })).reverse());
    const again = await postJson(t, p.apiKey, reordered, { 'idempotency-key': `"${key.toUpperCase()}"`, 'accept-language': 'en' });
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(await intakeFootprint(t, tenant.id)).toEqual(footprint);
    expect(await alertVersion(first.body.alert.id)).toEqual(version);
  });

  it('answers 422 idempotency-key-reused for the same key with another body, and changes nothing', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const key = randomUUID();
    expect((await post(t, p.apiKey, intakeBody('REUSE-1'), { 'idempotency-key': key })).status).toBe(201);
    const footprint = await intakeFootprint(t, tenant.id);
    for (const body of [intakeBody('REUSE-1', { lampType: 'Sodio' }), intakeBody('REUSE-2')]) {
      const res = await post(t, p.apiKey, body, { 'idempotency-key': key });
      expect(res.status).toBe(422);
      expect(((await res.json()) as { type: string }).type).toBe('urn:lumen:problem:idempotency-key-reused');
    }
    expect(await intakeFootprint(t, tenant.id)).toEqual(footprint);
  });

  it('never stores a validation failure against a key: the corrected retry with the same key works', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const key = randomUUID();
    expect((await post(t, p.apiKey, intakeBody('FIX-1', { assetType: 'TREE' }), { 'idempotency-key': key })).status).toBe(422);
    expect(await intakeFootprint(t, tenant.id)).toMatchObject({ keys: 0, alerts: 0, counters: 0 });
    expect((await post(t, p.apiKey, intakeBody('FIX-1'), { 'idempotency-key': key })).status).toBe(201);
  });

  it('scopes keys and protocolNumbers to the external system', async () => {
    const tenant = await makeTenant(t.rt);
    const a = await makePartner(t.rt, { tenantId: tenant.id });
    const b = await makePartner(t.rt, { tenantId: tenant.id });
    const key = randomUUID();
    const ra = await postJson(t, a.apiKey, intakeBody('SHARED-1'), { 'idempotency-key': key });
    const rb = await postJson(t, b.apiKey, intakeBody('SHARED-1'), { 'idempotency-key': key });
    expect([ra.status, rb.status]).toEqual([201, 201]);
    expect(ra.body.alert.id).not.toBe(rb.body.alert.id);
    expect(await intakeFootprint(t, tenant.id)).toMatchObject({ alerts: 2, orders: 2, keys: 2 });
  });

  it('stores the result of a resend under a new key (200), and replays it', async () => {
    const p = await makePartner(t.rt);
    expect((await post(t, p.apiKey, intakeBody('RS-KEY'))).status).toBe(201);
    const key = randomUUID();
    const resend = await postJson(t, p.apiKey, intakeBody('RS-KEY', { lampType: 'Sodio' }), { 'idempotency-key': key });
    expect(resend.status).toBe(200);
    expect(resend.body.alert.lampType).toBe('Sodio');
    const replay = await postJson(t, p.apiKey, intakeBody('RS-KEY', { lampType: 'Sodio' }), { 'idempotency-key': key });
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(resend.text);
  });

  it('keeps keys 7 days: the hourly cleanup job removes older ones only', async () => {
    const p = await makePartner(t.rt);
    const oldKey = randomUUID();
    const freshKey = randomUUID();
    expect((await post(t, p.apiKey, intakeBody('RET-1'), { 'idempotency-key': oldKey })).status).toBe(201);
    expect((await post(t, p.apiKey, intakeBody('RET-2'), { 'idempotency-key': freshKey })).status).toBe(201);
    await t.rt.db.updateTable('idempotency_key').set({ created_at: sql<Date>`now() - interval '7 days 1 minute'` }).where('key', '=', oldKey).execute();
    await t.rt.db.updateTable('idempotency_key').set({ created_at: sql<Date>`now() - interval '6 days 23 hours'` }).where('key', '=', freshKey).execute();
    await t.rt.jobs.send(t.rt.db, 'idempotency-key-cleanup', { v: 1 });
    await eventually(
      () => t.rt.db.selectFrom('idempotency_key').select('key').where('external_system_id', '=', p.id).execute(),
      (rows) => rows.length === 1,
    );
    const left = await t.rt.db.selectFrom('idempotency_key').select('key').where('external_system_id', '=', p.id).execute();
    expect(left.map((r) => r.key)).toEqual([freshKey]);
    // The old key is free again: reusing it is a resend by protocolNumber, not a replay.
    const reused = await postJson(t, p.apiKey, intakeBody('RET-1', { lampType: 'Sodio' }), { 'idempotency-key': oldKey });
    expect(reused.status).toBe(200);
    expect(reused.body.alert.lampType).toBe('Sodio');
  });
});

describe('resend by protocolNumber (N1)', () => {
  it('Pending: updates requester, problem, lampType, reason (mapped again), address (located again) and appends new attachments', async () => {
    const tenant = await makeTenant(t.rt, { intakePolicy: 'manual' });
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    await createReason(t.rt, { tenantId: tenant.id, code: 'LAMP_BLINKING', namePt: 'Lâmpada piscando', nameEn: 'Lamp blinking', priority: 'Low', slaHours: 72 });
    await mapReason(t.rt, { partnerCode: p.code, from: 'PISCANDO', to: 'LAMP_BLINKING' });
    const first = await postJson(t, p.apiKey, intakeBody('PEND-1', { attachments: [photo(JPEG, 'a.jpg')] }));
    expect(first.status).toBe(201);
    const alertId = first.body.alert.id;

    const changed = intakeBody('PEND-1', {
      requestedAt: '2020-01-01T00:00:00Z',
      requester: { name: 'Maria A. Santos', phone: '+5511900000000' },
      lampType: 'Sodio',
      reasonCode: 'PISCANDO',
      address: { street: 'Rua da Consolação', number: '2300', neighborhood: 'Consolação', reference: 'Esquina', latitude: -23.5538, longitude: -46.6615 },
      problem: { description: 'Agora piscando.', additionalNotes: 'Desde ontem.' },
      attachments: [photo(JPEG, 'a-again.jpg'), photo(PNG, 'b.png', 'image/png')],
    });
    const res = await postJson(t, p.apiKey, changed, { 'accept-language': 'en' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: alertId, status: 'RECEIVED', protocolNumber: 'PEND-1' });
    expect(res.body.alert).toMatchObject({
      id: alertId,
      alertNumber: first.body.alert.alertNumber,
      alertReasonCode: 'LAMP_BLINKING',
      alertReasonName: 'Lamp blinking',
      requesterName: 'Maria A. Santos',
      requesterPhone: '+5511900000000',
      description: 'Agora piscando.',
      additionalNotes: 'Desde ontem.',
      lampType: 'Sodio',
      externalRequestedAt: '2026-03-14T12:30:00.000Z',
      latitude: -23.5538,
      longitude: -46.6615,
      status: 'Pending',
    });
    // Earlier attachment first, then the new one; the same JPEG again is not stored twice.
    expect(res.body.alert.attachments).toEqual([
      { success: true, blobPath: first.body.alert.attachments[0].blobPath, filename: 'a.jpg', contentType: 'image/jpeg', sizeBytes: JPEG.length, error: null },
      { success: true, blobPath: expect.stringMatching(new RegExp(`^tenants/${tenant.id}/alerts/${alertId}/[0-9a-f-]{36}\\.png$`)), filename: 'b.png', contentType: 'image/png', sizeBytes: PNG.length, error: null },
    ]);
    const alert = await t.rt.db.selectFrom('alert').selectAll().where('id', '=', alertId).executeTakeFirstOrThrow();
    expect(alert).toMatchObject({ reason_code: 'LAMP_BLINKING', priority: 'Low', partner_reason_code: 'PISCANDO', address_street: 'Rua da Consolação', address_number: '2300', address_reference: 'Esquina', location_source: 'payload' });
    expect(alert.sla_due_at.getTime() - alert.created_at.getTime()).toBe(72 * 3600_000);
    expect(alert.requested_at.toISOString()).toBe('2026-03-14T12:30:00.000Z');
  });

  it('writes nothing when nothing changed (same body again)', async () => {
    const tenant = await makeTenant(t.rt, { intakePolicy: 'manual' });
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const body = intakeBody('SAME-1', { attachments: [photo(JPEG, 'a.jpg')] });
    const first = await postJson(t, p.apiKey, body);
    const footprint = await intakeFootprint(t, tenant.id);
    const version = await alertVersion(first.body.alert.id);
    const again = await postJson(t, p.apiKey, body);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await alertVersion(first.body.alert.id)).toEqual(version);
    expect(await intakeFootprint(t, tenant.id)).toEqual(footprint);
  });

  it('Linked: updates requester, problem, lampType and address.reference only; the order never moves', async () => {
    const tenant = await makeTenant(t.rt, { intakePolicy: 'automatic' });
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    await createReason(t.rt, { tenantId: tenant.id, code: 'LAMP_OUT', namePt: 'Lâmpada apagada', nameEn: 'Lamp out', priority: 'High', slaHours: 8 });
    await mapReason(t.rt, { partnerCode: p.code, from: 'APAGADA', to: 'LAMP_OUT' });
    const first = await postJson(t, p.apiKey, intakeBody('LINK-1'));
    const orderBefore = await t.rt.db.selectFrom('service_order').selectAll().where('id', '=', first.body.id).executeTakeFirstOrThrow();
    const res = await postJson(
      t,
      p.apiKey,
      intakeBody('LINK-1', {
        requester: { name: 'Outro Nome', phone: '+5511911111111' },
        lampType: 'Sodio',
        reasonCode: 'APAGADA',
        address: { street: 'Rua Nova', number: '1', neighborhood: 'Centro', reference: 'Ao lado do banco', latitude: -22.9, longitude: -43.2 },
        problem: { description: 'Nova descrição.' },
      }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: first.body.id, internalProtocol: first.body.internalProtocol, status: 'OPEN', priority: 'Medium', createdAt: first.body.createdAt });
    expect(res.body.alert).toMatchObject({
      requesterName: 'Outro Nome',
      requesterPhone: '+5511911111111',
      description: 'Nova descrição.',
      additionalNotes: null,
      lampType: 'Sodio',
      alertReasonCode: 'EXTERNAL_OTHER',
      latitude: -23.5573,
      longitude: -46.6602,
      status: 'Linked',
    });
    const alert = await t.rt.db.selectFrom('alert').selectAll().where('id', '=', first.body.alert.id).executeTakeFirstOrThrow();
    expect(alert).toMatchObject({ address_street: 'Rua Augusta', address_number: '1500', address_neighborhood: 'Consolação', address_reference: 'Ao lado do banco', reason_code: 'EXTERNAL_OTHER', partner_reason_code: null });
    const orderAfter = await t.rt.db.selectFrom('service_order').selectAll().where('id', '=', first.body.id).executeTakeFirstOrThrow();
    expect(orderAfter).toEqual(orderBefore);
  });

  it('after an operator linked a Pending alert: answers the order (id, internalProtocol, priority, OPEN)', async () => {
    const tenant = await makeTenant(t.rt, { intakePolicy: 'manual' });
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const first = await postJson(t, p.apiKey, intakeBody('TRIAGED-1'));
    const alertId = first.body.alert.id;
    // Triage is another component's work: link the alert to an order directly.
    const order = await t.rt.db
      .insertInto('service_order')
      .values({ tenant_id: tenant.id, number: 'OS-2026-09001', priority: 'Critical', reason_code: 'EXTERNAL_OTHER', address: 'Rua Augusta, 1500', neighborhood: null, latitude: null, longitude: null, pole_id: null, team_id: null, sla_due_at: new Date(), closed_at: null, status: 'ASSIGNED' })
      .returning(['id', 'created_at'])
      .executeTakeFirstOrThrow();
    await t.rt.db.updateTable('alert').set({ status: 'Linked', service_order_id: order.id }).where('id', '=', alertId).execute();
    const res = await postJson(t, p.apiKey, intakeBody('TRIAGED-1'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: order.id, internalProtocol: 'OS-2026-09001', priority: 'Critical', status: 'OPEN', createdAt: order.created_at.toISOString() });
    expect(res.body.alert).toMatchObject({ id: alertId, status: 'Linked' });
  });

  it('Resolved and Cancelled alerts are not changed by a resend (200, current state), attachments included', async () => {
    const tenant = await makeTenant(t.rt, { intakePolicy: 'manual' });
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const cancelled = await postJson(t, p.apiKey, intakeBody('CANC-1'));
    await t.rt.db.updateTable('alert').set({ status: 'Cancelled', cancel_reason: 'duplicate' }).where('id', '=', cancelled.body.alert.id).execute();

    const auto = await makeTenant(t.rt, { intakePolicy: 'automatic' });
    const q = await makePartner(t.rt, { tenantId: auto.id });
    const resolved = await postJson(t, q.apiKey, intakeBody('RESV-1'));
    await t.rt.db.updateTable('service_order').set({ status: 'COMPLETED', closed_at: new Date() }).where('id', '=', resolved.body.id).execute();
    await t.rt.db.updateTable('alert').set({ status: 'Resolved' }).where('id', '=', resolved.body.alert.id).execute();

    for (const [key, first, status] of [[p.apiKey, cancelled, 'Cancelled'], [q.apiKey, resolved, 'Resolved']] as const) {
      const version = await alertVersion(first.body.alert.id);
      const footprintTenant = status === 'Cancelled' ? tenant.id : auto.id;
      const footprint = await intakeFootprint(t, footprintTenant);
      const res = await postJson(t, key, intakeBody(first.body.protocolNumber, { requester: { name: 'Mudou' }, lampType: 'Sodio', attachments: [photo(JPEG, 'late.jpg')] }));
      expect(res.status).toBe(200);
      expect(res.body.alert).toMatchObject({ status, requesterName: 'Maria Aparecida dos Santos', lampType: 'LED', attachments: [] });
      expect(res.body.status).toBe(status === 'Resolved' ? 'OPEN' : 'RECEIVED');
      expect(await alertVersion(first.body.alert.id)).toEqual(version);
      expect(await intakeFootprint(t, footprintTenant)).toEqual(footprint);
    }
  });
});
