/**
 * The inbox's and the orders list's search (GET /api/admin/alerts?text=,
 * GET /api/admin/service-orders?text=): what a row shows, accent- and
 * case-insensitive, in any order; a pole's code finds what is on the pole; another
 * city's rows are never found; the trigram index answers it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/audit/index.js';
import { createOrderFromAlert } from '../../src/services/operations/index.js';
import { alertConditions } from '../../src/db/repositories/operations/triage.repository.js';
import { filtered } from '../../src/db/repositories/operations/order-list.repository.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makeCityOrder, makeCityPole, makePartner, makeReason, makeTenant } from '../support/factories.js';
import { makeToken, tokenFetch } from '../operators/support.js';

let t: TestApp;
let curitiba: string;
let manaus: string;
let viewer: ReturnType<typeof tokenFetch>;
let manausViewer: ReturnType<typeof tokenFetch>;
const ids = {} as Record<'westphalen' | 'other' | 'onPole' | 'poleOrder' | 'saoJoaoOrder' | 'reboucasOrder' | 'manaus' | 'manausOrder', string>;
const numbers: Record<string, number> = {};

/** What a Curitiba citizen's request stores (the row shows "Rua Desembargador Westphalen, 280"). */
const WESTPHALEN = {
  protocol_number: 'SAC-CWB-2026/004711',
  address_street: 'Rua Desembargador Westphalen',
  address_number: '280',
  address_neighborhood: 'São Francisco',
  address_reference: 'Em frente à Praça Tiradentes',
  requester_name: 'Conceição Aparecida de Souza Brandão',
  requester_phone: '(41) 99999-1234',
  description: 'Lâmpada piscando a noite toda perto da Travessa São João',
};

async function setAlert(id: string, fields: Record<string, string | null>): Promise<void> {
  await t.rt.db.updateTable('alert').set(fields).where('id', '=', id).execute();
}

async function found(text: string, tenantId = curitiba, as = viewer): Promise<string[]> {
  const res = await as(`/alerts?${new URLSearchParams({ tenantId, text, pageSize: '500' })}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: { id: string }[] }).items.map((a) => a.id);
}

async function foundOrders(text: string, as = viewer, tenantId = curitiba): Promise<string[]> {
  const res = await as(`/service-orders?${new URLSearchParams({ tenantId, text })}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: { number: string }[] }).items.map((o) => o.number);
}

beforeAll(async () => {
  t = await startTestApp();
  curitiba = (await makeTenant(t.rt, { name: 'Curitiba', ibgeCode: '4106902', intakePolicy: 'manual' })).id;
  manaus = (await makeTenant(t.rt, { name: 'Manaus', ibgeCode: '1302603', intakePolicy: 'manual' })).id;
  await makeReason(t.rt, { tenantId: curitiba, code: 'LAMP_OUT', namePt: 'Lâmpada apagada', nameEn: 'Lamp out', slaHours: 24 });
  viewer = tokenFetch(t, (await makeToken(t.rt, { service: true, grants: [{ tenantId: curitiba, role: 'viewer' }] })).token);
  manausViewer = tokenFetch(t, (await makeToken(t.rt, { service: true, grants: [{ tenantId: manaus, role: 'viewer' }] })).token);

  const partner = await makePartner(t.rt, { tenantId: curitiba, code: 'CENTRAL-156-CWB' });
  const manausPartner = await makePartner(t.rt, { tenantId: manaus, code: 'CENTRAL-156-MAO' });

  const w = await makeAlert(t.rt, { tenantId: curitiba, externalSystemId: partner.id });
  await setAlert(w.id, WESTPHALEN);
  ids.westphalen = w.id;
  numbers.westphalen = w.alertNumber;

  // Another Curitiba alert: a different street, citizen and phone.
  const other = await makeAlert(t.rt, { tenantId: curitiba, externalSystemId: partner.id });
  await setAlert(other.id, {
    protocol_number: 'SAC-CWB-2026/009999',
    address_street: 'Avenida Sete de Setembro',
    address_number: '3165',
    address_neighborhood: 'Rebouças',
    address_reference: null,
    requester_name: 'Rogério Kowalski',
    requester_phone: '41 3350-7788',
    description: 'Poste com a luminária caída',
  });
  ids.other = other.id;

  // An alert linked to an order on pole CWB-PST-00731.
  const pole = await makeCityPole(t.rt, { tenantId: curitiba, code: 'CWB-PST-00731', address: 'Rua XV de Novembro, 700', neighborhood: 'Centro', latitude: -25.4296, longitude: -49.2713 });
  const onPole = await makeAlert(t.rt, { tenantId: curitiba, externalSystemId: partner.id, reasonCode: 'LAMP_OUT', street: 'Rua XV de Novembro', number: '700' });
  const order = await createOrderFromAlert(t.rt, cliActor(), onPole.id, { poleId: pole.id });
  ids.onPole = onPole.id;
  ids.poleOrder = order.number;

  // Orders without alerts: one on Rua São João in Água Verde.
  ids.saoJoaoOrder = (await makeCityOrder(t.rt, { tenantId: curitiba, address: 'Rua São João, 150', neighborhood: 'Água Verde', latitude: -25.45, longitude: -49.28 })).number;
  ids.reboucasOrder = (await makeCityOrder(t.rt, { tenantId: curitiba, address: 'Avenida Sete de Setembro, 3165', neighborhood: 'Rebouças', latitude: -25.44, longitude: -49.27 })).number;

  // Manaus: the same request word for word, a pole and an order of the same code.
  const m = await makeAlert(t.rt, { tenantId: manaus, externalSystemId: manausPartner.id, latitude: -3.13, longitude: -60.02 });
  await setAlert(m.id, { ...WESTPHALEN, protocol_number: 'SAC-MAO-2026/004711' });
  ids.manaus = m.id;
  const manausPole = await makeCityPole(t.rt, { tenantId: manaus, code: 'CWB-PST-00731', latitude: -3.131, longitude: -60.021 });
  ids.manausOrder = (await makeCityOrder(t.rt, { tenantId: manaus, poleId: manausPole.id, address: 'Rua São João, 150', neighborhood: 'Água Verde', latitude: -3.13, longitude: -60.02 })).number;
});
afterAll(async () => {
  await t?.stop();
});

