import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../database.js';

/** One request as GeoReport v2 shows it: the alert, its order, reason, team, pole, latest operator note and first photo URL. */
export interface Open311RequestRow {
  alert_id: string;
  alert_number: string;
  alert_status: string;
  order_status: string | null;
  reason_code: string;
  reason_name_pt: string;
  reason_name_en: string;
  sla_hours: number;
  description: string;
  team_name: string | null;
  tenant_name: string;
  requested_at: Date;
  updated_at: Date;
  expected_at: Date;
  address_street: string;
  address_number: string | null;
  address_neighborhood: string | null;
  latitude: number | null;
  longitude: number | null;
  pole_code: string | null;
  note: string | null;
  cancel_reason: string | null;
  /** The first attachment Lumen stored (by URL or inline), for media_url; null when none was. */
  media_id: string | null;
}

export interface Open311Filter {
  alertNumbers?: readonly string[];
  alertId?: string;
  serviceCodes?: readonly string[];
  requestedFrom?: Date;
  requestedTo?: Date;
  updatedAfter?: Date;
  updatedBefore?: Date;
  /** Only open (true) or only closed (false) requests. */
  open?: boolean;
  limit: number;
}

/**
 * A request is closed once its order is completed, or the alert was resolved or discarded
 * (src/open311/requests.ts isClosed: a cancelled order's alerts are back in triage, open).
 */
// `o` is null for a request with no order (Pending): IS NOT DISTINCT FROM keeps the
// test true or false, never null, so NOT CLOSED lists Pending requests as open.
const CLOSED = sql`(a.status IN ('Resolved', 'Cancelled') OR o.status IS NOT DISTINCT FROM 'COMPLETED')`;
const UPDATED = sql`greatest(a.updated_at, o.updated_at)`;

/**
 * The requests a partner sent (any door), in its tenant, newest first. The note is the
 * operator's latest note: of the partner's events that carry one (exactly what the
 * partner was told), or of the current order's start, completion or cancellation in its
 * history (those history notes are the operator's own words; they also cover event
 * types the partner is not subscribed to and events past their retention); else the
 * discard reason.
 */
export async function findOpen311Requests(db: Executor, externalSystemId: string, tenantId: string, f: Open311Filter): Promise<Open311RequestRow[]> {
  const where: RawBuilder<unknown>[] = [sql`a.external_system_id = ${externalSystemId}`, sql`a.tenant_id = ${tenantId}`];
  // As text: ids of up to 18 digits do not all fit a JS number.
  if (f.alertNumbers) where.push(sql`a.alert_number = ANY(${[...f.alertNumbers]}::text[]::bigint[])`);
  if (f.alertId) where.push(sql`a.id = ${f.alertId}`);
  if (f.serviceCodes) where.push(sql`coalesce(o.reason_code, a.reason_code) = ANY(${f.serviceCodes}::text[])`);
  if (f.requestedFrom) where.push(sql`a.requested_at >= ${f.requestedFrom}`);
  if (f.requestedTo) where.push(sql`a.requested_at <= ${f.requestedTo}`);
  if (f.updatedAfter) where.push(sql`${UPDATED} > ${f.updatedAfter}`);
  if (f.updatedBefore) where.push(sql`${UPDATED} < ${f.updatedBefore}`);
  if (f.open === true) where.push(sql`NOT ${CLOSED}`);
  if (f.open === false) where.push(CLOSED);
  const { rows } = await sql<Open311RequestRow>`
    SELECT a.id AS alert_id, a.alert_number::text AS alert_number, a.status AS alert_status, o.status AS order_status,
      r.code AS reason_code, r.name_pt AS reason_name_pt, r.name_en AS reason_name_en, r.sla_hours,
      a.description, tm.name AS team_name, t.name AS tenant_name,
      a.requested_at, ${UPDATED} AS updated_at, coalesce(o.sla_due_at, a.sla_due_at) AS expected_at,
      a.address_street, a.address_number, a.address_neighborhood,
      coalesce(a.latitude, o.latitude) AS latitude, coalesce(a.longitude, o.longitude) AS longitude,
      p.code AS pole_code, a.cancel_reason,
      (SELECT n.note FROM (
          SELECT e.payload->>'note' AS note, e.occurred_at AS at FROM event e
          WHERE e.alert_id = a.id AND e.external_system_id = a.external_system_id AND e.payload ? 'note'
          UNION ALL
          SELECT h.note, h.at FROM service_order_status_history h
          WHERE h.service_order_id = a.service_order_id AND h.note IS NOT NULL AND h.to_status IN ('IN_PROGRESS', 'COMPLETED', 'CANCELLED')
        ) n ORDER BY n.at DESC LIMIT 1) AS note,
      (SELECT x.id FROM alert_attachment x WHERE x.alert_id = a.id AND x.success AND x.blob_path IS NOT NULL ORDER BY x.seq LIMIT 1) AS media_id
    FROM alert a
    JOIN tenant t ON t.id = a.tenant_id
    LEFT JOIN service_order o ON o.id = a.service_order_id
    JOIN reason r ON r.tenant_id = a.tenant_id AND r.code = coalesce(o.reason_code, a.reason_code)
    LEFT JOIN team tm ON tm.id = o.team_id
    LEFT JOIN pole p ON p.id = o.pole_id
    WHERE ${sql.join(where, sql` AND `)}
    ORDER BY a.requested_at DESC, a.alert_number DESC
    LIMIT ${f.limit}`.execute(db);
  return rows;
}

/** A stored photo of one of this partner's requests in its city, for the media link (which carries only its id). */
export async function findOpen311Media(db: Executor, attachmentId: string): Promise<{ blob_path: string; content_type: string; filename: string | null } | undefined> {
  return db
    .selectFrom('alert_attachment')
    .select(['blob_path', 'content_type', 'filename'])
    .where('id', '=', attachmentId)
    .where('success', '=', true)
    .where('blob_path', 'is not', null)
    .executeTakeFirst() as Promise<{ blob_path: string; content_type: string; filename: string | null } | undefined>;
}

/** A pole of the tenant by its code (Open311's address_id). */
export async function findPoleByCode(db: Executor, tenantId: string, code: string): Promise<{ address: string; neighborhood: string; latitude: number; longitude: number } | undefined> {
  return db.selectFrom('pole').select(['address', 'neighborhood', 'latitude', 'longitude']).where('tenant_id', '=', tenantId).where('code', '=', code).where('active', '=', true).executeTakeFirst();
}
