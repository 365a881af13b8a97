import { sql, type RawBuilder } from 'kysely';
import type { Database } from '../database.js';

// Per-tenant numbers (N2): service orders `OS-<year>-<sequence>` (counter
// 'service_order', per year) and alerts (counter 'alert', year 0). Every writer of
// these numbers takes them here, from a PostgreSQL sequence per tenant, counter and
// year (migration 0112, lumen_take_number): nextval takes no row lock, so the
// intakes of one city do not queue behind each other.
//
// Numbers are unique and increasing per tenant, not gap-free. They are taken before
// the write that uses them, and nextval is never rolled back: a write that fails
// after taking its numbers leaves them unused, a gap.

export interface NumbersWanted {
  alert: boolean;
  serviceOrder: boolean;
}

export interface AllocatedNumbers {
  /** Set when `alert` was wanted. */
  alertNumber: number | null;
  /** `OS-<year>-<sequence>`, set when `serviceOrder` was wanted. */
  serviceOrderNumber: string | null;
}

/**
 * Takes the wanted numbers of a tenant in ONE statement, committed on its own
 * (autocommit) and without waiting for a WAL flush:
 * `set_config('synchronous_commit', 'off', true)` is SET LOCAL for the statement's own
 * transaction. A sequence writes WAL ahead of the values it hands out (every 32nd
 * nextval) and that statement's commit would otherwise wait for its flush. Why that is
 * safe: the caller's write commits synchronously afterwards, and flushing its commit
 * record flushes all earlier WAL, the sequence's included. A crash before that flush
 * can only take the sequence back to before these numbers, and then nothing that used
 * them was committed either: the next writer takes the same values, which no row
 * holds. The service-order year is the current UTC year.
 */
export async function allocateNumbers(db: Database, tenantId: string, wanted: NumbersWanted, now: Date = new Date()): Promise<AllocatedNumbers> {
  // Inside a caller's transaction the asynchronous commit would apply to the caller's
  // writes, and a sequence created by the first number would stay invisible to other
  // connections (which would wait for it) until the caller's commit.
  if (db.isTransaction) throw new Error('allocateNumbers runs in its own transaction: pass the pool, not a transaction');
  const year = now.getUTCFullYear();
  const { rows } = await allocationStatement(tenantId, wanted, year).execute(db);
  const value = (name: string): number | null => rows.find((r) => r.name === name)?.value ?? null;
  if (rows.some((r) => r.commit_mode !== 'off')) throw new Error('number allocation did not switch its commit to asynchronous');
  const seq = value('service_order');
  return {
    alertNumber: value('alert'),
    serviceOrderNumber: seq === null ? null : serviceOrderNumber(year, seq),
  };
}

/** OS-<year>-<sequence>, the sequence zero-padded to at least 5 digits (N2). */
export function serviceOrderNumber(year: number, seq: number): string {
  return `OS-${year}-${String(seq).padStart(5, '0')}`;
}

/** One service-order number (an operator's new order, the demo city). */
export async function allocateServiceOrderNumber(db: Database, tenantId: string, now?: Date): Promise<string> {
  return (await allocateNumbers(db, tenantId, { alert: false, serviceOrder: true }, now)).serviceOrderNumber!;
}

/** The statement of allocateNumbers. */
export function allocationStatement(tenantId: string, wanted: NumbersWanted, year: number): RawBuilder<{ name: 'alert' | 'service_order'; value: number; commit_mode: string }> {
  return sql`
    SELECT n.name, lumen_take_number(${tenantId}::uuid, n.name, n.year) AS value, set_config('synchronous_commit', 'off', true) AS commit_mode
      FROM (VALUES (1, 'alert', 0, ${wanted.alert}::boolean), (2, 'service_order', ${year}::integer, ${wanted.serviceOrder}::boolean)) AS n(ord, name, year, wanted)
     WHERE n.wanted
     ORDER BY n.ord`;
}
