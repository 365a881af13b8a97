import type { ServiceOrder } from '../../../generated/partner/types.gen.js';
import { AppError } from '../../lib/errors.js';
import { loadServiceOrder, resolveOrder, serviceOrderView } from '../operations/index.js';
import type { ServiceDeps } from '../deps.js';

/**
 * One service order of the key's city, by its id or its number (`OS-2026-00042`, any
 * case): the shape of the list's items. Another city's order, or one that does not
 * exist, is 404 alike.
 */
export async function readServiceOrder(deps: ServiceDeps, caller: { readonly tenantId: string }, ref: string): Promise<ServiceOrder> {
  // The key's city, seen as a reader sees it: the number is looked up there only.
  const ofCity = { platformAdmin: false, grants: new Map([[caller.tenantId, 'viewer' as const]]) };
  const found = await resolveOrder(deps.db, ofCity, ref, caller.tenantId);
  const row = await loadServiceOrder(deps.db, found.id);
  if (!row || row.tenant_id !== caller.tenantId) throw new AppError('not-found', { resource: `service order ${ref}` });
  return serviceOrderView(row);
}