describe('inbox search finds what the row shows', () => {
  it('the address as displayed, with or without its punctuation, in any case', async () => {
    expect(await found('Westphalen, 280')).toEqual([ids.westphalen]);
    expect(await found('westphalen 280')).toEqual([ids.westphalen]);
    expect(await found('DESEMBARGADOR WESTPH')).toEqual([ids.westphalen]);
    // Words in any order; each must be there.
    expect(await found('280 westphalen')).toEqual([ids.westphalen]);
    expect(await found('westphalen 3165')).toEqual([]);
  });

  it('the neighbourhood and the reference, without their accents', async () => {
    expect(await found('sao francisco')).toEqual([ids.westphalen]);
    expect(await found('praca tiradentes')).toEqual([ids.westphalen]);
    expect(await found('reboucas')).toEqual([ids.other]);
  });

  it('the display number and the protocol', async () => {
    expect(await found(`#${numbers.westphalen}`)).toContain(ids.westphalen);
    expect(await found('SAC-CWB-2026/004711')).toEqual([ids.westphalen]);
    expect(await found('004711')).toEqual([ids.westphalen]);
  });

  it("the citizen's name, accents or not", async () => {
    expect(await found('Conceição Brandão')).toEqual([ids.westphalen]);
    expect(await found('conceicao brandao')).toEqual([ids.westphalen]);
    expect(await found('kowalski')).toEqual([ids.other]);
  });

  it("the citizen's phone as shown or as bare digits", async () => {
    expect(await found('(41) 99999-1234')).toEqual([ids.westphalen]);
    expect(await found('41 99999')).toEqual([ids.westphalen]);
    expect(await found('4199999')).toEqual([ids.westphalen]);
    expect(await found('41999991234')).toEqual([ids.westphalen]);
    expect(await found('3350-7788')).toEqual([ids.other]);
    expect(await found('4133507788')).toEqual([ids.other]);
  });

  it('the description, accent- and case-insensitive ("sao joao" finds "São João")', async () => {
    expect(await found('sao joao')).toEqual([ids.westphalen]);
    expect(await found('LAMPADA PISCANDO')).toEqual([ids.westphalen]);
    expect(await found('luminaria caida')).toEqual([ids.other]);
  });

  it("a pole's code, in any case: the alerts on its orders", async () => {
    expect(await found('CWB-PST-00731')).toEqual([ids.onPole]);
    expect(await found('cwb-pst-00731')).toEqual([ids.onPole]);
  });

  it('keeps up with every write of a field (the search text is generated by the row)', async () => {
    await setAlert(ids.other, { requester_name: 'Joana Wiśniewska Kowalczyk', requester_phone: '(41) 98888-0001' });
    expect(await found('kowalski')).toEqual([]);
    expect(await found('wisniewska')).toEqual([ids.other]);
    expect(await found('4198888')).toEqual([ids.other]);
  });

  it("never finds another city's alert, whatever is typed", async () => {
    for (const q of ['Westphalen, 280', 'conceicao', '4199999', 'SAC-MAO-2026/004711', 'CWB-PST-00731']) {
      expect(await found(q)).not.toContain(ids.manaus);
    }
    expect(await found('SAC-MAO-2026/004711')).toEqual([]);
    // Manaus finds its own; the Curitiba viewer asking for Manaus gets an empty page.
    expect(await found('westphalen', manaus, manausViewer)).toEqual([ids.manaus]);
    expect(await found('westphalen', manaus, viewer)).toEqual([]);
  });
});

