import pg from 'pg';
import { PreparingClient } from '../../src/db/database.js';

/** A statement the app's pool handed to node-postgres: its text and the name it was prepared under (undefined: unnamed). */
export interface SentStatement {
  readonly text: string;
  readonly name: string | undefined;
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
          if (typeof first === 'string') recording.push({ text: first, name: undefined });
          else if (first && typeof first === 'object' && 'text' in first) recording.push({ text: String((first as { text: unknown }).text), name: (first as { name?: string }).name });
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
