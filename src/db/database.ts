import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import type { DB } from './schema.js';

export type Database = Kysely<DB>;
export type Tx = Transaction<DB>;
/** A repository's first argument: the pool or a transaction. */
export type Executor = Kysely<DB> | Transaction<DB>;

// int8 (counts, sequences) as JS numbers: they stay far below 2^53 here.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));

export interface DatabaseOptions {
  url: string;
  /** Pool size. Default 10. */
  max?: number;
  applicationName?: string;
  /** Longest wait for a new connection. Default 10 s. */
  connectionTimeoutMillis?: number;
}

export function createPool(opts: DatabaseOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'lumen',
    connectionTimeoutMillis: opts.connectionTimeoutMillis ?? 10_000,
  });
  // A connection that dies while checked out (the database restarted during a query or
  // transaction) emits 'error' on its client, which the pool only listens for while the
  // client is idle; unheard, that event would end the process. The query in flight
  // fails with the same error (the request answers 500), and the pool discards the
  // client when it is released; idle clients' errors reach the pool's 'error' listener.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

export function createDatabase(pool: pg.Pool): Database {
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}
