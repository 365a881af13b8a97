import { randomUUID } from 'node:crypto';
/**
 * The city's dashboard figures and CSV exports, on data whose times are set exactly, in
 * a city far from São Paulo beside another city that must see none of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backlogOrdersStatement, repairStatement, triageFigures, triageStatement } from '../../src/db/repositories/reports/report.repository.js';
import { cliActor } from '../../src/services/audit/index.js';
import { assignServiceOrder, cancelServiceOrder, completeServiceOrder, createOrderFromAlert, discardAlert } from '../../src/services/operations/index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makePartner, makeReason, makeTeam, makeTenant } from '../support/factories.js';
import { makeToken, tokenFetch } from '../operators/support.js';
import { explainNodes } from '../support/plans.js';

let t: TestApp;
let curitiba: string;
let manaus: string;
let viewer: ReturnType<typeof tokenFetch>;
let outsider: ReturnType<typeof tokenFetch>;
let teamNorte: { id: string; name: string };
let portal: { id: string; code: string };
let app156: { id: string; code: string };
const ids: Record<string, string> = {};
const HOUR = 3600_000;

async function at(sqlText: string, ...params: unknown[]): Promise<void> {
  await t.rt.pool.query(sqlText, params);
}

beforeAll(async () => {
  t = await startTestApp();
  curitiba = (await makeTenant(t.rt, { name: 'Curitiba', ibgeCode: '4106902', intakePolicy: 'manual' })).id;
  manaus = (await makeTenant(t.rt, { name: 'Manaus', ibgeCode: '1302603', intakePolicy: 'manual' })).id;
  await at(`UPDATE tenant SET timezone = 'America/Sao_Paulo' WHERE id = $1`, curitiba);
  await makeReason(t.rt, { tenantId: curitiba, code: 'LAMP_OUT', namePt: 'Lâmpada apagada', nameEn: 'Lamp out', slaHours: 24 });
  portal = await makePartner(t.rt, { tenantId: curitiba, code: 'PORTAL-CURITIBA-156-CIDADAO' });
  app156 = await makePartner(t.rt, { tenantId: curitiba, code: 'APP-ILUMINA' });
  teamNorte = await makeTeam(t.rt, { tenantId: curitiba, name: 'Equipe Boa Vista — Iluminação Norte' });
  viewer = tokenFetch(t, (await makeToken(t.rt, { service: true, grants: [{ tenantId: curitiba, role: 'viewer' }] })).token);
  outsider = tokenFetch(t, (await makeToken(t.rt, { service: true, grants: [{ tenantId: manaus, role: 'city-admin' }] })).token);

  const now = Date.now();
  // Three triage decisions: 1 h, 3 h (a discard) and 2 h after arrival.
  const a1 = await makeAlert(t.rt, { tenantId: curitiba, externalSystemId: portal.id, reasonCode: 'LAMP_OUT', street: 'Rua Comendador Araújo', number: '143' });
  const a2 = await makeAlert(t.rt, { tenantId: curitiba, externalSystemId: portal.id, reasonCode: 'LAMP_OUT' });
  const a4 = await makeAlert(t.rt, { tenantId: curitiba, externalSystemId: app156.id, reasonCode: 'LAMP_OUT' });
  const o1 = await createOrderFromAlert(t.rt, cliActor(), a1.id, {});
  await discardAlert(t.rt, cliActor(), a2.id, 'Poste particular, fora da rede municipal.', 'pt-BR');
  const o2 = await createOrderFromAlert(t.rt, cliActor(), a4.id, {});
  for (const [alert, arrivedHoursAgo, decidedAfterHours] of [[a1, 30, 1], [a2, 20, 3], [a4, 12, 2]] as const) {
    await at(`UPDATE alert SET created_at = $2 WHERE id = $1`, alert.id, new Date(now - arrivedHoursAgo * HOUR));
    await at(`UPDATE alert_status_history SET at = $2 WHERE alert_id = $1 AND to_status = 'Pending'`, alert.id, new Date(now - arrivedHoursAgo * HOUR));
    // The decision keeps when its alert became Pending (written with it: migration 0113).
    await at(`UPDATE alert_status_history SET at = $2, pending_since = $3 WHERE alert_id = $1 AND from_status = 'Pending'`, alert.id, new Date(now - (arrivedHoursAgo - decidedAfterHours) * HOUR), new Date(now - arrivedHoursAgo * HOUR));
  }
  // Two repairs by the same team: 48 h late, and 6 h on time.
  for (const [order, openedHoursAgo, closedHoursAgo, dueHoursAgo] of [[o1, 72, 24, 48], [o2, 10, 4, -1]] as const) {
    await assignServiceOrder(t.rt, cliActor(), order.id, teamNorte.id);
    await completeServiceOrder(t.rt, cliActor(), order.id, 'Lâmpada trocada por LED 100 W.');
    await at(`UPDATE service_order SET opened_at = $2, closed_at = $3, sla_due_at = $4 WHERE id = $1`, order.id, new Date(now - openedHoursAgo * HOUR), new Date(now - closedHoursAgo * HOUR), new Date(now - dueHoursAgo * HOUR));
  }
  ids.o1 = o1.number;
  ids.o2 = o2.number;
  // A second report from the portal on the first repair, linked without triage: the order
  // still counts once for the portal.
  const again = await makeAlert(t.rt, { tenantId: curitiba, externalSystemId: portal.id, reasonCode: 'LAMP_OUT' });
  await at(`UPDATE alert SET status = 'Linked', service_order_id = $2 WHERE id = $1`, again.id, o1.id);
  // Backlog: an open order 10 days old and past its deadline; a Pending alert 2 days old.
  const open = await makeAlert(t.rt, { tenantId: curitiba, externalSystemId: portal.id, status: 'Linked', reasonCode: 'LAMP_OUT' });
  await at(`UPDATE service_order SET opened_at = $2, sla_due_at = $3 WHERE id = $1`, open.serviceOrderId, new Date(now - 240 * HOUR), new Date(now - 200 * HOUR));
  ids.o3 = open.serviceOrderNumber!;
  const waiting = await makeAlert(t.rt, { tenantId: curitiba, externalSystemId: app156.id, reasonCode: 'LAMP_OUT' });
  await at(`UPDATE alert SET created_at = $2 WHERE id = $1`, waiting.id, new Date(now - 48 * HOUR));
  ids.waiting = String(waiting.alertNumber);
  // Manaus has its own order, which Curitiba's figures and exports never include.
  const manausPartner = await makePartner(t.rt, { tenantId: manaus });
  await makeAlert(t.rt, { tenantId: manaus, externalSystemId: manausPartner.id, status: 'Linked' });
});
afterAll(async () => {
  await t?.stop();
});

describe('the dashboard of a city', () => {
  it('counts the backlog, times triage and repair (median and 90th percentile) and SLA compliance, per team, reason and partner', async () => {
    const res = await viewer(`/tenants/${curitiba}/report`);
    expect(res.status).toBe(200);
    const r = (await res.json()) as Record<string, any>;
    expect(r.backlog).toEqual({ orders: [{ status: 'OPEN', age: 'd7_30', count: 1 }], pendingAlerts: [{ age: 'd1_3', count: 1 }], overdueOrders: 1 });
    expect(r.timeToTriage.overall).toMatchObject({ count: 3, p50Seconds: 7200, p90Seconds: 10080 });
    expect(r.timeToTriage.byPartner).toEqual([
      expect.objectContaining({ key: portal.code, label: portal.code, count: 2, p50Seconds: 7200 }),
      expect.objectContaining({ key: app156.code, count: 1, p50Seconds: 7200 }),
    ]);
    expect(r.timeToTriage.byReason).toEqual([expect.objectContaining({ key: 'LAMP_OUT', label: 'Lâmpada apagada', count: 3 })]);
    expect(r.timeToRepair.overall).toMatchObject({ count: 2, p50Seconds: (48 + 6) * 1800, onTime: null });
    expect(r.timeToRepair.byTeam).toEqual([expect.objectContaining({ key: teamNorte.id, label: teamNorte.name, count: 2 })]);
    expect(r.sla.overall).toMatchObject({ count: 2, onTime: 1, p50Seconds: null });
    expect(r.sla.byPartner).toHaveLength(2);
    expect(r.sla.byPartner).toEqual(expect.arrayContaining([expect.objectContaining({ key: portal.code, count: 1, onTime: 0 }), expect.objectContaining({ key: app156.code, count: 1, onTime: 1 })]));

    // In English the reason's English name; a period with nothing in it has empty figures.
    const en = (await (await viewer(`/tenants/${curitiba}/report`, { headers: { 'accept-language': 'en' } })).json()) as Record<string, any>;
    expect(en.timeToTriage.byReason[0].label).toBe('Lamp out');
    const old = (await (await viewer(`/tenants/${curitiba}/report?from=2025-01-01T00:00:00Z&to=2025-02-01T00:00:00Z`)).json()) as Record<string, any>;
    expect(old.timeToRepair.overall).toEqual({ key: null, label: null, count: 0, p50Seconds: null, p90Seconds: null, onTime: null });
    expect(old.sla.overall.onTime).toBe(0);
  });

  it('reads the period’s completed orders, and the open orders of the backlog, from an index alone', async () => {
    const statements = [
      [repairStatement(curitiba, new Date(Date.now() - 30 * 24 * HOUR), new Date()), 'service_order_completed_idx'],
      [backlogOrdersStatement(curitiba), 'service_order_open_opened_idx'],
    ] as const;
    for (const [statement, index] of statements) {
      const q = statement.compile(t.rt.db);
      const client = await t.rt.pool.connect();
      try {
        await client.query('BEGIN');
        // Whatever the table's size: the choice left is between reading the rows from the table and from the index.
        await client.query('SET LOCAL enable_seqscan = off');
        await client.query('SET LOCAL enable_bitmapscan = off');
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${q.sql}`, [...q.parameters]);
        const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
        expect(plan).toMatch(new RegExp(`Index Only Scan using ${index} on service_order`));
        expect(plan).not.toMatch(/(?<!Only )Scan using \w+ on service_order/);
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
    }
  });

  it('reads the partners of the period’s orders from the city’s own alerts, none of another city’s', async () => {
    const q = repairStatement(curitiba, new Date(Date.now() - 30 * 24 * HOUR), new Date()).compile(t.rt.db);
    const reads = (await explainNodes(t.rt.pool, q)).filter((n) => n['Relation Name'] === 'alert');
    expect(reads.length).toBeGreaterThan(0);
    // Whichever way the planner reads the table, the city is in the condition it reads by.
    for (const n of reads) expect([n['Index Cond'], n['Recheck Cond'], n.Filter].join(' ')).toMatch(/tenant_id = '[0-9a-f-]+'::uuid/);
  });

  it('reads the period’s triage decisions from the city’s own, none of another city’s', async () => {
    const q = triageStatement(curitiba, new Date(Date.now() - 30 * 24 * HOUR), new Date()).compile(t.rt.db);
    const reads = (await explainNodes(t.rt.pool, q)).filter((n) => n['Relation Name'] === 'alert_status_history');
    expect(reads.length).toBeGreaterThan(0);
    for (const n of reads) expect([n['Index Cond'], n['Recheck Cond']].join(' ')).toMatch(/tenant_id = '[0-9a-f-]+'::uuid/);
  });

  it('times a decision from its alert’s last return to Pending, recorded with the decision', async () => {
    const boaVista = (await makeTenant(t.rt, { name: 'Boa Vista', ibgeCode: '1400100', intakePolicy: 'manual' })).id;
    await makeReason(t.rt, { tenantId: boaVista, code: 'LAMP_OUT', namePt: 'Lâmpada apagada', nameEn: 'Lamp out', slaHours: 24 });
    const partner = await makePartner(t.rt, { tenantId: boaVista, code: 'APP-BOA-VISTA-ILUMINACAO-PUBLICA' });
    const alert = await makeAlert(t.rt, { tenantId: boaVista, externalSystemId: partner.id, reasonCode: 'LAMP_OUT' });
    // Linked to an order, back to triage when the order is cancelled, then discarded.
    const order = await createOrderFromAlert(t.rt, cliActor(), alert.id, {});
    await cancelServiceOrder(t.rt, cliActor(), order.id, 'Endereço em outro município.');
    await discardAlert(t.rt, cliActor(), alert.id, 'Poste particular, fora da rede municipal.', 'pt-BR');

    const rows = await t.rt.db.selectFrom('alert_status_history').select(['from_status', 'to_status', 'at', 'tenant_id', 'pending_since']).where('alert_id', '=', alert.id).orderBy('id').execute();
    const { created_at: arrived } = await t.rt.db.selectFrom('alert').select('created_at').where('id', '=', alert.id).executeTakeFirstOrThrow();
    const returned = rows.find((r) => r.from_status === 'Linked' && r.to_status === 'Pending');
    expect(returned).toBeDefined();
    const decisions = rows.filter((r) => r.from_status === 'Pending');
    expect(decisions.map((d) => [d.to_status, d.tenant_id])).toEqual([
      ['Linked', boaVista],
      ['Cancelled', boaVista],
    ]);
    // The first from the arrival, the second from the return; no other row carries either.
    const arrival = rows.find((r) => r.from_status === null)?.at ?? arrived;
    expect(decisions[0]!.pending_since).toEqual(arrival);
    expect(decisions[1]!.pending_since).toEqual(returned!.at);
    expect(decisions[1]!.pending_since!.getTime()).toBeGreaterThan(decisions[0]!.pending_since!.getTime());
    expect(rows.filter((r) => r.from_status !== 'Pending').every((r) => r.tenant_id === null && r.pending_since === null)).toBe(true);

    const figures = await triageFigures(t.rt.db, boaVista, new Date(Date.now() - HOUR), new Date(Date.now() + HOUR));
    const overall = figures.find((f) => f.dim === 'overall')!;
    expect(overall.count).toBe(2);
    const [lo, hi] = decisions.map((d) => (d.at.getTime() - d.pending_since!.getTime()) / 1000).sort((x, y) => x - y);
    expect(overall.p90).toBeCloseTo(lo! + 0.9 * (hi! - lo!), 3);
  });

  it('refuses a period the wrong way round or longer than a year, naming the parameter', async () => {
    for (const query of ['from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z']) {
      const res = await viewer(`/tenants/${curitiba}/report?${query}`);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { errors: { pointer: string }[] }).errors[0]!.pointer).toBe('/query/from');
    }
  });

  it('is another city’s secret: its operator gets 404 for the report and every export', async () => {
    for (const path of ['report', 'exports/service-orders', 'exports/alerts', 'exports/audit']) {
      const res = await outsider(`/tenants/${curitiba}/${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.text()).not.toContain('Curitiba');
    }
    const platform = tokenFetch(t, (await makeToken(t.rt, { service: true, platformAdmin: true })).token);
    for (const path of ['report', 'exports/service-orders', 'exports/alerts', 'exports/audit']) {
      expect((await platform(`/tenants/${randomUUID()}/${path}`)).status, `no such city: ${path}`).toBe(404);
    }
    const own = (await (await outsider(`/tenants/${manaus}/report`)).json()) as Record<string, any>;
    expect(own.backlog.orders).toEqual([{ status: 'OPEN', age: 'd0_1', count: 1 }]);
    expect(own.timeToTriage.overall.count).toBe(0);
  });
});

/** A CSV answer: its bytes start with a BOM; the rows as arrays of cells (no cell here holds a newline). */
async function csvOf(res: Response): Promise<{ bom: boolean; rows: string[][] }> {
  const bytes = Buffer.from(await res.arrayBuffer());
  const bom = bytes.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf]));
  const text = bytes.subarray(bom ? 3 : 0).toString('utf8');
  const rows = text
    .split('\n')
    .filter((l) => l !== '')
    .map((line) => {
      const cells: string[] = [];
      let cell = '';
      let quoted = false;
      for (let i = 0; i < line.length; i++) {
        const c = line[i]!;
        if (quoted && c === '"' && line[i + 1] === '"') (cell += '"'), i++;
        else if (c === '"') quoted = !quoted;
        else if (c === ',' && !quoted) cells.push(cell), (cell = '');
        else cell += c;
      }
      cells.push(cell);
      return cells;
    });
  return { bom, rows };
}

