import type { Insertable, Selectable } from 'kysely';
import type { Executor, Tx } from '../database.js';
import type { AuditLogTable } from '../tables/operations.js';

export type AuditRow = Selectable<AuditLogTable>;

/** Takes a transaction: an audit entry commits with the change it records, or not at all. */
export async function insertAudit(tx: Tx, row: Insertable<AuditLogTable>): Promise<AuditRow> {
  return tx.insertInto('audit_log').values(row).returningAll().executeTakeFirstOrThrow();
}

export interface AuditQuery {
  /** The caller's tenants; 'all' also reads entries outside any tenant. */
  tenants: readonly string[] | 'all';
  tenantId?: string;
  since?: Date;
  entityType?: AuditLogTable['entity_type'];
  entityId?: string;
  /** Only entries with a larger id (keyset paging). */
  afterId?: number;
  limit: number;
}

/** Oldest first (by id, the commit-independent insertion order), `limit` + 1 rows to tell whether more follow. */
export async function listAudit(db: Executor, q: AuditQuery): Promise<AuditRow[]> {
  if (q.tenants !== 'all' && q.tenants.length === 0) return [];
  let query = db.selectFrom('audit_log').selectAll();
  if (q.tenants !== 'all') query = query.where('tenant_id', 'in', q.tenants);
  if (q.tenantId) query = query.where('tenant_id', '=', q.tenantId);
  if (q.since) query = query.where('at', '>=', q.since);
  if (q.entityType) query = query.where('entity_type', '=', q.entityType);
  if (q.entityId) query = query.where('entity_id', '=', q.entityId);
  if (q.afterId !== undefined) query = query.where('id', '>', q.afterId);
  return query.orderBy('id').limit(q.limit + 1).execute();
}
