import { createHash } from 'node:crypto';
import type { AdminServiceOrder, AdminServiceOrderPage } from '../../../generated/admin/types.gen.js';
import { AppError, type FieldError } from '../../lib/errors.js';
import { cursorCodec } from '../../lib/cursor.js';
import type { ServiceOrderStatus } from '../../db/tables/domain.js';
import { countOrders, listOrderPage, type OrderKeyset, type OrderListFilter, type OrderListRow, type OrderSort } from '../../db/repositories/operations/order-list.repository.js';
import { roleOn, visibleTenants, type AdminAccess } from '../operators/index.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';
import { serviceOrderView } from './order-view.js';
import { resolveTeam } from './resolve.js';

export const ORDER_STATUSES: readonly ServiceOrderStatus[] = ['OPEN', 'ASSIGNED', 'IN_PROGRESS', 'COMPLETED', 'CANCELLED'];
const SORTS: readonly OrderSort[] = ['opened', 'sla', 'priority'];
export const ORDER_PAGE_DEFAULT = 50;
export const ORDER_PAGE_MAX = 500;
const CURSOR_PURPOSE = 'admin/service-orders';

export interface OrderListInput {
  tenantId?: string;
  /** One status or several, comma-separated. */
  status?: string;
  team?: string;
  overdue?: boolean | string;
  reason?: string;
  partner?: string;
  text?: string;
  /** ISO date-times: opened at or after / before. */
  openedAfter?: string;
  openedBefore?: string;
  sort?: string;
  cursor?: string;
  limit?: number | string;
}

interface CursorState {
  /** The filters and sort the cursor belongs to: another query refuses it. */
  q: string;
  k: OrderKeyset;
}

/**
 * The filter of an order query (the list's pages, the CSV export): validated, with the
 * team resolved among the caller's tenants; null when `tenantId` names a tenant the
 * caller cannot see (which reads as one with no orders). Problems found before (`errors`)
 * are reported together with the filters' own.
 */
export async function orderListFilter(deps: ServiceDeps, access: AdminAccess, input: OrderListInput, errors: FieldError[] = []): Promise<OrderListFilter | null> {
  if (input.tenantId !== undefined && !isUuid(input.tenantId)) errors.push({ pointer: '/query/tenantId', message: 'must be a tenant id (UUID)' });
  const statuses = input.status === undefined ? [] : input.status.split(',').map((s) => s.trim());
  const badStatus = statuses.find((s) => !(ORDER_STATUSES as readonly string[]).includes(s));
  if (badStatus !== undefined) errors.push({ pointer: '/query/status', message: `each status must be one of: ${ORDER_STATUSES.join(', ')}` });
  const text = input.text?.trim();
  if (text !== undefined && text.length > 200) errors.push({ pointer: '/query/text', message: 'must be at most 200 characters' });
  for (const name of ['openedAfter', 'openedBefore'] as const) {
    const v = input[name];
    if (v !== undefined && Number.isNaN(Date.parse(v))) errors.push({ pointer: `/query/${name}`, message: 'must be a date-time' });
  }
  if (errors.length > 0) throw new AppError('invalid-parameter', {}, errors);
  if (input.tenantId !== undefined && roleOn(access, input.tenantId) === null) return null;
  const visible = visibleTenants(access);
  const filter: OrderListFilter = {
    tenants: input.tenantId !== undefined ? [input.tenantId] : visible === 'all' ? null : visible,
    statuses: statuses as ServiceOrderStatus[],
    overdue: input.overdue === true || input.overdue === 'true',
    reasonCode: input.reason,
    partnerCode: input.partner,
    text: text || undefined,
    ...(input.openedAfter !== undefined ? { openedAfter: new Date(input.openedAfter) } : {}),
    ...(input.openedBefore !== undefined ? { openedBefore: new Date(input.openedBefore) } : {}),
  };
  if (input.team !== undefined) filter.teamId = (await resolveTeam(deps.db, access, input.team, input.tenantId)).id;
  return filter;
}

/**
 * Service orders of the tenants the caller sees (or of `tenantId`), filtered, sorted,
 * one keyset page at a time: `nextCursor` continues exactly after the last row, however
 * many orders are written meanwhile. `total` counts every match. A tenantId the caller
 * cannot see gives an empty page, as one that does not exist.
 */
export async function listServiceOrders(deps: ServiceDeps, access: AdminAccess, input: OrderListInput): Promise<AdminServiceOrderPage> {
  const sort = (input.sort ?? 'opened') as OrderSort;
  const requested = input.limit === undefined ? ORDER_PAGE_DEFAULT : Number(input.limit);
  const errors: FieldError[] = [];
  if (!SORTS.includes(sort)) errors.push({ pointer: '/query/sort', message: `must be one of: ${SORTS.join(', ')}` });
  if (!Number.isInteger(requested) || requested < 1) errors.push({ pointer: '/query/limit', message: 'must be a whole number of at least 1' });
  const filter = await orderListFilter(deps, access, input, errors);
  // A tenant the caller cannot see reads as an unknown one: nothing in it (as the alert list).
  if (filter === null) return { items: [], limit: Math.min(requested, ORDER_PAGE_MAX), total: 0, nextCursor: null };

  // A digest, not the filters themselves: the cursor stays short however many tenants the caller sees.
  const query = createHash('sha256').update(JSON.stringify([filter, sort])).digest('base64url').slice(0, 22);
  let from: OrderKeyset | null = null;
  if (input.cursor !== undefined) {
    const state = cursorCodec(deps.config.secretKey).decode(CURSOR_PURPOSE, input.cursor) as CursorState | null;
    if (!state || state.q !== query) throw new AppError('invalid-cursor', {}, [{ pointer: '/query/cursor', message: 'not a cursor of this query' }]);
    from = state.k;
  }
  const limit = Math.min(requested, ORDER_PAGE_MAX);
  const [rows, total] = await Promise.all([listOrderPage(deps.db, filter, sort, from, limit), countOrders(deps.db, filter)]);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor = rows.length > limit && last ? cursorCodec(deps.config.secretKey).encode(CURSOR_PURPOSE, { q: query, k: { key: last.sort_key, rank: last.priority_rank, id: last.id } } satisfies CursorState) : null;
  const now = Date.now();
  return {
    items: page.map((r) => adminServiceOrderView(r, now)),
    limit,
    total,
    nextCursor,
  };
}

/** An order as operators see it: the partners' shape, plus its tenant, deadline, overdue flag and linked alerts' count and partners. */
export function adminServiceOrderView(r: OrderListRow, now = Date.now()): AdminServiceOrder {
  return {
    ...serviceOrderView(r),
    tenantId: r.tenant_id,
    poleCode: r.pole_code ?? null,
    slaDueAt: r.sla_due_at.toISOString(),
    overdue: r.closed_at === null && r.sla_due_at.getTime() < now,
    alertCount: r.alert_count,
    partners: r.partner_codes ?? [],
    plannedVisit:
      r.visit_starts_at && r.visit_ends_at
        ? { startsAt: r.visit_starts_at.toISOString(), endsAt: r.visit_ends_at.toISOString(), overdue: r.closed_at === null && r.visit_ends_at.getTime() < now }
        : null,
  };
}
