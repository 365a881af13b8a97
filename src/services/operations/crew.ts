/**
 * Field crews (issue 24 §3): team membership, "my team today" and the planned visit of
 * an order. A team belongs to one city; its members are operators holding a role there.
 */
import type { AdminServiceOrder, AdminTeam, TeamMember } from '../../../generated/admin/types.gen.js';
import { AppError, type FieldError } from '../../lib/errors.js';
import type { Localized } from '../../lib/i18n.js';
import { statusWords } from '../../lib/status-words.js';
import { findTeam } from '../../db/repositories/operations/team.repository.js';
import { findOrderListRow, listOpenOrdersOfTeams } from '../../db/repositories/operations/order-list.repository.js';
import { lockOrder } from '../../db/repositories/operations/triage.repository.js';
import {
  deleteMember,
  deleteVisit,
  findMember,
  findOperatorId,
  findOperatorWithRole,
  holdsGrantIn,
  insertMember,
  listMembersOfTeam,
  listTeamsOfOperator,
  upsertVisit,
  type TeamMemberRow,
} from '../../db/repositories/operations/team-member.repository.js';
import { recordAudit, type Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';
import { canSee, inScope, requireTenantRole, visibleTenants, type AdminAccess } from '../operators/index.js';
import { adminServiceOrderView } from './order-list.js';
import { operatorTransaction } from './transaction.js';
import { ACTION_NAMES } from './triage-view.js';
import { teamView } from './teams.js';

/** The longest planned window: a visit, not a season. */
export const VISIT_MAX_HOURS = 7 * 24;
const OPEN = ['OPEN', 'ASSIGNED', 'IN_PROGRESS'];

function memberView(r: TeamMemberRow): TeamMember {
  return { teamId: r.team_id, tenantId: r.tenant_id, operatorId: r.operator_id, name: r.name, email: r.email, addedAt: r.added_at.toISOString() };
}

/** A team by id the caller holds `role` on; another city's team is not-found, as an unknown one. */
async function teamIn(deps: ServiceDeps, access: AdminAccess, teamId: string, role: 'viewer' | 'city-admin') {
  const row = isUuid(teamId ?? '') ? await findTeam(deps.db, teamId) : undefined;
  if (!row || !canSee(access, row.tenant_id)) throw new AppError('not-found', { resource: `team ${teamId}` });
  requireTenantRole(access, row.tenant_id, role, `team ${teamId}`);
  return row;
}

function operatorRef(ref: string): { value: string; byId: boolean } {
  const value = (ref ?? '').trim();
  return isUuid(value) ? { value, byId: true } : { value: value.toLowerCase(), byId: false };
}

export async function listTeamMembers(deps: ServiceDeps, access: AdminAccess, teamId: string): Promise<TeamMember[]> {
  const team = await teamIn(deps, access, teamId, 'viewer');
  return (await listMembersOfTeam(deps.db, team.id)).map(memberView);
}

/** Adds an operator (id or e-mail) who holds a role on the team's city; adding twice changes nothing. */
export async function addTeamMember(deps: ServiceDeps, actor: Actor, teamId: string, operator: string): Promise<TeamMember> {
  const team = await teamIn(deps, actor.access, teamId, 'city-admin');
  const ref = operatorRef(operator);
  return deps.db.transaction().execute(async (tx) => {
    const found = ref.value ? await findOperatorWithRole(tx, ref.value, team.tenant_id, ref.byId) : undefined;
    if (!found) throw new AppError('not-found', { resource: `operator ${operator}` });
    if (found.role === null) throw new AppError('validation-failed', { count: 1 }, [{ pointer: '/operatorId', message: "the operator holds no role on the team's city" }]);
    if (await insertMember(tx, { team_id: team.id, tenant_id: team.tenant_id, operator_id: found.id })) {
      await recordAudit(tx, actor, { tenantId: team.tenant_id, action: 'team.member-add', entityType: 'team', entityId: team.id, before: null, after: { operatorId: found.id } });
    }
    return memberView((await findMember(tx, team.id, found.id))!);
  });
}

export async function removeTeamMember(deps: ServiceDeps, actor: Actor, teamId: string, operator: string): Promise<void> {
  const team = await teamIn(deps, actor.access, teamId, 'city-admin');
  const ref = operatorRef(operator);
  await deps.db.transaction().execute(async (tx) => {
    const id = ref.value ? await findOperatorId(tx, ref.value, ref.byId) : undefined;
    if (!id || !(await deleteMember(tx, team.id, id))) throw new AppError('not-found', { resource: `team member ${operator}` });
    await recordAudit(tx, actor, { tenantId: team.tenant_id, action: 'team.member-remove', entityType: 'team', entityId: team.id, before: { operatorId: id }, after: null });
  });
}

/**
 * The teams of an operator (`me`: the caller) in the cities the caller sees, or in
 * `tenantId` only (a city the caller cannot see gives an empty list).
 */
export async function listOperatorTeams(deps: ServiceDeps, actor: Actor, operator: string, tenantId?: string): Promise<AdminTeam[]> {
  let id: string | undefined;
  if (operator === 'me') id = actor.operatorId;
  else {
    const ref = operatorRef(operator);
    id = ref.value ? await findOperatorId(deps.db, ref.value, ref.byId) : undefined;
    // Another city's operator is as one that does not exist (their cities are not the caller's).
    const visible = visibleTenants(actor.access);
    if (id && visible !== 'all' && id !== actor.operatorId && !(await holdsGrantIn(deps.db, id, [...visible]))) id = undefined;
    if (!id) throw new AppError('not-found', { resource: `operator ${operator}` });
  }
  if (!id) return [];
  if (tenantId !== undefined && !canSee(actor.access, tenantId)) return [];
  const visible = visibleTenants(actor.access);
  const tenants = tenantId !== undefined ? [tenantId] : visible === 'all' ? null : [...visible];
  return (await listTeamsOfOperator(deps.db, id, tenants)).map(teamView);
}

/** "My team today": the caller's teams in a city and their open orders, Critical first, then by deadline. */
export async function myTeamOrders(deps: ServiceDeps, actor: Actor, tenantId: string): Promise<{ teams: AdminTeam[]; items: AdminServiceOrder[] }> {
  if (!isUuid(tenantId ?? '')) throw new AppError('invalid-parameter', {}, [{ pointer: '/query/tenantId', message: 'must be a tenant id (UUID)' }]);
  if (!canSee(actor.access, tenantId)) throw new AppError('not-found', { resource: `tenant ${tenantId}` });
  const teams = actor.operatorId ? await listTeamsOfOperator(deps.db, actor.operatorId, [tenantId]) : [];
  const rows = await listOpenOrdersOfTeams(
    deps.db,
    tenantId,
    teams.map((t) => t.id),
  );
  const now = Date.now();
  return { teams: teams.map(teamView), items: rows.map((r) => adminServiceOrderView(r, now)) };
}

/** The window of a planned visit, checked: two date-times, the end after the start, at most VISIT_MAX_HOURS long. */
export function checkVisitWindow(startsAt: string, endsAt: string): { start: Date; end: Date } {
  const errors: FieldError[] = [];
  const start = new Date(startsAt);
  const end = new Date(endsAt);
  if (typeof startsAt !== 'string' || Number.isNaN(start.getTime())) errors.push({ pointer: '/startsAt', message: 'must be a date-time' });
  if (typeof endsAt !== 'string' || Number.isNaN(end.getTime())) errors.push({ pointer: '/endsAt', message: 'must be a date-time' });
  if (errors.length === 0 && end.getTime() <= start.getTime()) errors.push({ pointer: '/endsAt', message: 'must be after startsAt' });
  if (errors.length === 0 && end.getTime() - start.getTime() > VISIT_MAX_HOURS * 3_600_000) errors.push({ pointer: '/endsAt', message: `the window must be at most ${VISIT_MAX_HOURS} hours long` });
  if (errors.length > 0) throw new AppError('validation-failed', { count: errors.length }, errors);
  return { start, end };
}

/** Plans (or re-plans) the visit to an open order. */
export async function setPlannedVisit(deps: ServiceDeps, actor: Actor, orderId: string, startsAt: string, endsAt: string): Promise<AdminServiceOrder> {
  const { start, end } = checkVisitWindow(startsAt, endsAt);
  return operatorTransaction(deps, async (tx) => {
    const order = inScope(actor.access, isUuid(orderId) ? await lockOrder(tx, orderId) : undefined, 'triager', `service order ${orderId}`);
    if (!OPEN.includes(order.status)) throw new AppError('invalid-transition', { action: ACTION_NAMES.planVisit as Localized, state: statusWords(order.status) });
    const before = await findOrderListRow(tx, order.id);
    await upsertVisit(tx, { service_order_id: order.id, tenant_id: order.tenant_id, starts_at: start, ends_at: end });
    await recordAudit(tx, actor, {
      tenantId: order.tenant_id,
      action: 'service-order.plan-visit',
      entityType: 'service_order',
      entityId: order.id,
      before: before?.visit_starts_at ? { startsAt: before.visit_starts_at.toISOString(), endsAt: before.visit_ends_at!.toISOString() } : null,
      after: { startsAt: start.toISOString(), endsAt: end.toISOString() },
    });
    return adminServiceOrderView((await findOrderListRow(tx, order.id))!);
  });
}

export async function clearPlannedVisit(deps: ServiceDeps, actor: Actor, orderId: string): Promise<AdminServiceOrder> {
  return operatorTransaction(deps, async (tx) => {
    const order = inScope(actor.access, isUuid(orderId) ? await lockOrder(tx, orderId) : undefined, 'triager', `service order ${orderId}`);
    const before = await findOrderListRow(tx, order.id);
    if (await deleteVisit(tx, order.id)) {
      await recordAudit(tx, actor, {
        tenantId: order.tenant_id,
        action: 'service-order.clear-visit',
        entityType: 'service_order',
        entityId: order.id,
        before: { startsAt: before!.visit_starts_at!.toISOString(), endsAt: before!.visit_ends_at!.toISOString() },
        after: null,
      });
    }
    return adminServiceOrderView((await findOrderListRow(tx, order.id))!);
  });
}
