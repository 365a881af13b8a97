import type { Runtime } from '../runtime.js';
import { resolveAlert, resolveField, resolveOrder } from '../services/operations/index.js';
import { PLATFORM_ACCESS } from '../services/operators/index.js';

/**
 * Display references on the command line: `42`/`#42` for alerts, `OS-2026-00042` for
 * orders, team names, or ids. The CLI acts as the machine's administrator (every
 * tenant), so a number that exists in two tenants needs `--tenant` (409 ambiguous).
 */
export const TENANT_HINT = ['--tenant <id>', 'tenant in which a display number or team name is looked up (needed when it exists in several)'] as const;

export async function alertIdOf(rt: Runtime, ref: string, tenantId?: string): Promise<string> {
  return (await resolveAlert(rt.db, PLATFORM_ACCESS, ref, tenantId)).id;
}

export async function alertRefOf(rt: Runtime, ref: string, tenantId?: string) {
  return resolveAlert(rt.db, PLATFORM_ACCESS, ref, tenantId);
}

/** An order number or id given for an alert's action (422-style error when it is not in the alert's tenant). */
export async function linkOrderIdOf(rt: Runtime, ref: string, tenantId: string): Promise<string> {
  return resolveField(rt.db, PLATFORM_ACCESS, 'service order', ref, tenantId, '/serviceOrderId', 'alert');
}

export async function orderIdOf(rt: Runtime, ref: string, tenantId?: string): Promise<string> {
  return (await resolveOrder(rt.db, PLATFORM_ACCESS, ref, tenantId)).id;
}

export async function orderRefOf(rt: Runtime, ref: string, tenantId?: string) {
  return resolveOrder(rt.db, PLATFORM_ACCESS, ref, tenantId);
}

/** A team name or id, in the tenant of the alert or order it is given for. */
export async function teamIdOf(rt: Runtime, ref: string, tenantId: string, owner: 'alert' | 'order'): Promise<string> {
  return resolveField(rt.db, PLATFORM_ACCESS, 'team', ref, tenantId, '/teamId', owner);
}
