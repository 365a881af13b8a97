import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { OrderingKey } from '../../db/repositories/webhook-delivery.repository.js';

/**
 * The channel that wakes the delivery workers of every serving process (see
 * jobs/webhook-pump.ts): notified by each transaction that writes a delivery.
 */
export const DELIVERY_CHANNEL = 'lumen_webhook_due';

/** More keys than this to check again are announced as "check every blocked delivery". */
const MAX_KEYS_IN_NOTIFICATION = 50;

/**
 * Wakes the delivery workers when the caller's transaction commits (NOTIFY is delivered
 * at commit, and never if it rolls back): call it in the transaction that writes
 * deliveries, naming the ordering keys of those written blocked, which the workers then
 * check again (see recheckKeys). A wake-up that is lost (no process listening at that
 * moment) delays deliveries by the workers' short poll, and a lost check by the minute
 * sweep, at most.
 */
export async function wakeDeliveries(executor: Executor, recheck: readonly OrderingKey[] = []): Promise<void> {
  await sql`SELECT pg_notify(${DELIVERY_CHANNEL}, ${notificationPayload(recheck)})`.execute(executor);
}

/** The notification's payload: '' (nothing to check), a JSON list of [partner, key] pairs, or '*' (check all). */
export function notificationPayload(recheck: readonly OrderingKey[]): string {
  if (recheck.length === 0) return '';
  if (recheck.length > MAX_KEYS_IN_NOTIFICATION) return '*';
  return JSON.stringify(recheck.map((k) => [k.external_system_id, k.ordering_key]));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Reads a payload back: the keys to check, 'all', or none for anything else. */
export function parseNotificationPayload(payload: string | undefined): OrderingKey[] | 'all' {
  if (!payload) return [];
  if (payload === '*') return 'all';
  try {
    const pairs = JSON.parse(payload) as unknown;
    if (!Array.isArray(pairs)) return [];
    return pairs
      .filter((p): p is [string, string] => Array.isArray(p) && typeof p[0] === 'string' && typeof p[1] === 'string' && UUID.test(p[0]) && UUID.test(p[1]))
      .map(([external_system_id, ordering_key]) => ({ external_system_id, ordering_key }));
  } catch {
    return [];
  }
}
