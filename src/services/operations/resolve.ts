import { AppError } from '../../lib/errors.js';
import type { Executor } from '../../db/database.js';
import {
  alertRefById,
  alertRefsByNumber,
  orderRefById,
  orderRefsByNumber,
  teamRefById,
  teamRefsByName,
  type RowRef,
  type TenantSet,
} from '../../db/repositories/operations/lookup.repository.js';
import { roleOn, visibleTenants, type AdminAccess } from '../operators/index.js';
import { isUuid } from '../tenants/index.js';

/**
 * Display references: operators name alerts by number (`42`, `#42`), orders by number
 * (`OS-2026-00042`) and teams by name, wherever an id is accepted. A display number is
 * unique only within a tenant, so it is looked up among the tenants the caller can see
 * (or the one tenant given): none is not-found, one is the answer, more than one is 409
 * `ambiguous` (give tenantId). A UUID is taken as an id. A row of a tenant the caller
 * cannot see is not-found, exactly as a reference that names nothing.
 */
export interface Ref {
  id: string;
  tenantId: string;
}

type Kind = 'alert' | 'service order' | 'team';

const ALERT_NUMBER = /^#?\s*(\d{1,9})$/;
const ORDER_NUMBER = /^OS-(\d{4})-(\d{1,9})$/i;

function notFound(kind: Kind, ref: string): AppError {
  return new AppError('not-found', { resource: `${kind} ${ref}` });
}

/** The tenants a lookup may search: the caller's, cut to `tenantId` when one is given. */
function searchSet(access: AdminAccess, tenantId: string | undefined): TenantSet {
  if (tenantId !== undefined) return isUuid(tenantId) && roleOn(access, tenantId) !== null ? [tenantId] : [];
  const visible = visibleTenants(access);
  return visible === 'all' ? null : visible;
}

function one(kind: Kind, ref: string, rows: readonly RowRef[]): Ref {
  if (rows.length === 0) throw notFound(kind, ref);
  if (rows.length > 1) throw new AppError('ambiguous', { ref, kind });
  return { id: rows[0]!.id, tenantId: rows[0]!.tenant_id };
}

async function byId(access: AdminAccess, kind: Kind, ref: string, tenantId: string | undefined, find: () => Promise<RowRef | undefined>): Promise<Ref> {
  const row = await find();
  if (!row || roleOn(access, row.tenant_id) === null || (tenantId !== undefined && row.tenant_id !== tenantId)) throw notFound(kind, ref);
  return { id: row.id, tenantId: row.tenant_id };
}

/** An alert by id, `42` or `#42` (its alertNumber). */
export async function resolveAlert(db: Executor, access: AdminAccess, ref: string, tenantId?: string): Promise<Ref> {
  const value = (ref ?? '').trim();
  if (isUuid(value)) return byId(access, 'alert', value, tenantId, () => alertRefById(db, value));
  const m = ALERT_NUMBER.exec(value);
  if (!m) throw notFound('alert', value);
  return one('alert', value, await alertRefsByNumber(db, Number(m[1]), searchSet(access, tenantId)));
}

/** A service order by id or number (`OS-2026-00042`; case and leading zeros do not matter). */
export async function resolveOrder(db: Executor, access: AdminAccess, ref: string, tenantId?: string): Promise<Ref> {
  const value = (ref ?? '').trim();
  if (isUuid(value)) return byId(access, 'service order', value, tenantId, () => orderRefById(db, value));
  const m = ORDER_NUMBER.exec(value);
  if (!m) throw notFound('service order', value);
  const number = `OS-${m[1]}-${String(Number(m[2])).padStart(5, '0')}`;
  return one('service order', value, await orderRefsByNumber(db, number, searchSet(access, tenantId)));
}

/** A team by id or name (case-insensitive; an exact-case match wins over others). */
export async function resolveTeam(db: Executor, access: AdminAccess, ref: string, tenantId?: string): Promise<Ref> {
  const value = (ref ?? '').trim();
  if (isUuid(value)) return byId(access, 'team', value, tenantId, () => teamRefById(db, value));
  if (value.length === 0 || value.length > 200) throw notFound('team', value);
  const rows = await teamRefsByName(db, value, searchSet(access, tenantId));
  const exact = rows.filter((r) => r.name === value);
  return one('team', value, exact.length > 0 ? exact : rows);
}

/**
 * A reference in a request body (a team name, an order number), looked up in the tenant
 * of the row the action is on: one that names nothing there is 422 with a pointer to
 * the field ("no such team in the alert's tenant").
 */
export async function resolveField(db: Executor, access: AdminAccess, kind: 'team' | 'service order', ref: string, tenantId: string, pointer: string, owner: 'alert' | 'order'): Promise<string> {
  try {
    return (kind === 'team' ? await resolveTeam(db, access, ref, tenantId) : await resolveOrder(db, access, ref, tenantId)).id;
  } catch (err) {
    if (err instanceof AppError && err.code === 'not-found') {
      throw new AppError('validation-failed', { count: 1 }, [{ pointer, message: `no such ${kind} in the ${owner}'s tenant` }]);
    }
    throw err;
  }
}
