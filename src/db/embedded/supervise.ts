import type { EmbeddedDatabase, EmbeddedDatabaseOptions } from './index.js';
import { alive, delay, isInCluster } from './process.js';

export interface SupervisorOptions {
  readonly dataDir: string;
  readonly clusterDir: string;
  readonly log: EmbeddedDatabaseOptions['log'];
  /** Restart attempts before the process declares itself failing (/livez 503). */
  readonly attempts: number;
  /** Pause before the first attempt; doubled before each next one. */
  readonly firstDelayMs: number;
  /** How often the server is checked. Default 500 ms. */
  readonly pollMs?: number;
  /** Opens (starts) the embedded database again: openEmbeddedDatabase. */
  readonly reopen: () => Promise<EmbeddedDatabase>;
}

/**
 * Watches an owned embedded server: when its postmaster is gone (killed, crashed) while
 * Lumen runs, it is started again on the same data directory and port, with backoff,
 * and logged. The pool's new connections reach it as soon as it answers (the URL does
 * not change). When it cannot come back within the attempts, the supervisor reports
 * the process as failing, so that /livez answers 503 and an orchestrator restarts Lumen.
 */
export class EmbeddedSupervisor {
  private current: EmbeddedDatabase;
  private failing: string | null = null;
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(first: EmbeddedDatabase, private readonly opts: SupervisorOptions) {
    this.current = first;
    this.loop = this.watch();
  }

  /** The server in use now (a restart replaces it). */
  get database(): EmbeddedDatabase {
    return this.current;
  }

  /** Null while the server runs or may still come back; the reason once it cannot. */
  get failure(): string | null {
    return this.failing;
  }

  /** Stops watching, then stops the server in use. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    await this.current.stop();
  }

  private async serverAlive(): Promise<boolean> {
    const pid = this.current.pid;
    return pid !== undefined && alive(pid) && (await isInCluster(pid, this.opts.clusterDir));
  }

  private async watch(): Promise<void> {
    const pollMs = this.opts.pollMs ?? 500;
    while (!this.stopped) {
      await delay(pollMs);
      if (this.stopped || (await this.serverAlive())) continue;
      this.opts.log('the embedded PostgreSQL is gone; starting it again', { pid: this.current.pid });
      await this.restart();
    }
  }

  /**
   * Starts the server again, with a doubling pause (at most a minute). Past the attempts
   * the process reports itself failing (/livez 503, with the cause) but keeps trying: a
   * full disk freed or a permission fixed brings it back without a restart of Lumen.
   */
  private async restart(): Promise<void> {
    const url = this.current.url;
    let lastError = 'unknown';
    for (let attempt = 1; !this.stopped; attempt++) {
      await delay(Math.min(60_000, this.opts.firstDelayMs * 2 ** Math.min(attempt - 1, 20)));
      if (this.stopped) return;
      try {
        const db = await this.opts.reopen();
        if (db.url !== url) {
          await db.stop();
          throw new Error('it came back on another port, which the open connections cannot follow');
        }
        this.current = db;
        this.failing = null;
        this.opts.log('the embedded PostgreSQL is running again', { attempt, pid: db.pid });
        if (!db.owned) this.stopped = true; // another Lumen process owns it now and watches it
        return;
      } catch (err) {
        lastError = err instanceof Error ? err.message : String(err);
        this.opts.log('starting the embedded PostgreSQL again failed', { attempt, of: this.opts.attempts, error: lastError.split('\n')[0] });
        if (attempt >= this.opts.attempts) this.failing = `the embedded PostgreSQL could not be started again after ${attempt} attempt(s), still trying: ${lastError.split('\n')[0]}`;
      }
    }
  }
}
