import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { BenchDatabase } from './postgres.js';
import { LumenServer, lumenJson, type LumenSetup } from './lumen.js';
import type { BenchOptions, Sizes } from './options.js';
import type { RowResult } from './results.js';

/** Tools found on this machine (null: missing, the anchors that need it are skipped). */
export interface Tools {
  readonly psql: string | null;
  readonly pgbench: string | null;
  /** The C load generator of the intake and page rows (null: autocannon / the Node client instead). */
  readonly wrk: string | null;
  /** The browser of the console-load row (null: that row is skipped). */
  readonly chromium: string | null;
}

/** Everything a row needs; one per bench run. */
export class BenchContext {
  /** Secret of every webhook partner of the bench (the receiver verifies with it). */
  readonly webhookSecret = randomBytes(24).toString('hex');
  private server: LumenServer | null = null;
  private readonly memo = new Map<string, Promise<unknown>>();
  private partnerCount = 0;

  constructor(
    readonly opts: BenchOptions,
    readonly sizes: Sizes,
    readonly repo: string,
    readonly setup: LumenSetup,
    readonly db: BenchDatabase,
    /** The bench's own connections (application_name "bench"). */
    readonly pool: pg.Pool,
    readonly tools: Tools,
    /** Scratch directory of this run (CSV files, logs), removed at the end. */
    readonly tmpDir: string,
    readonly log: (message: string) => void,
  ) {}

  /** The shared `lumen serve` of the rows, started on first use. */
  async lumen(): Promise<LumenServer> {
    if (!this.server) this.server = await LumenServer.start(this.setup);
    return this.server;
  }

  /** Stops the shared server (a row that needs a fresh process calls it first). */
  async stopLumen(): Promise<void> {
    const s = this.server;
    this.server = null;
    await s?.stop();
  }

  /** Runs `fn` once per bench run and shares its result (seeds used by several rows). */
  once<T>(key: string, fn: () => Promise<T>): Promise<T> {
    let p = this.memo.get(key) as Promise<T> | undefined;
    if (!p) {
      p = fn();
      this.memo.set(key, p);
    }
    return p;
  }

  /** A tenant through the CLI, as an operator creates one. */
  async createTenant(name: string, intake: 'automatic' | 'manual' = 'automatic'): Promise<{ id: string }> {
    return lumenJson<{ id: string }>(this.setup, ['tenant', 'create', '--name', name, '--intake', intake]);
  }

  /** A partner through the CLI; returns its id, code and the API key shown once. */
  async createPartner(opts: {
    tenantId: string;
    scopes: string[];
    transport?: 'webhook' | 'polling';
    webhookUrl?: string;
  }): Promise<{ id: string; code: string; apiKey: string }> {
    const code = `bench-${++this.partnerCount}-${randomBytes(3).toString('hex')}`;
    const args = ['partner', 'create', '--tenant', opts.tenantId, '--code', code, '--scopes', opts.scopes.join(','), '--transport', opts.transport ?? 'webhook'];
    if (opts.webhookUrl) {
      // From a file: a secret on the command line prints a warning.
      const file = path.join(this.tmpDir, `webhook-secret-${code}`);
      writeFileSync(file, `${this.webhookSecret}\n`, { mode: 0o600 });
      args.push('--webhook-url', opts.webhookUrl, '--webhook-secret-file', file);
    }
    return lumenJson<{ id: string; code: string; apiKey: string }>(this.setup, args);
  }
}

/** Thrown by a row whose feature has not landed in the executable yet. */
export class Pending extends Error {}

/** Thrown by a row that cannot run on this machine (a tool it needs is missing); not a failure. */
export class Skipped extends Error {}

/** What a row returns; the runner adds id, title, status and timing. */
export type RowOutcome = Pick<RowResult, 'lines' | 'notes' | 'params'>;

export interface RowDefinition {
  readonly id: string;
  readonly title: string;
  run(ctx: BenchContext): Promise<RowOutcome>;
}
