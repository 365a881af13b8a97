import { sql } from 'kysely';
import type { Executor, Tx } from '../../database.js';

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
  /** undefined: not given (the pole keeps its circuit); null: none. */
  circuit?: string | null;
}

export async function createStage(conn: Executor): Promise<void> {
  await sql`DROP TABLE IF EXISTS pg_temp.pole_import_stage`.execute(conn);
  await sql`CREATE TEMP TABLE pole_import_stage (
    line integer NOT NULL, code text NOT NULL, address text NOT NULL, neighborhood text NOT NULL,
    latitude double precision NOT NULL, longitude double precision NOT NULL, active boolean NOT NULL, device text,
    circuit text, circuit_given boolean NOT NULL
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
      ${rows.map((r) => r.active)}::boolean[], ${rows.map((r) => r.device)}::text[], ${rows.map((r) => r.circuit ?? null)}::text[],
      ${rows.map((r) => r.circuit !== undefined)}::boolean[])`.execute(conn);
}

export interface Duplicate {
  line: number;
  code: string;
  firstLine: number;
  kind: 'code' | 'device';
}

/**
 * Removes the later rows that repeat a code, then those that give a device to a
 * second pole; the first occurrence wins. Returns what was removed. Each statement
 * groups the stage once and joins back only the repeated keys (a file without
 * repeats costs one hash aggregate per key, no sort).
 */
export async function removeDuplicates(conn: Executor): Promise<Duplicate[]> {
  const codes = await sql<{ line: number; code: string; first_line: number }>`
    DELETE FROM pg_temp.pole_import_stage s
     USING (SELECT code, min(line) AS first_line FROM pg_temp.pole_import_stage GROUP BY code HAVING count(*) > 1) d
     WHERE s.code = d.code AND s.line <> d.first_line
    RETURNING s.line, s.code, d.first_line`.execute(conn);
  const devices = await sql<{ line: number; code: string; first_line: number }>`
    DELETE FROM pg_temp.pole_import_stage s
     USING (SELECT device, min(line) AS first_line FROM pg_temp.pole_import_stage WHERE device IS NOT NULL GROUP BY device HAVING count(*) > 1) d
     WHERE s.device = d.device AND s.line <> d.first_line
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

const affected = (r: { numAffectedRows?: bigint }): number => Number(r.numAffectedRows ?? 0n);

/**
 * Applies the staged poles by (tenant, code): updates the poles whose values changed
 * (a re-import of the same file changes nothing, and no pole reappears for partners),
 * inserts the new ones; then makes each staged pole's telegestor the one the file
 * names: devices that leave a pole are unlinked first (a device may move between two
 * poles of the file), then known devices are relinked and new ones created. The
 * telegestor triggers stamp every pole whose device changed.
 *
 * Plain UPDATE and INSERT rather than INSERT ... ON CONFLICT: a speculative insertion
 * probes the unique index once more and writes one more WAL record per row, 15% of
 * a new pole's cost. Nothing else inserts this tenant's poles meanwhile (the caller
 * holds lockPoleWritesExclusive); a writer that ignored the lock would make the
 * insert fail on the unique key and the whole import roll back, never half-apply.
 * New rows go in key order (poles by code, devices by pole id), so each index and
 * the foreign-key probes into pole move forward through the pages just written.
 */
export async function applyStaged(tx: Tx, tenantId: string): Promise<ApplyCounts> {
  // A tenant without devices (a first import) has none to unlink, move or find: those
  // joins of the whole file are skipped, whatever plan the statistics of a tenant
  // filled by this very transaction would give them (the file's devices are distinct).
  const { rows: known } = await sql<{ any: boolean }>`SELECT EXISTS (SELECT 1 FROM telegestor WHERE tenant_id = ${tenantId}) AS any`.execute(tx);
  const hadDevices = known[0]!.any;
  const updated = await sql`
    UPDATE pole p
       SET address = s.address, neighborhood = s.neighborhood, latitude = s.latitude, longitude = s.longitude, active = s.active,
           circuit = CASE WHEN s.circuit_given THEN s.circuit ELSE p.circuit END
      FROM pg_temp.pole_import_stage s
     WHERE p.tenant_id = ${tenantId} AND p.code = s.code
       AND (p.address, p.neighborhood, p.latitude, p.longitude, p.active, p.circuit)
           IS DISTINCT FROM (s.address, s.neighborhood, s.latitude, s.longitude, s.active, CASE WHEN s.circuit_given THEN s.circuit ELSE p.circuit END)`.execute(tx);
  const created = await sql`
    INSERT INTO pole (tenant_id, code, address, neighborhood, latitude, longitude, active, circuit)
    SELECT ${tenantId}, s.code, s.address, s.neighborhood, s.latitude, s.longitude, s.active, s.circuit
      FROM pg_temp.pole_import_stage s
     WHERE NOT EXISTS (SELECT 1 FROM pole p WHERE p.tenant_id = ${tenantId} AND p.code = s.code)
     ORDER BY s.code`.execute(tx);

  const unlinked = !hadDevices
    ? { rows: [] }
    : await sql<{ id: string }>`
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

  const linked = !hadDevices
    ? {}
    : await sql`
    UPDATE telegestor t SET pole_id = p.id
      FROM pg_temp.pole_import_stage s JOIN pole p ON p.tenant_id = ${tenantId} AND p.code = s.code
     WHERE t.tenant_id = ${tenantId} AND t.identifier = s.device AND t.pole_id IS DISTINCT FROM p.id`.execute(tx);
  const devicesCreated = await sql`
    INSERT INTO telegestor (tenant_id, identifier, pole_id)
    SELECT ${tenantId}, s.device, p.id
      FROM pg_temp.pole_import_stage s JOIN pole p ON p.tenant_id = ${tenantId} AND p.code = s.code
     WHERE s.device IS NOT NULL
       ${hadDevices ? sql`AND NOT EXISTS (SELECT 1 FROM telegestor t WHERE t.tenant_id = ${tenantId} AND t.identifier = s.device)` : sql``}
     ORDER BY p.id`.execute(tx);

  const ids = unlinked.rows.map((r) => r.id);
  let devicesUnlinked = 0;
  if (ids.length > 0) {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM telegestor WHERE id = ANY(${ids}::uuid[]) AND pole_id IS NULL`.execute(tx);
    devicesUnlinked = rows[0]!.n;
  }
  return {
    created: affected(created),
    updated: affected(updated),
    devicesCreated: affected(devicesCreated),
    devicesLinked: affected(linked),
    devicesUnlinked,
  };
}
