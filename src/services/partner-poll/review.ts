import { sql } from 'kysely';
import type { RejectedItemCorrections } from '../../../generated/admin/types.gen.js';
import type { RuntimeDeps } from '../deps.js';
import { lockRejectedItem, resolveRejectedItems } from '../../db/repositories/partner-poll.repository.js';
import { findExternalSystem } from '../../db/repositories/external-system.repository.js';
import type { Tx } from '../../db/database.js';
import { AppError } from '../../lib/errors.js';
import { actorLabel, recordAudit, type Actor } from '../audit/index.js';
import { requireTenantRole, type AdminAccess } from '../operators/index.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';
import { submitPolledItem } from './intake.js';
import { rejectedItemView, type RejectedInboundItemView } from './status.js';

/** A rejected item the caller may act on (triager on its tenant), locked; not-found otherwise. */
async function lockItem(tx: Tx, access: AdminAccess, id: string) {
  const resource = `rejected inbound item ${id}`;
  const row = isUuid(id) ? await lockRejectedItem(tx, id) : undefined;
  if (!row) throw new AppError('not-found', { resource });
  requireTenantRole(access, row.tenant_id, 'triager', resource);
  return row;
}

async function viewOf(db: ServiceDeps['db'], id: string, partnerId: string): Promise<RejectedInboundItemView> {
  const partner = (await findExternalSystem(db, partnerId))!;
  const row = (await db.selectFrom('rejected_inbound_item').selectAll().where('id', '=', id).executeTakeFirst())!;
  return rejectedItemView(partner.code, row);
}

/**
 * Looked at, nothing to do: it leaves the open list and the attention count, with the
 * operator's reason when given. Idempotent; audited on the partner.
 */
export async function dismissRejectedItem(deps: ServiceDeps, by: Actor, id: string, reason?: string): Promise<RejectedInboundItemView> {
  const note = reason?.trim() || null;
  if (note !== null && note.length > 500) throw new AppError('validation-failed', { count: 1 }, [{ pointer: '/reason', message: 'must be at most 500 characters' }]);
  const partnerId = await deps.db.transaction().execute(async (tx) => {
    const row = await lockItem(tx, by.access, id);
    if (!row.dismissed_at) {
      await tx.updateTable('rejected_inbound_item').set({ dismissed_at: sql<Date>`now()`, dismissed_by: actorLabel(by), dismiss_reason: note }).where('id', '=', row.id).execute();
      await recordAudit(tx, by, { tenantId: row.tenant_id, action: 'inbound.dismiss', entityType: 'partner', entityId: row.external_system_id, before: { itemId: row.id, protocolNumber: row.protocol_number }, after: null, note });
    }
    return row.external_system_id;
  });
  return viewOf(deps.db, id, partnerId);
}

/**
 * The stored item through intake again, exactly as a poll would submit it (for a
 * refusal whose cause was fixed meanwhile, for example a partner scope or a tenant
 * setting). Accepted: it and the other open refusals of its protocolNumber get
 * `resolvedAt`. Refused again: it keeps the new problem and reasons. Audited either way.
 */
export async function retryRejectedItem(deps: RuntimeDeps, by: Actor, id: string, signal?: AbortSignal): Promise<{ accepted: boolean; item: RejectedInboundItemView }> {
  const seen = await deps.db.transaction().execute((tx) => lockItem(tx, by.access, id));
  const partner = await findExternalSystem(deps.db, seen.external_system_id);
  if (!partner) throw new AppError('not-found', { resource: `rejected inbound item ${id}` });
  const outcome = await submitPolledItem(deps, { externalSystemId: partner.id, tenantId: partner.tenant_id, scopes: partner.scopes }, seen.item, signal);
  await deps.db.transaction().execute(async (tx) => {
    if (outcome.kind === 'accepted') {
      await tx.updateTable('rejected_inbound_item').set({ resolved_at: sql<Date>`now()` }).where('id', '=', seen.id).where('resolved_at', 'is', null).execute();
      if (seen.protocol_number) await resolveRejectedItems(tx, partner.id, seen.protocol_number);
    } else {
      await tx.updateTable('rejected_inbound_item').set({ problem_code: outcome.code, reasons: JSON.stringify(outcome.reasons) }).where('id', '=', seen.id).execute();
    }
    await recordAudit(tx, by, { tenantId: seen.tenant_id, action: 'inbound.retry', entityType: 'partner', entityId: partner.id, before: { itemId: seen.id, problemCode: seen.problem_code }, after: { accepted: outcome.kind === 'accepted' } });
  });
  return { accepted: outcome.kind === 'accepted', item: await viewOf(deps.db, seen.id, partner.id) };
}

/** What an operator may correct in a refused item (the contract's RejectedItemCorrections). */
export type ItemCorrections = RejectedItemCorrections;

/** Where each correctable field sits in an intake request. */

