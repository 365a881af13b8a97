import type { TenantAttention } from '../../../generated/admin/types.gen.js';
import { AppError } from '../../lib/errors.js';
import { countAttention } from '../../db/repositories/operations/attention.repository.js';
import { findTenant } from '../../db/repositories/tenant.repository.js';
import { requireTenantRole, type AdminAccess } from '../operators/index.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';

/** The console's badges for one tenant: what waits for an operator (viewer and up). */
export async function tenantAttention(deps: ServiceDeps, access: AdminAccess, tenantId: string): Promise<TenantAttention> {
  const resource = `tenant ${tenantId}`;
  if (!isUuid(tenantId)) throw new AppError('not-found', { resource });
  requireTenantRole(access, tenantId, 'viewer', resource);
  if (!(await findTenant(deps.db, tenantId))) throw new AppError('not-found', { resource });
  const c = await countAttention(deps.db, tenantId);
  return {
    tenantId,
    pendingAlerts: c.pending,
    overduePendingAlerts: c.pending_overdue,
    notGeolocatedAlerts: c.not_geolocated,
    overdueServiceOrders: c.overdue_orders,
    deadDeliveries: c.dead_deliveries,
    rejectedInboundItems: c.rejected_items,
    failedAttachmentUrls: c.failed_attachment_urls,
  };
}
