import { sql, type Selectable, type Updateable } from 'kysely';
import type { Executor, Tx } from '../../database.js';
import type { AlertTable } from '../../tables/domain.js';

export type AlertRow = Selectable<AlertTable>;
/** An alert with its row version (xmin): any committed change to the row changes it. */
export type VersionedAlertRow = AlertRow & { row_version: string };

export async function findAlert(db: Executor, id: string): Promise<AlertRow | undefined> {
  return db.selectFrom('alert').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The alert of a partner's protocolNumber (unique per external system), with its row version. */
export async function findAlertByProtocol(db: Executor, externalSystemId: string, protocolNumber: string, opts: { forUpdate?: boolean } = {}): Promise<VersionedAlertRow | undefined> {
  let q = db
    .selectFrom('alert')
    .selectAll()
    .select(sql<string>`xmin::text`.as('row_version'))
    .where('external_system_id', '=', externalSystemId)
    .where('protocol_number', '=', protocolNumber);
  if (opts.forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

export type AlertPatch = Omit<Updateable<AlertTable>, 'sla_due_at'> & { slaHoursFromCreation?: number };

/** Applies a patch; slaHoursFromCreation recomputes sla_due_at from the alert's creation time. */
export async function updateAlert(tx: Tx, id: string, patch: AlertPatch): Promise<AlertRow> {
  const { slaHoursFromCreation, ...rest } = patch;
  return tx
    .updateTable('alert')
    .set(rest)
    .$if(slaHoursFromCreation !== undefined, (q) => q.set({ sla_due_at: sql<Date>`created_at + make_interval(hours => ${slaHoursFromCreation})` }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Marks the alert changed (its stamp and row version move) without changing a column. */
export async function touchAlert(tx: Tx, id: string): Promise<void> {
  await sql`UPDATE alert SET id = id WHERE id = ${id}`.execute(tx);
}

/**
 * Sets geocoded coordinates, only while the alert still has none and its address is
 * the one that was geocoded (a resend may have changed it meanwhile). Returns the
 * updated row, or undefined when nothing matched.
 */
export async function setAlertLocationIfUnset(
  tx: Tx,
  id: string,
  address: { street: string; number: string | null; neighborhood: string | null },
  location: { latitude: number; longitude: number; source: 'poles' | 'geocoder' },
): Promise<AlertRow | undefined> {
  return tx
    .updateTable('alert')
    .set({ latitude: location.latitude, longitude: location.longitude, location_source: location.source })
    .where('id', '=', id)
    .where('latitude', 'is', null)
    .where('address_street', '=', address.street)
    .where(sql<boolean>`address_number IS NOT DISTINCT FROM ${address.number}`)
    .where(sql<boolean>`address_neighborhood IS NOT DISTINCT FROM ${address.neighborhood}`)
    .returningAll()
    .executeTakeFirst();
}

/** Takes the transaction-scoped advisory locks of the given names, in the order given. */
export async function lockNames(tx: Tx, names: readonly string[]): Promise<void> {
  for (const name of names) {
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${name}, 0))`.execute(tx);
  }
}
