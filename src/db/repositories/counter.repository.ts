import { sql } from 'kysely';
import type { Tx } from '../database.js';

/**
 * Next value of a per-tenant counter. The upsert takes the counter row's lock, so
 * concurrent transactions get distinct, gap-free (on commit) values.
 */
export async function nextCounter(tx: Tx, tenantId: string, name: string, year: number): Promise<number> {
  const row = await tx
    .insertInto('tenant_counter')
    .values({ tenant_id: tenantId, name, year, value: 1 })
    .onConflict((oc) => oc.columns(['tenant_id', 'name', 'year']).doUpdateSet({ value: sql`tenant_counter.value + 1` }))
    .returning('value')
    .executeTakeFirstOrThrow();
  return row.value;
}

/** OS-<year>-<sequence>, sequence per tenant and year, at least 5 digits (N2). */
export async function nextServiceOrderNumber(tx: Tx, tenantId: string, now: Date = new Date()): Promise<string> {
  const year = now.getUTCFullYear();
  const seq = await nextCounter(tx, tenantId, 'service_order', year);
  return `OS-${year}-${String(seq).padStart(5, '0')}`;
}

/** Per-tenant increasing alert number (N2). */
export async function nextAlertNumber(tx: Tx, tenantId: string): Promise<number> {
  return nextCounter(tx, tenantId, 'alert', 0);
}
