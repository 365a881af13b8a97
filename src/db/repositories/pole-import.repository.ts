import { sql } from 'kysely';
import type { Executor, Tx } from '../database.js';

/**
 * Set-based pole import: rows are staged in a temporary table of the importing
 * session, then applied by a handful of statements in one transaction. The
 * temporary table lives on one connection: call these with the executor of
 * `db.connection().execute(...)` (and its transaction).
 */

export interface StagedPole {
  line: number;
  code: string;
  address: string;
  neighborhood: string;
  latitude: number;
  longitude: number;
  active: boolean;
  device: string | null;
}

export async function createStage(conn: Executor): Promise<void> {
  await sql`DROP TABLE IF EXISTS pg_temp.pole_import_stage`.execute(conn);
  await sql`CREATE TEMP TABLE pole_import_stage (
    line integer NOT NULL, code text NOT NULL, address text NOT NULL, neighborhood text NOT NULL,
    latitude double precision NOT NULL, longitude double precision NOT NULL, active boolean NOT NULL, device text
  )`.execute(conn);
}

export async function dropStage(conn: Executor): Promise<void> {
  await sql`DROP TABLE IF EXISTS pg_temp.pole_import_stage`.execute(conn);
}

/** One multi-row insert (arrays unnested server-side). */
export async function stageRows(conn: Executor, rows: readonly StagedPole[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`INSERT INTO pg_temp.pole_import_stage
    SELECT * FROM unnest(${rows.map((r) => r.line)}::integer[], ${rows.map((r) => r.code)}::text[], ${rows.map((r) => r.address)}::text[],
      ${rows.map((r) => r.neighborhood)}::text[], ${rows.map((r) => r.latitude)}::float8[], ${rows.map((r) => r.longitude)}::float8[],
      ${rows.map((r) => r.active)}::boolean[], ${rows.map((r) => r.device)}::text[])`.execute(conn);
}

export interface Duplicate {
  line: number;
  code: string;
  firstLine: number;
  kind: 'code' | 'device';
}

/**
 * Removes the later rows that repeat a code, then those that give a device to a
 * second pole; the first occurrence wins. Returns what was removed.
 */
export async function removeDuplicates(conn: Executor): Promise<Duplicate[]> {
  const codes = await sql<{ line: number; code: string; first_line: number }>`
    DELETE FROM pg_temp.pole_import_stage s
     USING (SELECT line, first_value(line) OVER (PARTITION BY code ORDER BY line) AS first_line FROM pg_temp.pole_import_stage) d
     WHERE s.line = d.line AND d.line <> d.first_line
    RETURNING s.line, s.code, d.first_line`.execute(conn);
  const devices = await sql<{ line: number; code: string; first_line: number }>`
    DELETE FROM pg_temp.pole_import_stage s
     USING (SELECT line, first_value(line) OVER (PARTITION BY device ORDER BY line) AS first_line FROM pg_temp.pole_import_stage WHERE device IS NOT NULL) d
     WHERE s.line = d.line AND d.line <> d.first_line
    RETURNING s.line, s.code, d.first_line`.execute(conn);
  return [
    ...codes.rows.map((r) => ({ line: r.line, code: r.code, firstLine: r.first_line, kind: 'code' as const })),
    ...devices.rows.map((r) => ({ line: r.line, code: r.code, firstLine: r.first_line, kind: 'device' as const })),
  ].sort((a, b) => a.line - b.line);
}

export async function countStaged(conn: Executor): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_temp.pole_import_stage`.execute(conn);
  return rows[0]!.n;
}

export interface ApplyCounts {
  created: number;
  updated: number;
  devicesCreated: number;
  devicesLinked: number;
  devicesUnlinked: number;
}

/**
 * Upserts the staged poles by (tenant, code), touching only rows whose values
 * changed (a re-import of the same file changes nothing, and no pole reappears for
 * partners), then makes each staged pole's telegestor the one the file names: devices
 * that leave a pole are unlinked first (a device may move between two poles of the
 * file), then devices are linked or created. The telegestor triggers stamp every
 * pole whose device changed.
 */
export async function applyStaged(tx: Tx, tenantId: string): Promise<ApplyCounts> {
  const poles = await sql<{ created: number; updated: number }>`
    WITH up AS (
      INSERT INTO pole AS p (tenant_id, code, address, neighborhood, latitude, longitude, active)
      SELECT ${tenantId}, code, address, neighborhood, latitude, longitude, active FROM pg_temp.pole_import_stage ORDER BY code
      ON CONFLICT (tenant_id, code) DO UPDATE
         SET address = excluded.address, neighborhood = excluded.neighborhood, latitude = excluded.latitude,
             longitude = excluded.longitude, active = excluded.active
       WHERE (p.address, p.neighborhood, p.latitude, p.longitude, p.active)
             IS DISTINCT FROM (excluded.address, excluded.neighborhood, excluded.latitude, excluded.longitude, excluded.active)
      RETURNING (xmax = 0) AS inserted
    )
    SELECT count(*) FILTER (WHERE inserted)::int AS created, count(*) FILTER (WHERE NOT inserted)::int AS updated FROM up`.execute(tx);

  const unlinked = await sql<{ id: string }>`
    WITH target AS (
      SELECT p.id AS pole_id, s.device FROM pg_temp.pole_import_stage s JOIN pole p ON p.tenant_id = ${tenantId} AND p.code = s.code
    ), leaving AS (
      SELECT t.id FROM telegestor t JOIN target g ON g.pole_id = t.pole_id
       WHERE t.tenant_id = ${tenantId} AND g.device IS DISTINCT FROM t.identifier
      UNION
      SELECT t.id FROM telegestor t JOIN target g ON g.device = t.identifier
       WHERE t.tenant_id = ${tenantId} AND t.pole_id IS NOT NULL AND t.pole_id <> g.pole_id
    )
    UPDATE telegestor t SET pole_id = NULL FROM leaving l WHERE t.id = l.id
    RETURNING t.id`.execute(tx);

  const linked = await sql<{ created: number; linked: number }>`
    WITH target AS (
      SELECT p.id AS pole_id, s.device FROM pg_temp.pole_import_stage s JOIN pole p ON p.tenant_id = ${tenantId} AND p.code = s.code
       WHERE s.device IS NOT NULL
    ), up AS (
      INSERT INTO telegestor AS t (tenant_id, identifier, pole_id)
      SELECT ${tenantId}, device, pole_id FROM target ORDER BY device
      ON CONFLICT (tenant_id, identifier) DO UPDATE SET pole_id = excluded.pole_id
       WHERE t.pole_id IS DISTINCT FROM excluded.pole_id
      RETURNING (xmax = 0) AS inserted
    )
    SELECT count(*) FILTER (WHERE inserted)::int AS created, count(*) FILTER (WHERE NOT inserted)::int AS linked FROM up`.execute(tx);

  const ids = unlinked.rows.map((r) => r.id);
  let devicesUnlinked = 0;
  if (ids.length > 0) {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM telegestor WHERE id = ANY(${ids}::uuid[]) AND pole_id IS NULL`.execute(tx);
    devicesUnlinked = rows[0]!.n;
  }
  return {
    created: poles.rows[0]!.created,
    updated: poles.rows[0]!.updated,
    devicesCreated: linked.rows[0]!.created,
    devicesLinked: linked.rows[0]!.linked,
    devicesUnlinked,
  };
}
