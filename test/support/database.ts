import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { MIGRATIONS } from '../../generated/migrations.js';
import { migrate } from '../../src/db/migrator.js';

export interface TestDatabase {
  readonly name: string;
  readonly url: string;
  drop(): Promise<void>;
}

export function databaseUrl(name: string): string {
  const u = new URL(inject('pgServerUrl'));
  u.pathname = `/${name}`;
  return u.toString();
}

/** A database of this test file's own, copied from the migrated template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `lumen_t_${inject('pgRunId')}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: inject('pgServerUrl') });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('pgTemplate')}`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: databaseUrl(name),
    async drop() {
      const c = new pg.Client({ connectionString: inject('pgServerUrl') });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * Runs `fn` on a new database migrated up to migration `before`, not including it (a
 * deployment of the version before), through a pool of its own; drops the database after.
 */
export async function withDatabaseBefore(before: number, fn: (pool: pg.Pool) => Promise<void>): Promise<void> {
  const name = `lumen_t_${inject('pgRunId')}_mig_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: inject('pgServerUrl') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const pool = new pg.Pool({ connectionString: databaseUrl(name), max: 2 });
  // The forced drop below may terminate a backend whose client the ended pool is still
  // closing: the pool reports that as an error event, which nothing else would handle.
  pool.on('error', () => {});
  try {
    await migrate(pool, () => {}, MIGRATIONS.filter((m) => m.id < before));
    await fn(pool);
  } finally {
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}
