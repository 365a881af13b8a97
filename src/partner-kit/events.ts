import type { Event } from '../../generated/partner-client/types.gen.js';
import type { LumenClient } from './client.js';

export interface DrainOptions {
  /**
   * The `nextSince` kept from the previous drain (omit or null the first time). Sending
   * it confirms every event up to it: they are never returned again.
   */
  since?: string | null;
  /** Events per call (1–1000). Default: Lumen's. */
  limit?: number;
  /**
   * Called with each batch, oldest first, before the batch is confirmed (by the next
   * call). Throw to stop: the batch stays unconfirmed and comes again next time, so
   * handle events idempotently by `eventId`.
   */
  onEvents: (events: Event[]) => Promise<void> | void;
}

export interface DrainResult {
  /** Keep this and pass it as `since` to the next drain (it confirms the last batch). */
  since: string;
  received: number;
  /** Seconds Lumen asks to wait before the next drain (from a 429), or 0. */
  retryAfterSeconds: number;
}

/**
 * The events loop of the polling transport: call with `since`, handle the batch,
 * call again with `nextSince` while `hasMore` is true. Gap-free: no event is skipped
 * whatever order Lumen's writes committed in.
 */
export async function drainEvents(client: LumenClient, opts: DrainOptions): Promise<DrainResult> {
  let since = opts.since ?? null;
  let received = 0;
  for (;;) {
    const query = { ...(since !== null ? { since } : {}), ...(opts.limit ? { limit: opts.limit } : {}) };
    const { body } = await client.call('listEvents', { query });
    if (body.events.length > 0) await opts.onEvents(body.events);
    received += body.events.length;
    since = body.nextSince;
    if (!body.hasMore) return { since, received, retryAfterSeconds: 0 };
  }
}