describe('CSV exports', () => {
  it('streams the orders as a spreadsheet reads them: BOM, header and words in the operator’s language, the list’s filters, nothing of another city', async () => {
    const res = await viewer(`/tenants/${curitiba}/exports/service-orders`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="ordens-\d{4}-\d{2}-\d{2}\.csv"$/);
    expect(res.headers.get('content-length')).toBeNull();
    const { bom, rows } = await csvOf(res);
    expect(bom).toBe(true);
    expect(rows[0]).toEqual(['Número', 'Estado', 'Prioridade', 'Motivo', 'Equipe', 'Poste', 'Endereço', 'Bairro', 'Aberta em', 'Prazo', 'Encerrada em', 'Atrasada', 'Alertas', 'Parceiros']);
    const byNumber = new Map(rows.slice(1).map((r) => [r[0], r]));
    expect([...byNumber.keys()].sort()).toEqual([ids.o1, ids.o2, ids.o3].sort());
    expect(byNumber.get(ids.o1)).toEqual(expect.arrayContaining(['Concluída', 'Lâmpada apagada', teamNorte.name, 'não', '2', portal.code]));
    expect(byNumber.get(ids.o3)![1]).toBe('Aberta');
    expect(byNumber.get(ids.o3)![11]).toBe('sim');
    // Times in the city's zone (São Paulo time, UTC−3), as a spreadsheet shows them.
    expect(byNumber.get(ids.o1)![8]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);

    const done = await csvOf(await viewer(`/tenants/${curitiba}/exports/service-orders?status=COMPLETED&team=${encodeURIComponent(teamNorte.name)}`));
    expect(done.rows.slice(1).map((r) => r[0]).sort()).toEqual([ids.o1, ids.o2].sort());
    const en = await csvOf(await viewer(`/tenants/${curitiba}/exports/service-orders?overdue=true`, { headers: { 'accept-language': 'en' } }));
    expect(en.rows[0]![0]).toBe('Number');
    expect(en.rows.slice(1)).toEqual([expect.arrayContaining([ids.o3, 'Open', 'Lamp out', 'yes'])]);

    const bad = await viewer(`/tenants/${curitiba}/exports/service-orders?status=DONE`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errors: { pointer: string }[] }).errors[0]!.pointer).toBe('/query/status');
  });

  it('exports the alerts and the audit log with words, not codes', async () => {
    const alerts = await csvOf(await viewer(`/tenants/${curitiba}/exports/alerts`));
    expect(alerts.rows[0]).toEqual(['Número', 'Protocolo', 'Parceiro', 'Estado', 'Motivo', 'Prioridade', 'Endereço', 'Bairro', 'Recebido em', 'Prazo', 'Ordem de serviço']);
    expect(alerts.rows.length - 1).toBe(6);
    expect(alerts.rows.map((r) => r[3])).toEqual(expect.arrayContaining(['Pendente', 'Descartado', 'Vinculado a uma ordem']));
    expect(alerts.rows.some((r) => r[6] === 'Rua Comendador Araújo, 143')).toBe(true);
    const pending = await csvOf(await viewer(`/tenants/${curitiba}/exports/alerts?status=Pending&partner=${app156.code}`));
    expect(pending.rows.slice(1).map((r) => r[0])).toEqual([`#${ids.waiting}`]);

    const audit = await csvOf(await viewer(`/tenants/${curitiba}/exports/audit`));
    expect(audit.rows[0]).toEqual(['Quando', 'Quem', 'O que', 'Objeto', 'Nota']);
    const completed = audit.rows.filter((r) => r[2] === 'Ordem concluída');
    expect(completed.map((r) => r[3]).sort()).toEqual([ids.o1, ids.o2].sort());
    expect(audit.rows.flat().join(' ')).not.toMatch(/service-order\.|service_order|[0-9a-f]{8}-[0-9a-f]{4}-/);
  });

  it('streams a large export whole, row for row what COPY writes', async () => {
    const big = (await makeTenant(t.rt, { name: 'Cidade Grande' })).id;
    const token = tokenFetch(t, (await makeToken(t.rt, { service: true, grants: [{ tenantId: big, role: 'viewer' }] })).token);
    await at(
      `INSERT INTO service_order (tenant_id, number, status, priority, reason_code, address, neighborhood, sla_due_at)
       SELECT $1, 'OS-2026-' || lpad(g::text, 6, '0'), 'OPEN', 'Medium', 'EXTERNAL_OTHER', 'Avenida Sete de Setembro, ' || g, 'Centro', now() + interval '1 day'
       FROM generate_series(1, 20000) g`,
      big,
    );
    const { rows } = await csvOf(await token(`/tenants/${big}/exports/service-orders`));
    expect(rows.length).toBe(20001);
    expect(new Set(rows.slice(1).map((r) => r[0])).size).toBe(20000);
    // The comma inside the address is quoted, so each row has every column.
    expect(rows.slice(1).filter((r) => r.length !== 14 || !r[6]!.startsWith('Avenida Sete de Setembro, ')).slice(0, 2)).toEqual([]);
  });
});
