import { createHash } from 'node:crypto';
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
  /**
   * Send statements as named prepared statements (see PreparingClient). Default true;
   * false behind a transaction-pooling PgBouncer older than 1.21 (LUMEN_DB_PREPARED=off).
   */
  prepared?: boolean;
}

/** Most distinct statements named by one process; past it, new texts go unnamed (bounds every backend's plan cache). */
export const MAX_NAMED_STATEMENTS = 1000;
const names = new Map<string, string>();
/** A single statement that may be prepared without parameters (no `;`: a multi-statement text must use the simple protocol). */
const PREPARABLE = /^\s*(?:select|insert|update|delete|with|values)\b[^;]*;?\s*$/is;

/**
 * The name a statement's text is prepared under: derived from the text itself, so every
 * connection and every process (and PgBouncer ≥ 1.21, which maps client names to its
 * server connections) agree, and one name never stands for two texts. Undefined when
 * the text is not to be named: a parameterless text that is not one plain DML/SELECT
 * statement, or a text past MAX_NAMED_STATEMENTS.
 */
export function statementName(text: string, parameterCount: number): string | undefined {
  let name = names.get(text);
  if (name !== undefined) return name;
  if (names.size >= MAX_NAMED_STATEMENTS) return undefined;
  if (parameterCount === 0 && !PREPARABLE.test(text)) return undefined;
  name = `lumen_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
  names.set(text, name);
  return name;
}

/**
 * A pg client that sends every statement given as text (Kysely's compiled SQL,
 * pool.query) as a named prepared statement: node-postgres then parses it once per
 * connection and afterwards sends only Bind/Execute, and PostgreSQL keeps its plan
 * (generic after five runs when that is as good) instead of parsing and planning anew.
 * The hot paths (intake, key check, pages, cursor pages, the horizon, the events page,
 * webhook claim and settle, telemetry batches) are fixed texts, so all of them run
 * prepared; test/db/prepared-statements.test.ts fails when one goes unnamed.
 */
/**
 * A connection with Lumen's session settings applied before the pool hands it out: no
 * JIT. Lumen's statements are short, and PostgreSQL compiles any plan whose estimated
 * cost passes jit_above_cost; the grouped inbox's count (a subquery per row, estimated
 * high, 25 ms of work) spent 1.5 s compiling. Behind PgBouncer in transaction mode the
 * setting stays on the server connection it ran on (all of them Lumen's).
 */
export class SessionClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    // A server that goes away sends its last words (57P01) to every connection: to an idle
    // one as an 'error' event. Unheard, that event ends the process; a statement in flight
    // fails with it anyway, and the pool's own listener discards an idle connection.
    this.on('error', () => {});
  }

  override connect(...args: unknown[]): never {
    const callback = args[0] as ((err: Error | null, client?: pg.Client) => void) | undefined;
    const connect = pg.Client.prototype.connect as unknown as (this: pg.Client) => Promise<unknown>;
    const query = pg.Client.prototype.query as unknown as (this: pg.Client, text: string) => Promise<unknown>;
    const ready = connect.call(this).then(() => query.call(this, 'SET jit = off')).then(() => this);
    if (callback) {
      ready.then((c) => callback(null, c), (err: Error) => callback(err));
      return undefined as never;
    }
    return ready as never;
  }
}

export class PreparingClient extends SessionClient {
  /** Statements of this connection prepared again under another name (see renamed). */
  private renamed: Map<string, string> | null = null;

  override query(...args: unknown[]): never {
    const [text, second] = args;
    if (typeof text === 'string' && (second === undefined || Array.isArray(second) || typeof second === 'function')) {
      const values = Array.isArray(second) ? (second as unknown[]) : [];
      const base = statementName(text, values.length);
      if (base !== undefined) {
        const name = this.renamed?.get(base) ?? base;
        const callback = (typeof second === 'function' ? second : args[2]) as ((err: Error | null, res: unknown) => void) | undefined;
        const config = { name, text, values };
        if (callback === undefined) return (super.query(config) as Promise<unknown>).catch((err: unknown) => this.failed(err, base, name)) as never;
        return super.query(config, ((err: Error | null, res: unknown) => {
          if (err) this.noteStale(err, base, name);
          callback(err, res);
        }) as never) as never;
      }
    }
    return (super.query as (...a: unknown[]) => unknown)(...args) as never;
  }

  private failed(err: unknown, base: string, name: string): never {
    this.noteStale(err, base, name);
    throw err;
  }

  /**
   * A table's columns changed under a prepared statement (a migration run by another
   * instance during a rolling upgrade): PostgreSQL refuses to run it again ("cached plan
   * must not change result type"). That one execution fails; from the next one on, this
   * connection prepares the text afresh under a new name.
   */
  private noteStale(err: unknown, base: string, name: string): void {
    if ((err as { code?: string }).code !== '0A000' || !/cached plan must not change result type/.test(String((err as Error).message))) return;
    this.renamed ??= new Map();
    const n = name === base ? 1 : Number(name.slice(name.lastIndexOf('_r') + 2)) + 1;
    this.renamed.set(base, `${base}_r${n}`);
  }
}

export function createPool(opts: DatabaseOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'lumen',
    connectionTimeoutMillis: opts.connectionTimeoutMillis ?? 10_000,
    Client: opts.prepared === false ? SessionClient : PreparingClient,
  });
  // A connection that dies while checked out emits 'error' on its client, which the pool
  // only hears while the client is idle: SessionClient listens itself (the query in flight
  // fails with the same error; the pool discards the client when it is released).
  return pool;
}

export function createDatabase(pool: pg.Pool): Database {
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}