const CORRECTION_PLACES: Readonly<Record<keyof ItemCorrections, readonly [string, string]>> = {
  description: ['problem', 'description'],
  street: ['address', 'street'],
  number: ['address', 'number'],
  neighborhood: ['address', 'neighborhood'],
  reference: ['address', 'reference'],
  requesterName: ['requester', 'name'],
  phone: ['requester', 'phone'],
  latitude: ['address', 'latitude'],
  longitude: ['address', 'longitude'],
};

/** The item with the corrections in place (a copy; an item that is not an object starts empty). */
export function correctedItem(item: unknown, corrections: ItemCorrections): Record<string, unknown> {
  const base = item !== null && typeof item === 'object' && !Array.isArray(item) ? (structuredClone(item) as Record<string, unknown>) : {};
  for (const [field, value] of Object.entries(corrections) as [keyof ItemCorrections, unknown][]) {
    if (value === undefined || !CORRECTION_PLACES[field]) continue;
    const [group, key] = CORRECTION_PLACES[field];
    const current = base[group];
    const section = current !== null && typeof current === 'object' && !Array.isArray(current) ? (current as Record<string, unknown>) : {};
    section[key] = typeof value === 'string' ? value.trim() : value;
    base[group] = section;
  }
  return base;
}

function checkCorrections(corrections: ItemCorrections | undefined): ItemCorrections {
  const errors: { pointer: string; message: string }[] = [];
  const c = corrections ?? {};
  for (const [field, value] of Object.entries(c)) {
    if (!(field in CORRECTION_PLACES)) errors.push({ pointer: `/corrections/${field}`, message: 'is not a field that can be corrected' });
    else if ((field === 'latitude' || field === 'longitude') && (typeof value !== 'number' || !Number.isFinite(value))) errors.push({ pointer: `/corrections/${field}`, message: 'must be a number' });
    else if (field !== 'latitude' && field !== 'longitude' && (typeof value !== 'string' || value.trim() === '')) errors.push({ pointer: `/corrections/${field}`, message: 'must not be empty' });
  }
  if (errors.length > 0) throw new AppError('validation-failed', { count: errors.length }, errors);
  return c;
}

/**
 * The operator corrects what the citizen sent and accepts the item: the corrected item
 * goes through intake as a valid polled item would (the partner's own caller, scopes and
 * tenant). Accepted: it and the other open refusals of its protocolNumber get
 * `resolvedAt`, and the corrections are kept on it. Refused again: nothing is created,
 * the item keeps the new problem and reasons. Once, idempotently: the item's row stays
 * locked while intake runs, so a second accept waits and then finds it resolved, and
 * answers it as it is. A dismissed item is refused (409). Audited either way.
 */
export async function acceptRejectedItem(deps: RuntimeDeps, by: Actor, id: string, corrections: ItemCorrections, signal?: AbortSignal): Promise<{ accepted: boolean; item: RejectedInboundItemView }> {
  const fixes = checkCorrections(corrections);
  const result = await deps.db.transaction().execute(async (tx) => {
    const row = await lockItem(tx, by.access, id);
    if (row.resolved_at) return { accepted: true, partnerId: row.external_system_id };
    if (row.dismissed_at) throw new AppError('invalid-transition', { action: 'accept the item', state: 'dismissed' });
    const partner = await findExternalSystem(tx, row.external_system_id);
    if (!partner) throw new AppError('not-found', { resource: `rejected inbound item ${id}` });
    const outcome = await submitPolledItem(deps, { externalSystemId: partner.id, tenantId: partner.tenant_id, scopes: partner.scopes }, correctedItem(row.item, fixes), signal);
    const before = Object.fromEntries(Object.keys(fixes).map((f) => {
      const [group, key] = CORRECTION_PLACES[f as keyof ItemCorrections];
      const section = (row.item as Record<string, unknown> | null)?.[group] as Record<string, unknown> | undefined;
      return [f, section?.[key] ?? null];
    }));
    if (outcome.kind === 'accepted') {
      await tx.updateTable('rejected_inbound_item').set({ resolved_at: sql<Date>`now()`, corrections: JSON.stringify(fixes), accepted_by: actorLabel(by) }).where('id', '=', row.id).execute();
      if (row.protocol_number) await resolveRejectedItems(tx, partner.id, row.protocol_number);
    } else {
      await tx.updateTable('rejected_inbound_item').set({ problem_code: outcome.code, reasons: JSON.stringify(outcome.reasons) }).where('id', '=', row.id).execute();
    }
    await recordAudit(tx, by, {
      tenantId: row.tenant_id,
      action: 'inbound.accept',
      entityType: 'partner',
      entityId: partner.id,
      before: { itemId: row.id, protocolNumber: row.protocol_number, ...before },
      after: { accepted: outcome.kind === 'accepted', ...fixes },
    });
    return { accepted: outcome.kind === 'accepted', partnerId: partner.id };
  });
  return { accepted: result.accepted, item: await viewOf(deps.db, id, result.partnerId) };
}
