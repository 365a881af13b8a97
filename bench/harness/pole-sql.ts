import type pg from 'pg';
import { literal } from './postgres.js';

/** The columns of a Pole item (2.2), as the list reads them. */
const POLE_COLUMNS = `p.id, p.code, p.address, p.neighborhood, p.latitude, p.longitude, p.active, p.updated_at,
       t.id AS device_id, t.identifier, t.online, t.relay_on, t.last_communication_at`;

export interface KeysetPosition {
  readonly u: string;
  readonly id: string;
}

/**
 * The position page `page` starts after (the last item of the previous page), found
 * once with OFFSET: the bare keyset query then starts from it like a walk does.
 */
export async function pagePosition(pool: pg.Pool, tenantId: string, since: string | null, page: number, pageSize: number): Promise<KeysetPosition | null> {
  if (page <= 1) return null;
  const { rows } = await pool.query<{ u: string; id: string }>(
    `SELECT to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS u, id
       FROM pole WHERE tenant_id = $1 AND ($2::timestamptz IS NULL OR updated_at >= $2::timestamptz)
      ORDER BY updated_at, id OFFSET $3 LIMIT 1`,
    [tenantId, since, (page - 1) * pageSize - 1],
  );
  if (!rows[0]) throw new Error(`the city has no page ${page} of ${pageSize}`);
  return rows[0];
}

/** Anchor of one page: the bare keyset SQL for the same items, joined with their telegestor. */
export function keysetPageSql(tenantId: string, since: string | null, after: KeysetPosition | null, pageSize: number): string {
  const where = [`p.tenant_id = ${literal(tenantId)}`];
  if (since) where.push(`p.updated_at >= ${literal(since)}`);
  if (after) where.push(`(p.updated_at, p.id) > (${literal(after.u)}::timestamptz, ${literal(after.id)}::uuid)`);
  return `SELECT ${POLE_COLUMNS}
  FROM pole p LEFT JOIN telegestor t ON t.pole_id = p.id
 WHERE ${where.join(' AND ')}
 ORDER BY p.updated_at, p.id
 LIMIT ${pageSize}`;
}

/** Anchor of the full sync: every pole of the tenant as one JSON line each, in list order. */
export function copyAllPolesSql(tenantId: string): string {
  return `COPY (
  SELECT json_build_object(
           'id', p.id, 'code', p.code, 'address', p.address, 'neighborhood', p.neighborhood,
           'latitude', p.latitude, 'longitude', p.longitude, 'active', p.active, 'updatedAt', p.updated_at,
           'device', CASE WHEN t.id IS NULL THEN NULL ELSE json_build_object(
             'id', t.id, 'identifier', t.identifier, 'online', t.online, 'relayOn', t.relay_on,
             'lastCommunicationAt', t.last_communication_at) END)
    FROM pole p LEFT JOIN telegestor t ON t.pole_id = p.id
   WHERE p.tenant_id = ${literal(tenantId)}
   ORDER BY p.updated_at, p.id
) TO STDOUT`;
}

/**
 * The import's fair floor, as one psql script: the CSV copied into a temporary table,
 * then inserted into pole and telegestor of a new tenant with plain INSERT … SELECT,
 * in one transaction. Same rows, same tables (their indexes, triggers, foreign keys
 * and check constraints), same work_mem as Lumen's importing session, but nothing
 * else: no parsing or checking in Node, no duplicate detection, no statistics. What
 * Lumen's own schema costs, against which the rest of the import can be judged.
 */
export function poleImportFloorScript(tenantId: string, file: string): string {
  const tenant = literal(tenantId);
  return [
    '\\set ON_ERROR_STOP on',
    "SET work_mem = '64MB';",
    'BEGIN;',
    'CREATE TEMP TABLE bench_pole_import_floor (code text, address text, neighborhood text, latitude double precision, longitude double precision, active boolean, device_identifier text);',
    `\\copy bench_pole_import_floor FROM ${literal(file)} WITH (FORMAT csv, HEADER true)`,
    `INSERT INTO pole (tenant_id, code, address, neighborhood, latitude, longitude, active)
  SELECT ${tenant}, code, coalesce(address, ''), coalesce(neighborhood, ''), latitude, longitude, active FROM bench_pole_import_floor;`,
    `INSERT INTO telegestor (tenant_id, identifier, pole_id)
  SELECT ${tenant}, f.device_identifier, p.id FROM bench_pole_import_floor f JOIN pole p ON p.tenant_id = ${tenant} AND p.code = f.code
   WHERE f.device_identifier IS NOT NULL;`,
    'COMMIT;',
    '',
  ].join('\n');
}
