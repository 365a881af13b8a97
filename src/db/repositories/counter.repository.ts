import { sql, type RawBuilder } from 'kysely';
import type { Database } from '../database.js';

// Per-tenant numbers (N2): service orders `OS-<year>-<sequence>` (counter
// 'service_order', per year) and alerts (counter 'alert', year 0). Every writer of
// these counters takes its numbers here.
//
// Numbers are unique and increasing per tenant, not gap-free. They are taken in a
// transaction of their own, before the write that uses them, so a counter row is
// locked only for the length of that one statement instead of until the write's
// commit (which made every intake of a tenant wait for the one before it). A write
// that fails after taking its numbers leaves them unused: a gap.

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
 * (autocommit, so the counter rows are locked from the upsert to the commit inside
 * the server, without a round trip in between) and without waiting for its WAL flush:
 * `set_config('synchronous_commit', 'off', true)` is SET LOCAL for the statement's own
 * transaction. Why that is safe: the caller's write commits synchronously afterwards,
 * and flushing its commit record flushes all earlier WAL, this commit included. A crash
 * before that flush can only lose this increment, and then nothing that used the
 * numbers was committed either: the next writer takes the same values, which no row
 * holds. So a lost commit costs nothing, at worst a gap.
 *
 * Counters are locked in one order (alert, then service order), so two allocations
 * never deadlock. The service-order year is the current UTC year.
 */
export async function allocateNumbers(db: Database, tenantId: string, wanted: NumbersWanted, now: Date = new Date()): Promise<AllocatedNumbers> {
  // Inside a caller's transaction the counter rows would stay locked until its commit
  // and the asynchronous commit would apply to the caller's writes.
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
    INSERT INTO tenant_counter AS c (tenant_id, name, year, value)
    SELECT ${tenantId}::uuid, n.name, n.year, 1
      FROM (VALUES (1, 'alert', 0, ${wanted.alert}::boolean), (2, 'service_order', ${year}::integer, ${wanted.serviceOrder}::boolean)) AS n(ord, name, year, wanted)
     WHERE n.wanted
     ORDER BY n.ord
    ON CONFLICT (tenant_id, name, year) DO UPDATE SET value = c.value + 1
    RETURNING c.name, c.value, set_config('synchronous_commit', 'off', true) AS commit_mode`;
}
