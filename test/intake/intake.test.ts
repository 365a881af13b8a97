import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReason, mapReason } from '../../src/services/operations/reasons.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { intakeBody, intakeFootprint, post, postJson, startIntakeApp, type IntakeTestApp } from './support.js';

let t: IntakeTestApp;
beforeAll(async () => {
  t = await startIntakeApp();
});
afterAll(async () => {
  await t?.stop();
});

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function problem(res: Response) {
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return (await res.json()) as { type: string; title: string; status: number; detail: string; errors?: { pointer: string; message: string }[] };
}

describe('POST /api/external/service-orders, automatic mode', () => {
  it('creates a service order at once and answers every field of 2.6', async () => {
    const tenant = await makeTenant(t.rt, { intakePolicy: 'automatic' });
    const p = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canCreateServiceOrders'] });
    await createReason(t.rt, { tenantId: tenant.id, code: 'LAMP_OUT', namePt: 'Lâmpada apagada', nameEn: 'Lamp out', priority: 'High', slaHours: 8 });
    await mapReason(t.rt, { partnerCode: p.code, from: 'LAMPADA_APAGADA', to: 'LAMP_OUT' });
    const before = Date.now();
    const res = await postJson(t, p.apiKey, intakeBody('156-2026-000123456', { reasonCode: 'LAMPADA_APAGADA' }));
    expect(res.status).toBe(201);
    expect(res.res.headers.get('content-language')).toBe('pt-BR');
    const b = res.body;
    expect(Object.keys(b).sort()).toEqual(['alert', 'assetType', 'createdAt', 'id', 'internalProtocol', 'priority', 'protocolNumber', 'status']);
    expect(b).toMatchObject({ internalProtocol: `OS-${new Date().getUTCFullYear()}-00001`, protocolNumber: '156-2026-000123456', assetType: 'POLE', status: 'OPEN', priority: 'High' });
    expect(b.id).toMatch(UUID);
    expect(b.createdAt).toMatch(ISO_MS);
    expect(Date.parse(b.createdAt)).toBeGreaterThanOrEqual(before - 2000);
    expect(b.alert).toEqual({
      id: expect.stringMatching(UUID),
      alertNumber: 1,
      alertReasonCode: 'LAMP_OUT',
      alertReasonName: 'Lâmpada apagada',
      requesterName: 'Maria Aparecida dos Santos',
      requesterPhone: '+5511987654321',
      description: 'Lâmpada do poste apagada há três noites.',
      additionalNotes: 'A rua fica totalmente escura depois das 19h.',
      lampType: 'LED',
      externalRequestedAt: '2026-03-14T12:30:00.000Z',
      latitude: -23.5573,
      longitude: -46.6602,
      status: 'Linked',
      attachments: [],
    });
    expect(b.alert.id).not.toBe(b.id);

    const order = await t.rt.db.selectFrom('service_order').selectAll().where('id', '=', b.id).executeTakeFirstOrThrow();
    expect(order).toMatchObject({
      tenant_id: tenant.id,
      number: b.internalProtocol,
      status: 'OPEN',
      priority: 'High',
      reason_code: 'LAMP_OUT',
      address: 'Rua Augusta, 1500',
      neighborhood: 'Consolação',
      latitude: -23.5573,
      longitude: -46.6602,
      pole_id: null,
      team_id: null,
      closed_at: null,
    });
    expect(order.created_at.toISOString()).toBe(b.createdAt);
    expect(order.sla_due_at.getTime() - order.created_at.getTime()).toBe(8 * 3600_000);

    const alert = await t.rt.db.selectFrom('alert').selectAll().where('id', '=', b.alert.id).executeTakeFirstOrThrow();
    expect(alert).toMatchObject({
      status: 'Linked',
      service_order_id: b.id,
      external_system_id: p.id,
      protocol_number: '156-2026-000123456',
      partner_reason_code: 'LAMPADA_APAGADA',
      reason_code: 'LAMP_OUT',
      priority: 'High',
      address_street: 'Rua Augusta',
      address_number: '1500',
      address_neighborhood: 'Consolação',
      address_reference: 'Em frente à padaria',
      location_source: 'payload',
    });
    expect(alert.requested_at.toISOString()).toBe('2026-03-14T12:30:00.000Z');

    const alertHistory = await t.rt.db.selectFrom('alert_status_history').selectAll().where('alert_id', '=', alert.id).execute();
    expect(alertHistory).toEqual([expect.objectContaining({ from_status: null, to_status: 'Linked', actor: `partner:${p.code}` })]);
    const orderHistory = await t.rt.db.selectFrom('service_order_status_history').selectAll().where('service_order_id', '=', order.id).execute();
    expect(orderHistory).toEqual([expect.objectContaining({ from_status: null, to_status: 'OPEN', actor: `partner:${p.code}` })]);
    // No events from intake: ServiceOrder.Created is for orders created in triage.
    const events = await t.rt.db.selectFrom('event').select('id').where('alert_id', '=', alert.id).execute();
    expect(events).toEqual([]);
  });

  it('gives EXTERNAL_OTHER (Medium, 24 h) to a missing, blank or unmapped reason, and echoes absent optional fields as null', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const minimal = {
      protocolNumber: 'MIN-1',
      assetType: 'POLE',
      requestedAt: '2026-03-14T14:02:11Z',
      requester: { name: 'José Carlos Pereira' },
      address: { street: 'Avenida Paulista', latitude: -23.5614, longitude: -46.6559 },
      problem: { description: 'Poste piscando.' },
    };
    for (const [i, reasonCode] of [undefined, '', '   ', 'NOT_MAPPED'].entries()) {
      const body = { ...minimal, protocolNumber: `MIN-${i}`, ...(reasonCode === undefined ? {} : { reasonCode }) };
      const res = await postJson(t, p.apiKey, body);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ status: 'OPEN', priority: 'Medium' });
      expect(res.body.alert).toMatchObject({
        alertNumber: i + 1,
        alertReasonCode: 'EXTERNAL_OTHER',
        alertReasonName: 'Outros (sistema externo)',
        requesterPhone: null,
        additionalNotes: null,
        lampType: null,
        externalRequestedAt: '2026-03-14T14:02:11.000Z',
      });
      expect(res.body.internalProtocol).toBe(`OS-${new Date().getUTCFullYear()}-${String(i + 1).padStart(5, '0')}`);
      const order = await t.rt.db.selectFrom('service_order').select(['address', 'neighborhood', 'sla_due_at', 'created_at']).where('id', '=', res.body.id).executeTakeFirstOrThrow();
      expect(order.address).toBe('Avenida Paulista');
      expect(order.neighborhood).toBeNull();
      expect(order.sla_due_at.getTime() - order.created_at.getTime()).toBe(24 * 3600_000);
    }
  });

  it('names the reason in English and answers Content-Language: en when asked', async () => {
    const p = await makePartner(t.rt);
    const res = await postJson(t, p.apiKey, intakeBody('EN-1'), { 'accept-language': 'en-US,en;q=0.9' });
    expect(res.status).toBe(201);
    expect(res.res.headers.get('content-language')).toBe('en');
    expect(res.body.alert.alertReasonName).toBe('Other (external system)');
  });

  it('normalises requestedAt to UTC whatever the offset', async () => {
    const p = await makePartner(t.rt);
    const cases: [string, string][] = [
      ['2026-03-14T09:30:00-03:00', '2026-03-14T12:30:00.000Z'],
      ['2026-03-14T23:30:00.123+05:30', '2026-03-14T18:00:00.123Z'],
      ['2026-03-14t12:00:00z', '2026-03-14T12:00:00.000Z'],
    ];
    for (const [i, [sent, utc]] of cases.entries()) {
      const res = await postJson(t, p.apiKey, intakeBody(`TZ-${i}`, { requestedAt: sent }));
      expect(res.status).toBe(201);
      expect(res.body.alert.externalRequestedAt).toBe(utc);
    }
  });

  it('numbers alerts and orders per tenant', async () => {
    const a = await makePartner(t.rt);
    const b = await makePartner(t.rt);
    const year = new Date().getUTCFullYear();
    const a1 = await postJson(t, a.apiKey, intakeBody('N-1'));
    const b1 = await postJson(t, b.apiKey, intakeBody('N-1'));
    const a2 = await postJson(t, a.apiKey, intakeBody('N-2'));
    expect([a1.body.internalProtocol, a2.body.internalProtocol, b1.body.internalProtocol]).toEqual([`OS-${year}-00001`, `OS-${year}-00002`, `OS-${year}-00001`]);
    expect([a1.body.alert.alertNumber, a2.body.alert.alertNumber, b1.body.alert.alertNumber]).toEqual([1, 2, 1]);
  });

  it('refuses unknown properties at every level with 422 and a pointer to each; stores nothing', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    // A misspelt reasonCode and address.lat used to be ignored: the request then lost its reason and its place.
    const body = intakeBody('FWD-1', {
      reasonCod: 'LAMPADA_APAGADA',
      requester: { name: 'Ana', phone: '+5511912345678', email: 'ana@example.org' },
      address: { street: 'Rua Augusta', lat: -23.5 },
      problem: { description: 'apagada', severity: 'high' },
      attachments: [{ type: 'photo', url: 'https://example.org/a.jpg', contentType: 'image/jpeg', caption: 'night' }],
    });
    const res = await post(t, p.apiKey, body, { 'idempotency-key': '7a0c7a3e-2b9d-4e61-8c4a-1d7e9b3f6a25' });
    expect(res.status).toBe(422);
    const pb = await problem(res);
    expect(pb.type).toBe('urn:lumen:problem:validation-failed');
    expect(pb.errors!.map((e) => e.pointer).sort()).toEqual(['/address/lat', '/attachments/0/caption', '/problem/severity', '/reasonCod', '/requester/email'].sort());
    expect(pb.errors!.every((e) => /unknown properties are refused/.test(e.message))).toBe(true);
    expect(await intakeFootprint(t, tenant.id)).toMatchObject({ alerts: 0, keys: 0 });
  });

  it('answers an attachment with both url and contentBase64, or neither, with one error at the attachment', async () => {
    const p = await makePartner(t.rt);
    const both = { type: 'photo', url: 'https://example.org/a.jpg', contentBase64: 'AAAA', contentType: 'image/jpeg' };
    const neither = { type: 'photo', contentType: 'image/jpeg' };
    const res = await post(t, p.apiKey, intakeBody('ONEOF-1', { attachments: [both, neither, { contentType: 'image/png', url: 'https://example.org/b.png' }] }));
    expect(res.status).toBe(422);
    expect((await problem(res)).errors).toEqual([
      { pointer: '/attachments/0', message: expect.stringContaining('exactly one of url or contentBase64') },
      { pointer: '/attachments/1', message: expect.stringContaining('exactly one of url or contentBase64') },
      // Missing in every form: a real problem of its own, named as such.
      { pointer: '/attachments/2/type', message: 'is required' },
    ]);
  });
});

