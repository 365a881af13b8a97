import { sql, type Selectable, type Updateable } from 'kysely';
import type { Executor, Tx } from '../database.js';
import type { ExternalSystemTable } from '../tables/foundation.js';
import type { PartnerPollStateTable, RejectedInboundItemTable, RejectionReason } from '../tables/polling.js';

export type PollStateRow = Selectable<PartnerPollStateTable>;
export type RejectedItemRow = Selectable<RejectedInboundItemTable>;
export type PollablePartnerRow = Pick<Selectable<ExternalSystemTable>, 'id' | 'code' | 'polling_interval_seconds'>;

export async function findPollState(db: Executor, externalSystemId: string): Promise<PollStateRow | undefined> {
  return db.selectFrom('partner_poll_state').selectAll().where('external_system_id', '=', externalSystemId).executeTakeFirst();
}

/**
 * The partner's poll state, created when missing, locked until the transaction ends:
 * every decision about the partner's next poll (the job that ends, the reconciler,
 * an operator's poll-now) goes through this lock, so they never interleave.
 */
export async function lockPollState(tx: Tx, externalSystemId: string): Promise<PollStateRow> {
  await tx.insertInto('partner_poll_state').values({ external_system_id: externalSystemId }).onConflict((oc) => oc.column('external_system_id').doNothing()).execute();
  return tx.selectFrom('partner_poll_state').selectAll().where('external_system_id', '=', externalSystemId).forUpdate().executeTakeFirstOrThrow();
}

/** Counters to add to the totals (never overwritten, so concurrent readers see sums). */
export interface PollCounters {
  itemsAccepted?: number;
  itemsRejected?: number;
  pollsSucceeded?: number;
  pollsFailed?: number;
}

export async function updatePollState(db: Executor, externalSystemId: string, patch: Updateable<PartnerPollStateTable>, add: PollCounters = {}): Promise<void> {
  await db
    .updateTable('partner_poll_state')
    .set({
      ...patch,
      ...(add.itemsAccepted ? { items_accepted: sql<number>`items_accepted + ${add.itemsAccepted}` } : {}),
      ...(add.itemsRejected ? { items_rejected: sql<number>`items_rejected + ${add.itemsRejected}` } : {}),
      ...(add.pollsSucceeded ? { polls_succeeded: sql<number>`polls_succeeded + ${add.pollsSucceeded}` } : {}),
      ...(add.pollsFailed ? { polls_failed: sql<number>`polls_failed + ${add.pollsFailed}` } : {}),
      updated_at: new Date(),
    })
    .where('external_system_id', '=', externalSystemId)
    .execute();
}

/** Polling-mode partners Lumen should be polling: enabled, with a polling URL. */
export async function listPollablePartners(db: Executor): Promise<PollablePartnerRow[]> {
  return db
    .selectFrom('external_system')
    .select(['id', 'code', 'polling_interval_seconds'])
    .where('transport', '=', 'polling')
    .where('enabled', '=', true)
    .where('polling_url', 'is not', null)
    .orderBy('code')
    .execute();
}

export interface RejectedItemInsert {
  externalSystemId: string;
  tenantId: string;
  protocolNumber: string | null;
  item: unknown;
  itemHash: Buffer;
  problemCode: string;
  reasons: RejectionReason[];
  since: Date | null;
}

/** Records a refused item; the same item seen again moves last_seen_at and times_seen. */
export async function upsertRejectedItem(db: Executor, row: RejectedItemInsert): Promise<void> {
  await db
    .insertInto('rejected_inbound_item')
    .values({
      external_system_id: row.externalSystemId,
      tenant_id: row.tenantId,
      protocol_number: row.protocolNumber,
      item: JSON.stringify(row.item),
      item_hash: row.itemHash,
      problem_code: row.problemCode,
      reasons: JSON.stringify(row.reasons),
      since: row.since,
    })
    .onConflict((oc) =>
      oc.columns(['external_system_id', 'item_hash']).doUpdateSet({
        last_seen_at: sql<Date>`now()`,
        times_seen: sql<number>`rejected_inbound_item.times_seen + 1`,
        problem_code: (eb) => eb.ref('excluded.problem_code'),
        reasons: (eb) => eb.ref('excluded.reasons'),
      }),
    )
    .execute();
}

/** A valid item with this protocolNumber was accepted: earlier refusals of it are settled. */
export async function resolveRejectedItems(db: Executor, externalSystemId: string, protocolNumber: string): Promise<number> {
  const res = await db
    .updateTable('rejected_inbound_item')
    .set({ resolved_at: new Date() })
    .where('external_system_id', '=', externalSystemId)
    .where('protocol_number', '=', protocolNumber)
    .where('resolved_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

export type RejectedStatusFilter = 'open' | 'resolved' | 'all';

export interface RejectedItemQuery {
  externalSystemId: string;
  status: RejectedStatusFilter;
  limit: number;
  offset: number;
}

function filtered(db: Executor, q: Pick<RejectedItemQuery, 'externalSystemId' | 'status'>) {
  let query = db.selectFrom('rejected_inbound_item').where('external_system_id', '=', q.externalSystemId);
  if (q.status === 'open') query = query.where('resolved_at', 'is', null).where('dismissed_at', 'is', null);
  if (q.status === 'resolved') query = query.where('resolved_at', 'is not', null);
  return query;
}

/** Newest first (by first sighting), then by id for a stable order. */
export async function listRejectedItems(db: Executor, q: RejectedItemQuery): Promise<RejectedItemRow[]> {
  return filtered(db, q).selectAll().orderBy('first_seen_at', 'desc').orderBy('id', 'desc').limit(q.limit).offset(q.offset).execute();
}

export async function countRejectedItems(db: Executor, q: Pick<RejectedItemQuery, 'externalSystemId' | 'status'>): Promise<number> {
  const row = await filtered(db, q).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function lockRejectedItem(tx: Tx, id: string): Promise<RejectedItemRow | undefined> {
  return tx.selectFrom('rejected_inbound_item').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}
