import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../../database.js';
import type { TeamTable } from '../../tables/domain.js';

export type TeamRow = Selectable<TeamTable>;

export async function insertTeam(db: Executor, row: Insertable<TeamTable>): Promise<TeamRow> {
  return db.insertInto('team').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findTeam(db: Executor, id: string): Promise<TeamRow | undefined> {
  return db.selectFrom('team').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listTeamsOfTenant(db: Executor, tenantId: string): Promise<TeamRow[]> {
  return db.selectFrom('team').selectAll().where('tenant_id', '=', tenantId).orderBy('name').orderBy('id').execute();
}
