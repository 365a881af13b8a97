import { seedDemoCity, type DemoCity } from '../city-data/index.js';
import type { Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { createPartner, type CreatePartnerInput, type IssuedPartnerKey, type PartnerView } from '../partners/index.js';
import { createTenant, type TenantView } from '../tenants/index.js';

export interface SandboxResult {
  tenant: TenantView;
  partner: PartnerView & IssuedPartnerKey;
  city: DemoCity;
}

/**
 * A partner's sandbox: a demo city of its own (flagged sandbox, manual triage so that
 * every event type can be caused), the partner in it, whose key is lmn_test_, and the
 * demo city's poles, telegestors, team and orders. A partner that cannot be created
 * (a code already taken, a bad setting) leaves no sandbox tenant behind.
 */
export async function createSandboxPartner(deps: ServiceDeps, input: Omit<CreatePartnerInput, 'tenantId'>, actor?: Actor): Promise<SandboxResult> {
  const tenant = await createTenant(deps, { name: `Sandbox ${input.code ?? ''}`.trim().slice(0, 200), ibgeCode: null, intakePolicy: 'manual', sandbox: true });
  let partner: PartnerView & IssuedPartnerKey;
  try {
    partner = await createPartner(deps, { ...input, tenantId: tenant.id }, actor);
  } catch (err) {
    // The tenant holds nothing yet but the default reason its trigger wrote.
    await deps.db.transaction().execute(async (tx) => {
      await tx.deleteFrom('reason').where('tenant_id', '=', tenant.id).execute();
      await tx.deleteFrom('tenant').where('id', '=', tenant.id).where('sandbox', '=', true).execute();
    });
    throw err;
  }
  const city = await seedDemoCity(deps, tenant.id);
  return { tenant, partner, city };
}
