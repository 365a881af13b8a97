import type { Executor } from '../../database.js';
import type { TeamRow } from './team.repository.js';

export interface TeamMemberRow {
  team_id: string;
  tenant_id: string;
  operator_id: string;
  name: string;
  email: string;
  added_at: Date;
}

function members(db: Executor) {
  return db
    .selectFrom('team_member as m')
    .innerJoin('operator as o', 'o.id', 'm.operator_id')
    .select(['m.team_id', 'm.tenant_id', 'm.operator_id', 'o.name', 'o.email', 'm.added_at']);
}

/** A team's members, by name. */
export async function listMembersOfTeam(db: Executor, teamId: string): Promise<TeamMemberRow[]> {
  return members(db).where('m.team_id', '=', teamId).orderBy('o.name').orderBy('o.id').execute();
}

export async function findMember(db: Executor, teamId: string, operatorId: string): Promise<TeamMemberRow | undefined> {
  return members(db).where('m.team_id', '=', teamId).where('m.operator_id', '=', operatorId).executeTakeFirst();
}

/** Adds the membership unless it exists; true when it was added. */
export async function insertMember(db: Executor, row: { team_id: string; tenant_id: string; operator_id: string }): Promise<boolean> {
  const r = await db.insertInto('team_member').values(row).onConflict((oc) => oc.columns(['team_id', 'operator_id']).doNothing()).executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function deleteMember(db: Executor, teamId: string, operatorId: string): Promise<boolean> {
  const r = await db.deleteFrom('team_member').where('team_id', '=', teamId).where('operator_id', '=', operatorId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** The teams an operator belongs to, in some tenants (null: any), by name. */
export async function listTeamsOfOperator(db: Executor, operatorId: string, tenants: readonly string[] | null): Promise<TeamRow[]> {
  let q = db.selectFrom('team_member as m').innerJoin('team as t', 't.id', 'm.team_id').selectAll('t').where('m.operator_id', '=', operatorId);
  if (tenants !== null) q = q.where('m.tenant_id', 'in', tenants.length ? tenants : ['00000000-0000-0000-0000-000000000000']);
  return q.orderBy('t.name').orderBy('t.id').execute();
}

/** An operator by id or e-mail (lower-case), with their role on a tenant (null when none). */
export async function findOperatorWithRole(db: Executor, ref: string, tenantId: string, byId: boolean): Promise<{ id: string; role: string | null } | undefined> {
  return db
    .selectFrom('operator as o')
    .leftJoin('operator_grant as g', (j) => j.onRef('g.operator_id', '=', 'o.id').on('g.tenant_id', '=', tenantId))
    .select(['o.id', 'g.role'])
    .where(byId ? 'o.id' : 'o.email', '=', ref)
    .executeTakeFirst();
}

export async function findOperatorId(db: Executor, ref: string, byId: boolean): Promise<string | undefined> {
  return (await db.selectFrom('operator').select('id').where(byId ? 'id' : 'email', '=', ref).executeTakeFirst())?.id;
}

/** Whether an operator holds a role on any of these tenants. */
export async function holdsGrantIn(db: Executor, operatorId: string, tenants: readonly string[]): Promise<boolean> {
  if (tenants.length === 0) return false;
  return !!(await db.selectFrom('operator_grant').select('tenant_id').where('operator_id', '=', operatorId).where('tenant_id', 'in', tenants).executeTakeFirst());
}

/** Sets (or replaces) the planned visit of an order. */
export async function upsertVisit(db: Executor, row: { service_order_id: string; tenant_id: string; starts_at: Date; ends_at: Date }): Promise<void> {
  await db
    .insertInto('service_order_visit')
    .values(row)
    .onConflict((oc) => oc.column('service_order_id').doUpdateSet({ starts_at: row.starts_at, ends_at: row.ends_at, set_at: new Date() }))
    .execute();
}

export async function deleteVisit(db: Executor, orderId: string): Promise<boolean> {
  const r = await db.deleteFrom('service_order_visit').where('service_order_id', '=', orderId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