describe('manual triage', () => {
  it('leaves the alert Pending and answers the manual-mode body (no internalProtocol, no priority)', async () => {
    const tenant = await makeTenant(t.rt, { intakePolicy: 'manual' });
    const p = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canCreateServiceOrders'] });
    const res = await postJson(t, p.apiKey, intakeBody('MAN-1', { lampType: 'Sodio' }));
    expect(res.status).toBe(201);
    const b = res.body;
    expect(Object.keys(b).sort()).toEqual(['alert', 'assetType', 'createdAt', 'id', 'protocolNumber', 'status']);
    expect(b).toMatchObject({ protocolNumber: 'MAN-1', assetType: 'POLE', status: 'RECEIVED' });
    expect(b.id).toBe(b.alert.id);
    expect(b.alert).toEqual({
      id: b.id,
      alertNumber: 1,
      alertReasonCode: 'EXTERNAL_OTHER',
      alertReasonName: 'Outros (sistema externo)',
      requesterName: 'Maria Aparecida dos Santos',
      requesterPhone: '+5511987654321',
      description: 'Lâmpada do poste apagada há três noites.',
      additionalNotes: 'A rua fica totalmente escura depois das 19h.',
      lampType: 'Sodio',
      externalRequestedAt: '2026-03-14T12:30:00.000Z',
      latitude: -23.5573,
      longitude: -46.6602,
      status: 'Pending',
      attachments: [],
    });
    const alert = await t.rt.db.selectFrom('alert').selectAll().where('id', '=', b.id).executeTakeFirstOrThrow();
    expect(alert.created_at.toISOString()).toBe(b.createdAt);
    expect(alert).toMatchObject({ status: 'Pending', service_order_id: null, priority: 'Medium' });
    expect(alert.sla_due_at.getTime() - alert.created_at.getTime()).toBe(24 * 3600_000);
    expect(await intakeFootprint(t, tenant.id)).toMatchObject({ alerts: 1, orders: 0 });
    const history = await t.rt.db.selectFrom('alert_status_history').selectAll().where('alert_id', '=', b.id).execute();
    expect(history).toEqual([expect.objectContaining({ from_status: null, to_status: 'Pending' })]);
  });

  it('waits for triage when the key has only canCreateAlerts, whatever the policy', async () => {
    const tenant = await makeTenant(t.rt, { intakePolicy: 'automatic' });
    const p = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canCreateAlerts'] });
    const res = await postJson(t, p.apiKey, intakeBody('ALERTS-ONLY'));
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('RECEIVED');
    expect(res.body.alert.status).toBe('Pending');
    expect(res.body.internalProtocol).toBeUndefined();
    expect(await intakeFootprint(t, tenant.id)).toMatchObject({ alerts: 1, orders: 0 });
  });
});

