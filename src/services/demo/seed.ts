import { listTenants } from '../../db/repositories/tenant.repository.js';
import { seedDemoCity, type DemoCity } from '../city-data/index.js';
import { createPartner, type IssuedPartnerKey, type PartnerView } from '../partners/index.js';
import { createTenant, type TenantView } from '../tenants/index.js';
import type { ServiceDeps } from '../deps.js';
import { cliActor } from '../audit/index.js';
import { createOperator } from '../operators/index.js';

export interface DemoResult {
  tenant: TenantView;
  partner: PartnerView & IssuedPartnerKey;
  city: DemoCity;
}

/**
 * A demo city a newcomer can call at once: a tenant and a partner holding every
 * scope. Extended with poles, telegestors, a team and orders by the city-data seed.
 */
export async function seedDemo(deps: ServiceDeps, code = 'demo'): Promise<DemoResult> {
  const tenant = await createTenant(deps, { name: 'Demo City', ibgeCode: '3550308', intakePolicy: 'automatic' });
  const partner = await createPartner(deps, {
    tenantId: tenant.id,
    code,
    scopes: ['canCreateServiceOrders', 'canCreateAlerts', 'canReadCityData'],
    transport: 'polling',
  });
  const city = await seedDemoCity(deps, tenant.id);
  return { tenant, partner, city };
}

/** True when the database holds no tenant yet (a first start). */
export async function isEmpty(deps: ServiceDeps): Promise<boolean> {
  return (await listTenants(deps.db, 'all')).length === 0;
}

/** The e-mail of the demo operator made on a first start. */
export const DEMO_OPERATOR_EMAIL = 'demo@lumen.local';

/**
 * The demo operator of a first start: city-admin of the demo city, with a password made
 * by Lumen and returned this once (to be printed beside the demo key, never logged).
 */
export async function seedDemoOperator(deps: ServiceDeps, tenantId: string): Promise<{ email: string; password: string }> {
  const created = await createOperator(deps, cliActor(), { email: DEMO_OPERATOR_EMAIL, name: 'Demo Operator', grants: [{ tenantId, role: 'city-admin' }] });
  return { email: created.operator.email, password: created.initialPassword! };
}