describe('orders list search', () => {
  it('number, address and neighbourhood, accent- and case-insensitive', async () => {
    expect(await foundOrders('sao joao 150')).toEqual([ids.saoJoaoOrder]);
    expect(await foundOrders('agua verde')).toEqual([ids.saoJoaoOrder]);
    expect(await foundOrders('REBOUÇAS')).toEqual([ids.reboucasOrder]);
    expect(await foundOrders(ids.reboucasOrder.toLowerCase())).toEqual([ids.reboucasOrder]);
  });

  it("a pole's code in any case finds the orders on it, in the caller's cities only", async () => {
    expect(await foundOrders('cwb-pst-00731')).toEqual([ids.poleOrder]);
    expect(await foundOrders('CWB-PST-00731', manausViewer, manaus)).toEqual([ids.manausOrder]);
    expect(await foundOrders('agua verde')).not.toContain(ids.manausOrder);
  });
});

describe('the index answers the search', () => {
  beforeAll(async () => {
    // Some thousands of alerts and orders in Curitiba, so the planner has a choice to make.
    const partnerId = (await t.rt.db.selectFrom('external_system').select('id').where('code', '=', 'CENTRAL-156-CWB').executeTakeFirstOrThrow()).id;
    await t.rt.pool.query(
      `INSERT INTO alert (tenant_id, external_system_id, protocol_number, alert_number, status, requested_at, requester_name, requester_phone, reason_code, priority,
                          sla_due_at, address_street, address_number, address_neighborhood, description)
       SELECT $1, $2, 'SAC-CWB-BULK-' || g, 100000 + g, 'Pending', now(), 'Cidadão ' || g, '(41) 9' || lpad(g::text, 4, '0') || '-' || lpad((g * 7 % 10000)::text, 4, '0'), 'EXTERNAL_OTHER', 'Medium',
              now() + interval '1 day', (ARRAY['Rua Marechal Deodoro', 'Avenida Batel', 'Rua Mateus Leme', 'Rua Padre Anchieta'])[1 + g % 4], (g % 3000)::text, 'Centro', 'Lâmpada apagada ' || g
         FROM generate_series(1, 6000) g`,
      [curitiba, partnerId],
    );
    await t.rt.pool.query(
      `INSERT INTO service_order (tenant_id, number, priority, reason_code, address, neighborhood, sla_due_at)
       SELECT $1, 'OS-2025-' || lpad(g::text, 6, '0'), 'Medium', 'EXTERNAL_OTHER', 'Rua Mateus Leme, ' || g, 'São Francisco', now() + interval '1 day'
         FROM generate_series(1, 6000) g`,
      [curitiba],
    );
    // As autovacuum leaves them: the GIN pending lists merged, statistics current.
    await t.rt.pool.query('VACUUM (ANALYZE) alert, service_order');
  });

  async function plan(compiled: { sql: string; parameters: readonly unknown[] }): Promise<string> {
    const { rows } = await t.rt.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${compiled.sql}`, [...compiled.parameters]);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  }

  it("the inbox's search uses alert_search_idx, and the pole's code the pole index", async () => {
    const q = t.rt.db.selectFrom('alert as a').select('a.id').where(alertConditions({ tenantId: curitiba, text: 'westphalen 280' })).compile();
    const p = await plan(q);
    expect(p).toContain('alert_search_idx');
    expect(p).toContain('pole_code_upper_idx');
    expect(p).not.toMatch(/Seq Scan on alert/);
    expect(await found('westphalen 280')).toEqual([ids.westphalen]);
  });

  it("the orders list's search uses service_order_search_idx", async () => {
    const q = filtered(t.rt.db, { tenants: [curitiba], text: 'sao joao 150' }).select('so.id').compile();
    const p = await plan(q);
    expect(p).toContain('service_order_search_idx');
    expect(p).not.toMatch(/Seq Scan on service_order/);
    expect(await foundOrders('sao joao 150')).toEqual([ids.saoJoaoOrder]);
  });
});
