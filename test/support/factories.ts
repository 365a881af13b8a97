import type { ServiceDeps } from '../../src/services/deps.js';
import { createTenant, type TenantView } from '../../src/services/tenant.service.js';
import { createPartner, type CreatePartnerInput } from '../../src/services/partner.service.js';
import { randomBytes } from 'node:crypto';

let counter = 0;
const unique = (prefix: string): string => `${prefix}-${process.pid}-${++counter}-${randomBytes(2).toString('hex')}`;

export async function makeTenant(deps: ServiceDeps, overrides: Partial<{ name: string; ibgeCode: string | null; intakePolicy: 'automatic' | 'manual' }> = {}): Promise<TenantView> {
  return createTenant(deps, { name: overrides.name ?? unique('City'), ibgeCode: overrides.ibgeCode === undefined ? '3550308' : overrides.ibgeCode, intakePolicy: overrides.intakePolicy ?? 'automatic' });
}

export async function makePartner(deps: ServiceDeps, overrides: Partial<CreatePartnerInput> = {}) {
  const tenantId = overrides.tenantId ?? (await makeTenant(deps)).id;
  return createPartner(deps, {
    tenantId,
    code: overrides.code ?? unique('partner'),
    scopes: overrides.scopes ?? ['canCreateServiceOrders', 'canReadCityData'],
    ...overrides,
  });
}
