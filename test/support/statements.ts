import pg from 'pg';
import { PreparingClient } from '../../src/db/database.js';

/** A statement the app's pool handed to node-postgres: its text, the name it was prepared under (undefined: unnamed) and its values. */
export interface SentStatement {
  readonly text: string;
  readonly name: string | undefined;
  readonly values: readonly unknown[];
}

/**
 * Observes what the app's pooled clients (PreparingClient) hand to node-postgres, after
 * they named it or not: install() before the app starts, during() around the work to
 * record, restore() at the end.
 */
export function statementObserver() {
  const original = pg.Client.prototype.query;
  let recording: SentStatement[] | null = null;
  return {
    install(): void {
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        if (recording && this instanceof PreparingClient) {
          const [first] = args;
          if (typeof first === 'string') recording.push({ text: first, name: undefined, values: Array.isArray(args[1]) ? (args[1] as unknown[]) : [] });
          else if (first && typeof first === 'object' && 'text' in first) {
            const q = first as { text: unknown; name?: string; values?: unknown[] };
            recording.push({ text: String(q.text), name: q.name, values: q.values ?? [] });
          }
        }
        return (original as (...a: unknown[]) => unknown).apply(this, args);
      } as typeof pg.Client.prototype.query;
    },
    async during(work: () => Promise<void>): Promise<SentStatement[]> {
      const sent: SentStatement[] = [];
      recording = sent;
      try {
        await work();
      } finally {
        recording = null;
      }
      return sent;
    },
    restore(): void {
      pg.Client.prototype.query = original;
    },
  };
}

/**
 * What the process sends on its own timers, whatever the requests: the horizon clock,
 * the rate counters, and the delivery worker's rounds (held events released every
 * second, the claim's poll, its send permits). One of the worker's rounds landing inside
 * a request made a page seem to send two statements on a loaded machine.
 */
export const BACKGROUND = /lumen_xid_clock|rate_limit_window|undoable_action|lumen_claim_webhook_deliveries|webhook_send_permit/;
