import { sql, type Insertable, type Selectable } from 'kysely';
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
  /** Only entries before this instant. */
  until?: Date;
  /** Only entries whose actor label contains this text (case-insensitive). */
  actor?: string;
  entityType?: AuditLogTable['entity_type'];
  entityId?: string;
  /** Only entries with a larger id (keyset paging). */
  afterId?: number;
  limit: number;
}

/** Oldest first (by id, the commit-independent insertion order), `limit` + 1 rows to tell whether more follow. */
export async function listAudit(db: Executor, q: AuditQuery): Promise<(AuditRow & { entity_label: string | null })[]> {
  if (q.tenants !== 'all' && q.tenants.length === 0) return [];
  let query = db
    .selectFrom('audit_log as l')
    .selectAll('l')
    // What a person calls the object: an alert's or an order's number, a team's or a city's
    // name, a partner's code, an operator's e-mail, a token's name. Not every entry's
    // entity_id is a uuid (a refused sign-in for an unknown e-mail records '-'): only one
    // that is gets cast and looked up.
    .select(
      sql<string | null>`CASE WHEN l.entity_id !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN NULL ELSE CASE l.entity_type
        WHEN 'alert' THEN (SELECT '#' || a.alert_number FROM alert a WHERE a.id = l.entity_id::uuid)
        WHEN 'service_order' THEN (SELECT o.number FROM service_order o WHERE o.id = l.entity_id::uuid)
        WHEN 'team' THEN (SELECT t.name FROM team t WHERE t.id = l.entity_id::uuid)
        WHEN 'partner' THEN (SELECT e.code FROM external_system e WHERE e.id = l.entity_id::uuid)
        WHEN 'tenant' THEN (SELECT x.name FROM tenant x WHERE x.id = l.entity_id::uuid)
        WHEN 'operator' THEN (SELECT p.email FROM operator p WHERE p.id = l.entity_id::uuid)
        WHEN 'admin_token' THEN (SELECT k.name FROM admin_token k WHERE k.id = l.entity_id::uuid)
      END END`.as('entity_label'),
    );
  if (q.tenants !== 'all') query = query.where('l.tenant_id', 'in', q.tenants);
  if (q.tenantId) query = query.where('l.tenant_id', '=', q.tenantId);
  if (q.since) query = query.where('l.at', '>=', q.since);
  if (q.until) query = query.where('l.at', '<', q.until);
  if (q.actor) query = query.where(sql<boolean>`strpos(lower(l.actor), lower(${q.actor})) > 0`);
  if (q.entityType) query = query.where('l.entity_type', '=', q.entityType);
  if (q.entityId) query = query.where('l.entity_id', '=', q.entityId);
  if (q.afterId !== undefined) query = query.where('l.id', '>', q.afterId);
  return query.orderBy('l.id').limit(q.limit + 1).execute();
}
