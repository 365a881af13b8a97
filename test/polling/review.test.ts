/**
 * Refused polled items an operator reviews (issue 23 §2): corrected and accepted, the
 * item becomes an alert as a valid polled item would, once; or dismissed with a reason.
 * Audited; another city's operator gets 404. A real partner endpoint on loopback returns
 * the items; Manaus and Curitiba.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, problemOf } from '../operations/support.js';
import { makeToken } from '../operators/support.js';
import { waitFor } from '../events/support.js';
import { makePollingPartner, request, startPartnerStub, type PartnerStub } from './support.js';

let t: TestApp;
let api: ReturnType<typeof adminFetch>;
let stub: PartnerStub;
let partner: { id: string; code: string; tenantId: string };

const MANAUS = { latitude: -3.1316, longitude: -60.0233 };
// The citizen left the street empty and wrote no description; another item names a tree.
const noStreet = request('MAO-156-0001', '2026-11-26T12:00:01.000Z', {
  address: { street: '', number: '77', neighborhood: 'Adrianópolis', ...MANAUS },
  problem: { description: '' },
  requester: { name: 'Francisca das Chagas Nascimento', phone: '+5592991234567' },
});
const tree = request('MAO-156-0002', '2026-11-26T12:00:02.000Z', { assetType: 'TREE', address: { street: 'Rua Pará', ...MANAUS } });
const twice = request('MAO-156-0003', '2026-11-26T12:00:03.000Z', { address: { street: '', ...MANAUS } });
const dull = request('MAO-156-0004', '2026-11-26T12:00:04.000Z', { address: { street: '', ...MANAUS } });

beforeAll(async () => {
  t = await startTestApp();
  api = adminFetch(t, await adminToken(t, 'review-desk'));
  stub = await startPartnerStub((call) => ({ json: call.n === 1 ? { items: [noStreet, tree, twice, dull], nextSince: '2026-11-26T12:00:04.000Z' } : { items: [] } }));
  const made = await makePollingPartner(t.rt, stub.url, { interval: 180, code: 'PORTAL-156-MANAUS-CONSULTA' });
  partner = { id: made.id, code: made.code, tenantId: made.tenantId };
  expect((await api(`/partners/${partner.code}/polling/poll-now`, { method: 'POST' })).status).toBe(202);
  await waitFor(async () => ((await (await api(`/partners/${partner.code}/rejected-inbound-items?status=open`)).json()) as { total: number }).total === 4, 15_000, 'the refused items');
});
afterAll(async () => {
  await stub?.close();
  await t?.stop();
});

async function itemOf(protocol: string): Promise<{ id: string; reasons: { pointer: string }[]; resolvedAt: string | null; dismissedAt: string | null }> {
  const page = (await (await api(`/partners/${partner.code}/rejected-inbound-items?status=all&pageSize=50`)).json()) as { items: { id: string; protocolNumber: string; reasons: { pointer: string }[]; resolvedAt: string | null; dismissedAt: string | null }[] };
  return page.items.find((i) => i.protocolNumber === protocol)!;
}

const alertsOf = (protocol: string) => t.rt.db.selectFrom('alert').select(['id', 'address_street', 'address_number', 'description', 'requester_phone', 'status']).where('external_system_id', '=', partner.id).where('protocol_number', '=', protocol).execute();
const accept = (id: string, corrections: Record<string, unknown>, call = api) => call(`/rejected-inbound-items/${id}/accept`, { json: { corrections } });

describe('correct and accept', () => {
  it('the corrected item becomes an alert once; the refusal is resolved and audited with before and after', async () => {
    const item = await itemOf('MAO-156-0001');
    expect(item.reasons.map((r) => r.pointer).sort()).toEqual(['/address/street', '/problem/description']);
    const res = await accept(item.id, { street: 'Avenida André Araújo', description: 'Poste apagado em frente à escola estadual.' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { accepted: boolean; item: Record<string, any> };
    expect(body.accepted).toBe(true);
    expect(body.item).toMatchObject({ resolvedAt: expect.any(String), corrections: { street: 'Avenida André Araújo', description: 'Poste apagado em frente à escola estadual.' }, acceptedBy: expect.stringContaining('review-desk') });
    const alerts = await alertsOf('MAO-156-0001');
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ address_street: 'Avenida André Araújo', address_number: '77', description: 'Poste apagado em frente à escola estadual.', requester_phone: '+5592991234567' });
    const audit = await t.rt.db.selectFrom('audit_log').selectAll().where('entity_id', '=', partner.id).where('action', '=', 'inbound.accept').execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]!.before).toMatchObject({ itemId: item.id, street: '', description: '' });
    expect(audit[0]!.after).toMatchObject({ accepted: true, street: 'Avenida André Araújo' });

    // Again: answered as it is, nothing new.
    const again = await accept(item.id, { street: 'Outra rua' });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { accepted: boolean }).accepted).toBe(true);
    expect(await alertsOf('MAO-156-0001')).toHaveLength(1);
    expect(await t.rt.db.selectFrom('audit_log').select('id').where('entity_id', '=', partner.id).where('action', '=', 'inbound.accept').execute()).toHaveLength(1);
  });

  it('two accepts at once make one alert', async () => {
    const item = await itemOf('MAO-156-0003');
    const [a, b] = await Promise.all([accept(item.id, { street: 'Rua Recife' }), accept(item.id, { street: 'Rua Recife' })]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(await alertsOf('MAO-156-0003')).toHaveLength(1);
  });

  it('a correction that does not fix the refusal creates nothing and keeps the new reasons', async () => {
    const item = await itemOf('MAO-156-0002');
    const res = await accept(item.id, { street: 'Rua Pará, esquina com a Rua Belém' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { accepted: boolean; item: { reasons: { pointer: string }[]; resolvedAt: string | null } };
    expect(body.accepted).toBe(false);
    expect(body.item.resolvedAt).toBeNull();
    expect(body.item.reasons.map((r) => r.pointer)).toEqual(['/assetType']);
    expect(await alertsOf('MAO-156-0002')).toHaveLength(0);
  });

  it('an empty correction or an unknown field is 422 and changes nothing', async () => {
    const item = await itemOf('MAO-156-0004');
    const empty = await accept(item.id, { street: '' });
    expect(empty.status).toBe(422);
    expect((await problemOf(empty)).errors?.[0]?.pointer).toBe('/corrections/street');
    expect((await accept(item.id, { assetType: 'POLE' })).status).toBe(422);
    expect((await itemOf('MAO-156-0004')).resolvedAt).toBeNull();
  });
});

describe('dismiss with a reason, and isolation', () => {
  it("another city's operator gets 404; the city's own dismisses with a reason, audited; a dismissed item cannot be accepted", async () => {
    const item = await itemOf('MAO-156-0004');
    const curitiba = (await makeTenant(t.rt, { name: 'Curitiba' })).id;
    const outsider = adminFetch(t, (await makeToken(t.rt, { service: true, grants: [{ tenantId: curitiba, role: 'city-admin' }] })).token);
    expect((await accept(item.id, { street: 'Rua Chile' }, outsider)).status).toBe(404);
    expect((await outsider(`/rejected-inbound-items/${item.id}/dismiss`, { json: { reason: 'não é nosso' } })).status).toBe(404);

    const res = await api(`/rejected-inbound-items/${item.id}/dismiss`, { json: { reason: 'Pedido de teste do parceiro, sem endereço real.' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ dismissedAt: expect.any(String), dismissReason: 'Pedido de teste do parceiro, sem endereço real.' });
    const audit = await t.rt.db.selectFrom('audit_log').selectAll().where('entity_id', '=', partner.id).where('action', '=', 'inbound.dismiss').execute();
    expect(audit.map((a) => a.note)).toEqual(['Pedido de teste do parceiro, sem endereço real.']);
    // The same from the command line, on an item already dismissed: nothing changes.
    const cli = await t.cli('inbound', 'dismiss', item.id, '--reason', 'outro motivo', '--json');
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ dismissReason: 'Pedido de teste do parceiro, sem endereço real.' });
    const treeItem = await itemOf('MAO-156-0002');
    const byCli = await t.cli('inbound', 'dismiss', treeItem.id, '--reason', 'Árvore: encaminhado à Secretaria de Meio Ambiente.', '--json');
    expect(JSON.parse(byCli.stdout)).toMatchObject({ dismissedAt: expect.any(String), dismissReason: 'Árvore: encaminhado à Secretaria de Meio Ambiente.' });
    const late = await accept(item.id, { street: 'Rua Chile' });
    expect(late.status).toBe(409);
    expect(await alertsOf('MAO-156-0004')).toHaveLength(0);
  });
});
