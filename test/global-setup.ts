/**
 * Once per `npm test`: find a Postgres server (DATABASE_URL, else the local one at
 * 127.0.0.1:5432, else an embedded one), build a template database with every
 * migration and the job-queue schema, and hand its name to the test files, which
 * each copy it (CREATE DATABASE ... TEMPLATE) into a database of their own.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import type { EmbeddedDatabase } from '../src/db/embedded/index.js';
import { migrate } from '../src/db/migrator.js';
import { Jobs } from '../src/jobs/index.js';
import { createLogger } from '../src/lib/logger.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgServerUrl: string;
    pgTemplate: string;
    pgRunId: string;
  }
}

const DEFAULT_SERVER = 'postgres://postgres@127.0.0.1:5432/postgres';

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

let embedded: EmbeddedDatabase | null = null;

interface Shared {
  readonly serverUrl: string;
  readonly template: string;
  readonly runId: string;
  readonly teardown: () => Promise<void>;
}

/**
 * The suite's projects (vitest.config.ts) each call the global setup: they share one
 * server and one template, built by the first call and dropped by the last teardown.
 */
const SHARED = Symbol.for('lumen.test.global-setup');
type Holder = { done: Promise<Shared>; users: number };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const g = globalThis as { [SHARED]?: Holder };
  const holder = (g[SHARED] ??= { done: prepare(), users: 0 });
  holder.users++;
  const shared = await holder.done;
  project.provide('pgServerUrl', shared.serverUrl);
  project.provide('pgTemplate', shared.template);
  project.provide('pgRunId', shared.runId);
  return async () => {
    if (--holder.users > 0) return;
    delete g[SHARED];
    await shared.teardown();
  };
}

async function prepare(): Promise<Shared> {
  let serverUrl = withDatabase(process.env.DATABASE_URL || DEFAULT_SERVER, 'postgres');
  // LUMEN_TEST_EMBEDDED=1 runs the suite on the embedded server even where a local one answers.
  const forceEmbedded = process.env.LUMEN_TEST_EMBEDDED === '1' && !process.env.DATABASE_URL;
  if (forceEmbedded || !(await reachable(serverUrl))) {
    if (process.env.DATABASE_URL) throw new Error(`DATABASE_URL is set but its server does not answer: ${serverUrl}`);
    process.stderr.write(forceEmbedded ? 'LUMEN_TEST_EMBEDDED=1: starting an embedded PostgreSQL for the tests\n' : 'No Postgres at 127.0.0.1:5432: starting an embedded one for the tests\n');
    const { openEmbeddedDatabase } = await import('../src/db/embedded/index.js');
    embedded = await openEmbeddedDatabase({ dataDir: path.resolve('.tmp/test-postgres'), log: (m: string) => process.stderr.write(`  ${m}\n`) });
    serverUrl = withDatabase(embedded.url, 'postgres');
  }

  const runId = randomBytes(4).toString('hex');
  const template = `lumen_tpl_${runId}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${template}`);

  const pool = new pg.Pool({ connectionString: withDatabase(serverUrl, template), max: 2 });
  await migrate(pool);
  await pool.end();
  const jobs = await Jobs.start({ url: withDatabase(serverUrl, template), log: createLogger('silent'), work: false });
  await jobs.stop();

  const teardown = async () => {
    const { rows } = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [`lumen_%${runId}%`]);
    for (const { datname } of rows.filter((r) => r.datname !== template)) {
      await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => {});
    }
    await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`).catch(() => {});
    await admin.end();
    await embedded?.stop();
  };
  return { serverUrl, template, runId, teardown };
}
