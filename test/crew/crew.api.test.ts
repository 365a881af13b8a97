/**
 * Field crews through the admin API: team membership (audited, tenant-isolated), "my team
 * today" (the open orders of the caller's teams, Critical first then by deadline) and the
 * planned visit of an order (end after start, overdue when the window ended).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeCityOrder, makeTeam, makeTenant } from '../support/factories.js';
import { makeOperator, makeToken, tokenFetch } from '../operators/support.js';
import { problemOf } from '../operations/support.js';

let t: TestApp;
let curitiba: { id: string };
let manaus: { id: string };
let admin: ReturnType<typeof tokenFetch>;
let manausAdmin: ReturnType<typeof tokenFetch>;
let crew: { id: string; email: string };
let crewApi: ReturnType<typeof tokenFetch>;
let team: { id: string; name: string };
let manausTeam: { id: string; name: string };

beforeAll(async () => {
  t = await startTestApp();
  curitiba = await makeTenant(t.rt, { name: 'Curitiba' });
  manaus = await makeTenant(t.rt, { name: 'Manaus' });
  const a = await makeOperator(t.rt, { grants: [{ tenantId: curitiba.id, role: 'city-admin' }], name: 'Admin de Curitiba' });
  admin = tokenFetch(t, (await makeToken(t.rt, { operator: a.email })).token);
  const m = await makeOperator(t.rt, { grants: [{ tenantId: manaus.id, role: 'city-admin' }], name: 'Admin de Manaus' });
  manausAdmin = tokenFetch(t, (await makeToken(t.rt, { operator: m.email })).token);
  crew = await makeOperator(t.rt, { grants: [{ tenantId: curitiba.id, role: 'triager' }], name: 'Maria Aparecida dos Santos Eletricista', email: 'maria.aparecida.dos.santos.eletricista.noturna@prefeitura-curitiba.example' });
  crewApi = tokenFetch(t, (await makeToken(t.rt, { operator: crew.email })).token);
  team = await makeTeam(t.rt, { tenantId: curitiba.id, name: 'Equipe Boqueirão Noturna' });
  manausTeam = await makeTeam(t.rt, { tenantId: manaus.id, name: 'Equipe Adrianópolis' });
});

afterAll(async () => {
  await t?.stop();
});

const audits = (entityId: string) => t.rt.db.selectFrom('audit_log').select(['action', 'before', 'after', 'tenant_id']).where('entity_id', '=', entityId).orderBy('id').execute();

describe('team membership', () => {
  it('adds a member by e-mail or id once, lists the team and the operator, removes; each change audited', async () => {
    const added = await admin(`/teams/${team.id}/members/${encodeURIComponent(crew.email.toUpperCase())}`, { method: 'PUT' });
    expect(added.status).toBe(200);
    expect(await added.json()).toMatchObject({ teamId: team.id, tenantId: curitiba.id, operatorId: crew.id, name: 'Maria Aparecida dos Santos Eletricista', email: crew.email });
    // Twice changes nothing (and audits nothing).
    expect((await admin(`/teams/${team.id}/members/${crew.id}`, { method: 'PUT' })).status).toBe(200);
    const members = (await (await admin(`/teams/${team.id}/members`)).json()) as { items: { operatorId: string }[] };
    expect(members.items.map((m) => m.operatorId)).toEqual([crew.id]);
    const mine = (await (await crewApi('/operators/me/teams')).json()) as { items: { id: string; name: string }[] };
    expect(mine.items).toEqual([expect.objectContaining({ id: team.id, name: 'Equipe Boqueirão Noturna' })]);
    const byAdmin = (await (await admin(`/operators/${crew.id}/teams?tenantId=${curitiba.id}`)).json()) as { items: { id: string }[] };
    expect(byAdmin.items.map((x) => x.id)).toEqual([team.id]);
    expect((await audits(team.id)).map((a) => [a.action, a.tenant_id])).toEqual([['team.member-add', curitiba.id]]);

    expect((await admin(`/teams/${team.id}/members/${crew.id}`, { method: 'DELETE' })).status).toBe(204);
    expect(((await (await admin(`/teams/${team.id}/members`)).json()) as { items: unknown[] }).items).toEqual([]);
    expect((await admin(`/teams/${team.id}/members/${crew.id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await audits(team.id)).map((a) => a.action)).toEqual(['team.member-add', 'team.member-remove']);
  });

  it("refuses an operator without a role on the team's city (422 with a pointer), and a triager may not change membership", async () => {
    const outsider = await makeOperator(t.rt, { grants: [{ tenantId: manaus.id, role: 'triager' }] });
    const res = await admin(`/teams/${team.id}/members/${outsider.id}`, { method: 'PUT' });
    expect(res.status).toBe(422);
    expect((await problemOf(res)).errors).toEqual([expect.objectContaining({ pointer: '/operatorId' })]);
    expect((await crewApi(`/teams/${team.id}/members/${crew.id}`, { method: 'PUT' })).status).toBe(403);
    expect(await t.rt.db.selectFrom('team_member').selectAll().where('team_id', '=', team.id).execute()).toEqual([]);
  });

  it("is tenant-isolated: another city's team, members and operator answer 404 and nothing changes", async () => {
    await admin(`/teams/${team.id}/members/${crew.id}`, { method: 'PUT' });
    expect((await manausAdmin(`/teams/${team.id}/members`)).status).toBe(404);
    expect((await manausAdmin(`/teams/${team.id}/members/${crew.id}`, { method: 'PUT' })).status).toBe(404);
    expect((await manausAdmin(`/teams/${team.id}/members/${crew.id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await manausAdmin(`/operators/${crew.id}/teams`)).status).toBe(404);
    // Curitiba's admin cannot put Curitiba's crew on Manaus's team either.
    expect((await admin(`/teams/${manausTeam.id}/members/${crew.id}`, { method: 'PUT' })).status).toBe(404);
    const rows = await t.rt.db.selectFrom('team_member').select(['team_id', 'operator_id']).execute();
    expect(rows).toEqual([{ team_id: team.id, operator_id: crew.id }]);
  });
});

describe('my team today', () => {
  it("lists the open orders of the caller's teams, Critical first, then by deadline; not other teams', closed ones or other cities'", async () => {
    await admin(`/teams/${team.id}/members/${crew.id}`, { method: 'PUT' });
    const other = await makeTeam(t.rt, { tenantId: curitiba.id, name: 'Equipe CIC' });
    const at = (hours: number) => new Date(Date.now() + hours * 3600_000);
    const made = async (priority: 'Low' | 'Medium' | 'High' | 'Critical', dueInHours: number, status: 'ASSIGNED' | 'IN_PROGRESS' | 'COMPLETED' = 'ASSIGNED', teamId = team.id) => {
      const o = await makeCityOrder(t.rt, { tenantId: curitiba.id, teamId, status, priority, latitude: -25.4284, longitude: -49.2733, address: 'Rua XV de Novembro, 1299', closedAt: status === 'COMPLETED' ? new Date() : null });
      await t.rt.db.updateTable('service_order').set({ sla_due_at: at(dueInHours) }).where('id', '=', o.id).execute();
      return o.number;
    };
    const lowSoon = await made('Low', 1);
    const highLate = await made('High', 30);
    const criticalLate = await made('Critical', 40, 'IN_PROGRESS');
    const highSoon = await made('High', 2);
    await made('Critical', 1, 'COMPLETED');
    await made('Critical', 1, 'ASSIGNED', other.id);
    await makeCityOrder(t.rt, { tenantId: manaus.id, teamId: manausTeam.id, status: 'ASSIGNED', priority: 'Critical' });

    const res = await crewApi(`/my-team?tenantId=${curitiba.id}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { teams: { id: string }[]; items: { number: string; plannedVisit: unknown }[] };
    expect(body.teams.map((x) => x.id)).toEqual([team.id]);
    expect(body.items.map((o) => o.number)).toEqual([criticalLate, highSoon, highLate, lowSoon]);
    expect(body.items[0]!.plannedVisit).toBeNull();

    // Another city: 404 as if it did not exist; someone on no team: an empty day.
    expect((await crewApi(`/my-team?tenantId=${manaus.id}`)).status).toBe(404);
    const empty = (await (await admin(`/my-team?tenantId=${curitiba.id}`)).json()) as { teams: unknown[]; items: unknown[] };
    expect(empty).toEqual({ teams: [], items: [] });
  });
});

describe('planned visit', () => {
  it('sets, shows and clears a window; audited; an ended window on an open order is overdue', async () => {
    const o = await makeCityOrder(t.rt, { tenantId: curitiba.id, teamId: team.id, status: 'ASSIGNED' });
    const startsAt = new Date(Date.now() + 3600_000).toISOString();
    const endsAt = new Date(Date.now() + 4 * 3600_000).toISOString();
    const set = await crewApi(`/service-orders/${o.number}/planned-visit?tenantId=${curitiba.id}`, { method: 'PUT', json: { startsAt, endsAt } });
    expect(set.status).toBe(200);
    expect(((await set.json()) as { plannedVisit: unknown }).plannedVisit).toEqual({ startsAt, endsAt, overdue: false });
    const before = await t.rt.db.selectFrom('service_order').select('updated_at').where('id', '=', o.id).executeTakeFirstOrThrow();

    const pastStart = new Date(Date.now() - 5 * 3600_000).toISOString();
    const pastEnd = new Date(Date.now() - 2 * 3600_000).toISOString();
    await crewApi(`/service-orders/${o.id}/planned-visit`, { method: 'PUT', json: { startsAt: pastStart, endsAt: pastEnd } });
    const read = (await (await crewApi(`/service-orders/${o.id}`)).json()) as { plannedVisit: unknown; updatedAt: string };
    expect(read.plannedVisit).toEqual({ startsAt: pastStart, endsAt: pastEnd, overdue: true });
    // A plan is not a change partners see: the order's updatedAt stays.
    expect(read.updatedAt).toBe(before.updated_at.toISOString());
    const mine = (await (await crewApi(`/my-team?tenantId=${curitiba.id}`)).json()) as { items: { id: string; plannedVisit: { overdue: boolean } | null }[] };
    expect(mine.items.find((x) => x.id === o.id)?.plannedVisit?.overdue).toBe(true);

    const cleared = await crewApi(`/service-orders/${o.id}/planned-visit`, { method: 'DELETE' });
    expect(((await cleared.json()) as { plannedVisit: unknown }).plannedVisit).toBeNull();
    const trail = await audits(o.id);
    expect(trail.map((a) => a.action)).toEqual(['service-order.plan-visit', 'service-order.plan-visit', 'service-order.clear-visit']);
    expect(trail[1]!.before).toEqual({ startsAt, endsAt });
    expect(trail[1]!.after).toEqual({ startsAt: pastStart, endsAt: pastEnd });
  });

  it('refuses an end not after the start, a window over 7 days and a closed order, changing nothing', async () => {
    const o = await makeCityOrder(t.rt, { tenantId: curitiba.id, teamId: team.id, status: 'ASSIGNED' });
    const at = (h: number) => new Date(Date.now() + h * 3600_000).toISOString();
    for (const [startsAt, endsAt] of [
      [at(5), at(4)],
      [at(5), at(5)],
      [at(1), at(1 + 7 * 24 + 1)],
    ] as const) {
      const res = await crewApi(`/service-orders/${o.id}/planned-visit`, { method: 'PUT', json: { startsAt, endsAt } });
      expect(res.status).toBe(422);
      const p = await problemOf(res);
      expect(p.type).toBe('urn:lumen:problem:validation-failed');
      expect(p.errors).toEqual([expect.objectContaining({ pointer: '/endsAt' })]);
    }
    const bad = await crewApi(`/service-orders/${o.id}/planned-visit`, { method: 'PUT', json: { startsAt: 'amanhã', endsAt: at(2) } });
    expect(bad.status).toBe(422);
    const closed = await makeCityOrder(t.rt, { tenantId: curitiba.id, status: 'COMPLETED', closedAt: new Date() });
    const refused = await crewApi(`/service-orders/${closed.id}/planned-visit`, { method: 'PUT', json: { startsAt: at(1), endsAt: at(2) } });
    expect(refused.status).toBe(409);
    expect(await t.rt.db.selectFrom('service_order_visit').selectAll().where('service_order_id', 'in', [o.id, closed.id]).execute()).toEqual([]);
    expect(await audits(o.id)).toEqual([]);
  });

  it("is tenant-isolated: another city's order answers 404 and keeps its plan; a viewer may not plan", async () => {
    const o = await makeCityOrder(t.rt, { tenantId: curitiba.id, teamId: team.id, status: 'ASSIGNED' });
    const window = { startsAt: new Date(Date.now() + 3600_000).toISOString(), endsAt: new Date(Date.now() + 2 * 3600_000).toISOString() };
    expect((await crewApi(`/service-orders/${o.id}/planned-visit`, { method: 'PUT', json: window })).status).toBe(200);
    expect((await manausAdmin(`/service-orders/${o.id}/planned-visit`, { method: 'PUT', json: window })).status).toBe(404);
    expect((await manausAdmin(`/service-orders/${o.id}/planned-visit`, { method: 'DELETE' })).status).toBe(404);
    expect((await manausAdmin(`/service-orders/${o.number}/planned-visit`, { method: 'DELETE' })).status).toBe(404);
    const viewer = await makeOperator(t.rt, { grants: [{ tenantId: curitiba.id, role: 'viewer' }] });
    const viewerApi = tokenFetch(t, (await makeToken(t.rt, { operator: viewer.email })).token);
    expect((await viewerApi(`/service-orders/${o.id}/planned-visit`, { method: 'DELETE' })).status).toBe(403);
    expect(await t.rt.db.selectFrom('service_order_visit').select('service_order_id').where('service_order_id', '=', o.id).execute()).toHaveLength(1);
  });
});
