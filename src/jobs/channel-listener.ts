import pg from 'pg';
import type { Logger } from '../lib/logger.js';

/** Reconnect delays after the listening connection is lost: doubling from this... */
const FIRST_RETRY_MS = 500;
/** ...up to this. */
const MAX_RETRY_MS = 30_000;

/**
 * LISTEN on one channel over a connection of its own. Calls `onNotify` with each
 * notification's payload, and with none after every reconnect: notifications sent while
 * the connection was down are lost, so the listener must look for itself. Never throws:
 * while the database is unreachable it keeps trying, and the caller's own poll covers
 * the gap.
 */
export class ChannelListener {
  private client: pg.Client | null = null;
  private retryMs = FIRST_RETRY_MS;
  private retryTimer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly url: string,
    private readonly channel: string,
    private readonly onNotify: (payload: string | null) => void,
    private readonly log: Logger,
  ) {}

  /** True while the connection is up and LISTENing: no notification of the channel can be missed. */
  get listening(): boolean {
    return this.client !== null;
  }

  /** Resolves once listening, or once the first try failed (it goes on trying). */
  async start(): Promise<void> {
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<boolean> {
    const client = new pg.Client({ connectionString: this.url, application_name: 'lumen-listen' });
    client.on('notification', (n) => this.onNotify(n.payload ?? ''));
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, null));
    try {
      await client.connect();
      await client.query(`LISTEN ${pg.escapeIdentifier(this.channel)}`);
    } catch (err) {
      this.lost(client, err as Error);
      return false;
    }
    if (this.stopped) {
      await client.end().catch(() => {});
      return false;
    }
    this.client = client;
    this.retryMs = FIRST_RETRY_MS;
    return true;
  }

  private lost(client: pg.Client, err: Error | null): void {
    for (const event of ['end', 'error', 'notification']) client.removeAllListeners(event);
    client.on('error', () => {});
    client.end().catch(() => {});
    // An older connection's last words, or one already being replaced.
    if (this.client && this.client !== client) return;
    this.client = null;
    if (this.stopped || this.retryTimer) return;
    this.log.warn({ err: err ?? undefined, channel: this.channel, retryInMs: this.retryMs }, 'listening connection lost; reconnecting');
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.connect().then((ok) => {
        if (ok) this.onNotify(null);
      });
    }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
  }
}
