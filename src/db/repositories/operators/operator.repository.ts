import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor, Tx } from '../../database.js';
import type { OperatorTable, TenantRoleColumn } from '../../tables/operators.js';

export type OperatorRow = Selectable<OperatorTable>;
export type OperatorGrantRow = { operator_id: string; tenant_id: string; tenant_name: string; role: TenantRoleColumn };

export async function insertOperator(tx: Tx, row: Insertable<OperatorTable>): Promise<OperatorRow> {
  return tx.insertInto('operator').values(row).returningAll().executeTakeFirstOrThrow();
}

/** By e-mail, compared lower-case (stored lower-case). */
export async function findOperatorByEmail(db: Executor, email: string): Promise<OperatorRow | undefined> {
  return db.selectFrom('operator').selectAll().where('email', '=', email.trim().toLowerCase()).executeTakeFirst();
}

export async function findOperator(db: Executor, id: string): Promise<OperatorRow | undefined> {
  return db.selectFrom('operator').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function lockOperator(tx: Tx, id: string): Promise<OperatorRow | undefined> {
  return tx.selectFrom('operator').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function listOperators(db: Executor): Promise<OperatorRow[]> {
  return db.selectFrom('operator').selectAll().orderBy('email').execute();
}

export async function updateOperator(tx: Tx, id: string, patch: Updateable<OperatorTable>): Promise<OperatorRow> {
  return tx.updateTable('operator').set({ ...patch, updated_at: new Date() }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** Grants of these operators with their tenants' names, by tenant name. */
export async function grantsOfOperators(db: Executor, operatorIds: readonly string[]): Promise<OperatorGrantRow[]> {
  if (operatorIds.length === 0) return [];
  return db
    .selectFrom('operator_grant as g')
    .innerJoin('tenant as t', 't.id', 'g.tenant_id')
    .select(['g.operator_id', 'g.tenant_id', 't.name as tenant_name', 'g.role'])
    .where('g.operator_id', 'in', operatorIds)
    .orderBy('t.name')
    .orderBy('g.tenant_id')
    .execute();
}

/** Creates or changes the operator's role on a tenant. */
export async function upsertGrant(tx: Tx, operatorId: string, tenantId: string, role: TenantRoleColumn): Promise<void> {
  await tx
    .insertInto('operator_grant')
    .values({ operator_id: operatorId, tenant_id: tenantId, role })
    .onConflict((oc) => oc.columns(['operator_id', 'tenant_id']).doUpdateSet({ role }))
    .execute();
}

export async function deleteGrant(tx: Tx, operatorId: string, tenantId: string): Promise<boolean> {
  const res = await tx.deleteFrom('operator_grant').where('operator_id', '=', operatorId).where('tenant_id', '=', tenantId).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