describe('errors (interface 7, N4)', () => {
  it('401 without a key or with an unknown one', async () => {
    for (const apiKey of [undefined, 'lmn_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']) {
      const res = await t.fetch('/api/external/service-orders', { method: 'POST', apiKey, json: intakeBody('X') });
      expect(res.status).toBe(401);
      expect((await problem(res)).type).toBe('urn:lumen:problem:unauthorized');
    }
  });

  it('403 for a key without either creation scope, and nothing is written', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] });
    const res = await post(t, p.apiKey, intakeBody('FORBIDDEN-1'));
    expect(res.status).toBe(403);
    expect((await problem(res)).type).toBe('urn:lumen:problem:forbidden');
    expect(await intakeFootprint(t, tenant.id)).toEqual({ alerts: 0, orders: 0, counters: 0, attachments: 0, failures: 0, keys: 0 });
  });

  it('400 for malformed JSON, 415 for a body that is not JSON', async () => {
    const p = await makePartner(t.rt);
    const malformed = await t.fetch('/api/external/service-orders', { method: 'POST', apiKey: p.apiKey, headers: { 'content-type': 'application/json' }, body: '{"protocolNumber": ' });
    expect(malformed.status).toBe(400);
    expect((await problem(malformed)).type).toBe('urn:lumen:problem:malformed-json');
    const text = await t.fetch('/api/external/service-orders', { method: 'POST', apiKey: p.apiKey, headers: { 'content-type': 'text/plain' }, body: JSON.stringify(intakeBody('TXT')) });
    expect(text.status).toBe(415);
    expect((await problem(text)).type).toBe('urn:lumen:problem:unsupported-media-type');
  });

  it('400 invalid-idempotency-key for a key that is not a UUID; the quoted form is accepted', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    for (const key of ['not-a-uuid', '12345', '"5f0c7a3e-2b9d-4e61-8c4a-1d7e9b3f6a25', '5f0c7a3e2b9d4e618c4a1d7e9b3f6a25']) {
      const res = await post(t, p.apiKey, intakeBody('KEY-1'), { 'idempotency-key': key });
      expect(res.status).toBe(400);
      const body = await problem(res);
      expect(body.type).toBe('urn:lumen:problem:invalid-idempotency-key');
      expect(body.errors).toEqual([{ pointer: '/header/Idempotency-Key', message: expect.any(String) }]);
    }
    expect(await intakeFootprint(t, tenant.id)).toMatchObject({ alerts: 0, keys: 0 });
    const quoted = await post(t, p.apiKey, intakeBody('KEY-1'), { 'idempotency-key': '"5F0C7A3E-2B9D-4E61-8C4A-1D7E9B3F6A25"' });
    expect(quoted.status).toBe(201);
  });

  it('422 with one errors[] entry per problem, unknown assetType and a non-E.164 phone included; nothing is written', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const body = intakeBody('BAD-1', {
      assetType: 'LUMINAIRE',
      requester: { phone: '(11) 98765-4321' },
      address: { number: '10', latitude: -23.5 },
      attachments: [
        { type: 'video', contentBase64: 'AAAA', contentType: 'image/jpeg' },
        { type: 'photo', url: 'https://example.org/a.jpg', contentBase64: 'AAAA', contentType: 'image/jpeg' },
        { type: 'photo', url: 'https://example.org/b.gif', contentType: 'image/gif' },
      ],
    });
    const res = await post(t, p.apiKey, body, { 'accept-language': 'en', 'idempotency-key': '0b1c2d3e-4f50-4617-8a9b-0c1d2e3f4a5b' });
    expect(res.status).toBe(422);
    const pb = await problem(res);
    expect(pb.type).toBe('urn:lumen:problem:validation-failed');
    expect(pb.title).toBe('Validation failed');
    const pointers = pb.errors!.map((e) => e.pointer).sort();
    expect(pointers).toEqual(
      [
        '/assetType',
        '/requester/name',
        '/requester/phone',
        '/address/street',
        '/address/longitude',
        '/attachments/0/type',
        '/attachments/1',
        '/attachments/2/contentType',
      ].sort(),
    );
    expect(pb.detail).toBe(`The request body has ${pb.errors!.length} problem(s); see errors.`);
    expect(await intakeFootprint(t, tenant.id)).toEqual({ alerts: 0, orders: 0, counters: 0, attachments: 0, failures: 0, keys: 0 });
  });

  it('422 for more than 10 attachments, and for a body that is not an object', async () => {
    const p = await makePartner(t.rt);
    const eleven = Array.from({ length: 11 }, () => ({ type: 'photo', url: 'https://example.org/a.jpg', contentType: 'image/jpeg' }));
    const res = await post(t, p.apiKey, intakeBody('MANY', { attachments: eleven }));
    expect(res.status).toBe(422);
    expect((await problem(res)).errors).toEqual([{ pointer: '/attachments', message: expect.stringContaining('10') }]);
    const arr = await post(t, p.apiKey, [intakeBody('ARR')]);
    expect(arr.status).toBe(422);
  });

  it('422 for types the schema does not coerce (a numeric protocolNumber)', async () => {
    const p = await makePartner(t.rt);
    const res = await post(t, p.apiKey, intakeBody('X', { protocolNumber: 12345 }));
    expect(res.status).toBe(422);
    expect((await problem(res)).errors).toEqual([{ pointer: '/protocolNumber', message: expect.any(String) }]);
  });
});

describe('body limit', () => {
  it('413 over LUMEN_BODY_LIMIT, before anything is written', async () => {
    const small = await startIntakeApp({ LUMEN_BODY_LIMIT: '4kb' });
    try {
      const tenant = await makeTenant(small.rt);
      const p = await makePartner(small.rt, { tenantId: tenant.id });
      const big = intakeBody('BIG-1', { problem: { description: 'x'.repeat(3000), additionalNotes: 'y'.repeat(3000) } });
      const res = await post(small, p.apiKey, big);
      expect(res.status).toBe(413);
      expect((await problem(res)).type).toBe('urn:lumen:problem:payload-too-large');
      expect(await intakeFootprint(small, tenant.id)).toMatchObject({ alerts: 0, keys: 0 });
      expect((await post(small, p.apiKey, intakeBody('BIG-1'))).status).toBe(201);
    } finally {
      await small.stop();
    }
  });
});
