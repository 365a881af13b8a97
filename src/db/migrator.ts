import type pg from 'pg';
import { MIGRATIONS, type Migration } from '../../generated/migrations.js';

// One lock for everyone who migrates: two instances starting together apply each
// migration exactly once; the second waits and then finds nothing to do.
const MIGRATION_LOCK = 7_251_001;

export interface MigrationResult {
  applied: string[];
  current: number;
}

const ENSURE_TABLE = `CREATE TABLE IF NOT EXISTS lumen_migration (
  id integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;

/** Applies every pending migration, each in its own transaction, under an advisory lock. */
export async function migrate(
  pool: pg.Pool,
  onApply: (m: Migration) => void = () => {},
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<MigrationResult> {
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query(ENSURE_TABLE);
      const { rows } = await client.query<{ id: number }>('SELECT id FROM lumen_migration');
      const done = new Set(rows.map((r) => r.id));
      for (const m of migrations) {
        if (done.has(m.id)) continue;
        onApply(m);
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query('INSERT INTO lumen_migration (id, name) VALUES ($1, $2)', [m.id, m.name]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw new Error(`migration ${m.name} failed: ${(err as Error).message}`, { cause: err });
        }
        applied.push(m.name);
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
  return { applied, current: latestMigrationId(migrations) };
}

export function latestMigrationId(migrations: readonly Migration[] = MIGRATIONS): number {
  return migrations.reduce((max, m) => Math.max(max, m.id), 0);
}

/** True when every migration this build knows of is applied (used by /readyz). */
export async function migrationsApplied(pool: pg.Pool): Promise<boolean> {
  try {
    const { rows } = await pool.query<{ max: number | null }>('SELECT max(id) AS max FROM lumen_migration');
    return (rows[0]?.max ?? 0) >= latestMigrationId();
  } catch {
    return false;
  }
}
