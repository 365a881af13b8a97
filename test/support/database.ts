import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

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
