import { sql, type Insertable, type RawBuilder, type Selectable } from 'kysely';
import type { Executor } from '../../database.js';
import type { ReasonMappingTable, ReasonTable } from '../../tables/domain.js';

export type ReasonRow = Selectable<ReasonTable>;


/** The internal reason of requests whose partner code is missing, blank or unmapped. */
export const DEFAULT_REASON_CODE = 'EXTERNAL_OTHER';

export async function findReason(db: Executor, tenantId: string, code: string): Promise<ReasonRow | undefined> {
  return db.selectFrom('reason').selectAll().where('tenant_id', '=', tenantId).where('code', '=', code).executeTakeFirst();
}

export async function listReasons(db: Executor, tenantId: string): Promise<ReasonRow[]> {
  return db.selectFrom('reason').selectAll().where('tenant_id', '=', tenantId).orderBy('code').execute();
}

export async function insertReason(db: Executor, row: Insertable<ReasonTable>): Promise<ReasonRow> {
  return db.insertInto('reason').values(row).returningAll().executeTakeFirstOrThrow();
}

/**
 * The code of the internal reason a partner code maps to for this partner, as an SQL
 * expression: the mapping's reason, or EXTERNAL_OTHER when the code is null or has no
 * mapping. The arguments are values or column references (sql.ref).
 */
export function mappedReasonCode(externalSystemId: string | RawBuilder<string>, tenantId: string | RawBuilder<string>, partnerCode: string | null): RawBuilder<string> {
  return sql<string>`coalesce((SELECT m.reason_code FROM reason_mapping m WHERE m.external_system_id = ${externalSystemId} AND m.partner_code = ${partnerCode} AND m.tenant_id = ${tenantId}), ${DEFAULT_REASON_CODE})`;
}

/** Creates or replaces the mapping of one partner code. */
/** `description` undefined keeps the mapping's description; null removes it. */
export async function upsertReasonMapping(db: Executor, row: { external_system_id: string; partner_code: string; tenant_id: string; reason_code: string; description?: string | null }): Promise<Selectable<ReasonMappingTable>> {
  return db
    .insertInto('reason_mapping')
    .values(row)
    .onConflict((oc) => oc.columns(['external_system_id', 'partner_code']).doUpdateSet({ reason_code: row.reason_code, tenant_id: row.tenant_id, ...(row.description !== undefined ? { description: row.description } : {}), updated_at: new Date() }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteReasonMapping(db: Executor, externalSystemId: string, partnerCode: string): Promise<boolean> {
  const res = await db.deleteFrom('reason_mapping').where('external_system_id', '=', externalSystemId).where('partner_code', '=', partnerCode).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** Every mapping of the tenant's partners, with the partner's code. */
export async function listReasonMappings(db: Executor, tenantId: string): Promise<(Selectable<ReasonMappingTable> & { partner: string })[]> {
  return db
    .selectFrom('reason_mapping as m')
    .innerJoin('external_system as e', 'e.id', 'm.external_system_id')
    .selectAll('m')
    .select('e.code as partner')
    .where('m.tenant_id', '=', tenantId)
    .orderBy('e.code')
    .orderBy('m.partner_code')
    .execute();
}

export async function findReasonMapping(db: Executor, externalSystemId: string, partnerCode: string): Promise<Selectable<ReasonMappingTable> | undefined> {
  return db.selectFrom('reason_mapping').selectAll().where('external_system_id', '=', externalSystemId).where('partner_code', '=', partnerCode).executeTakeFirst();
}

export interface PartnerCodeUse {
  partner_code: string;
  reason_code: string | null;
  description: string | null;
  alerts: number;
  pending: number;
  /** Pending alerts with the code and another reason than its mapping's (what apply would change); 0 when unmapped. */
  to_apply: number;
  last_seen_at: Date | null;
}

/**
 * Every reason code a partner has sent or has a mapping for: the mapping (null when
 * unmapped), how many of its alerts carried it, how many of those wait as Pending, and
 * when it was last seen. Mapped codes first, then unmapped ones by number of alerts.
 */
export async function partnerCodeUses(db: Executor, externalSystemId: string): Promise<PartnerCodeUse[]> {
  const { rows } = await sql<PartnerCodeUse>`
    WITH seen AS (
      SELECT partner_reason_code AS code, count(*)::int AS alerts,
             (count(*) FILTER (WHERE status = 'Pending'))::int AS pending, max(created_at) AS last_seen_at
      FROM alert WHERE external_system_id = ${externalSystemId} AND partner_reason_code IS NOT NULL
      GROUP BY partner_reason_code
    )
    SELECT coalesce(m.partner_code, s.code) AS partner_code, m.reason_code, m.description,
           coalesce(s.alerts, 0) AS alerts, coalesce(s.pending, 0) AS pending, s.last_seen_at,
           CASE WHEN m.reason_code IS NULL OR coalesce(s.pending, 0) = 0 THEN 0 ELSE (
             SELECT count(*)::int FROM alert a
             WHERE a.external_system_id = ${externalSystemId} AND a.partner_reason_code = m.partner_code AND a.status = 'Pending' AND a.reason_code <> m.reason_code
           ) END AS to_apply
    FROM (SELECT * FROM reason_mapping WHERE external_system_id = ${externalSystemId}) m
    FULL JOIN seen s ON s.code = m.partner_code
    ORDER BY m.reason_code IS NULL, coalesce(s.alerts, 0) DESC, 1
  `.execute(db);
  return rows;
}

/** Pending alerts of a partner that carry this partner code and another internal reason, locked, in id order. */
export async function lockPendingWithPartnerCode(db: Executor, externalSystemId: string, partnerCode: string, reasonCode: string) {
  return db
    .selectFrom('alert')
    .selectAll()
    .where('external_system_id', '=', externalSystemId)
    .where('partner_reason_code', '=', partnerCode)
    .where('status', '=', 'Pending')
    .where('reason_code', '<>', reasonCode)
    .orderBy('id')
    .forUpdate()
    .execute();
}
