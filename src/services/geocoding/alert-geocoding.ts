import { findAlert } from '../../db/repositories/intake/alert.repository.js';
import { setAlertLocationIfUnset } from '../../db/repositories/intake/alert.repository.js';
import { fillServiceOrderLocation } from '../../db/repositories/operations/service-order.repository.js';
import { findTenant } from '../../db/repositories/tenant.repository.js';
import { lockOrder } from '../../db/repositories/operations/triage.repository.js';
import type { ServiceDeps } from '../deps.js';
import { geocode, type GeocodeOutcome } from './index.js';

export type GeocodeAgainResult = { kind: 'located'; orderUpdated: boolean } | { kind: 'not-needed' } | { kind: 'miss'; misses: string[] };

/**
 * The background retry of N8 for one alert: geocode its current address with the full
 * provider chain (no intake budget, only the per-call timeout). On success the alert
 * gets the coordinates, and so does its service order while that is still OPEN and has
 * none. Nothing happens when the alert got coordinates meanwhile (a resend, an
 * operator), was closed, or its address changed since it was read.
 */
export async function geocodeAlertAgain(deps: ServiceDeps, alertId: string): Promise<GeocodeAgainResult> {
  const alert = await findAlert(deps.db, alertId);
  if (!alert || alert.latitude !== null || alert.status === 'Resolved' || alert.status === 'Cancelled') return { kind: 'not-needed' };
  const tenant = await findTenant(deps.db, alert.tenant_id);
  if (!tenant) return { kind: 'not-needed' };
  const address = { street: alert.address_street, number: alert.address_number, neighborhood: alert.address_neighborhood };
  const outcome: GeocodeOutcome = await geocode(deps, { tenantId: tenant.id, city: tenant.name, brazil: tenant.ibge_code !== null, ...address });
  if (!outcome.hit) return { kind: 'miss', misses: outcome.misses };
  const hit = outcome.hit;
  return deps.db.transaction().execute(async (tx) => {
    // Orders are locked before their alerts, the order every operator action uses:
    // taking the alert first and then its order could deadlock with a complete or cancel.
    const orderId = alert.service_order_id;
    if (orderId) await lockOrder(tx, orderId);
    const updated = await setAlertLocationIfUnset(tx, alertId, address, hit);
    if (!updated) return { kind: 'not-needed' } as const;
    // An order linked after the read above is not locked here; it keeps the coordinates the operator gave it.
    const orderUpdated = orderId && updated.service_order_id === orderId ? await fillServiceOrderLocation(tx, orderId, hit.latitude, hit.longitude) : false;
    return { kind: 'located', orderUpdated } as const;
  });
}
