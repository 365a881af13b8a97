import type { Tenant } from '../../../generated/admin/types.gen.js';
import { AppError, type FieldError } from '../../lib/errors.js';
import type { IntakePolicy } from '../../db/tables/foundation.js';
import { findTenant, insertTenant, listTenants, updateTenant, type TenantRow } from '../../db/repositories/tenant.repository.js';
import type { ServiceDeps } from '../deps.js';

/** A tenant as the admin contract shows it. */
export type TenantView = Tenant;

export function tenantView(row: TenantRow): TenantView {
  return {
    id: row.id,
    name: row.name,
    ibgeCode: row.ibge_code,
    intakePolicy: row.intake_policy,
    sandbox: row.sandbox,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export interface CreateTenantInput {
  name: string;
  ibgeCode?: string | null;
  intakePolicy?: string;
  /** A partner's sandbox tenant (default false). */
  sandbox?: boolean;
}

function checkIntakePolicy(value: string, pointer: string, errors: FieldError[]): IntakePolicy | undefined {
  if (value === 'automatic' || value === 'manual') return value;
  errors.push({ pointer, message: 'must be automatic or manual' });
  return undefined;
}

export async function createTenant(deps: ServiceDeps, input: CreateTenantInput): Promise<TenantView> {
  const errors: FieldError[] = [];
  const name = input.name?.trim() ?? '';
  if (name.length < 1 || name.length > 200) errors.push({ pointer: '/name', message: 'must be 1 to 200 characters' });
  const ibge = input.ibgeCode?.trim() || null;
  if (ibge !== null && !/^[0-9]{7}$/.test(ibge)) errors.push({ pointer: '/ibgeCode', message: 'must be 7 digits' });
  const policy = input.intakePolicy === undefined ? 'automatic' : checkIntakePolicy(input.intakePolicy, '/intakePolicy', errors);
  if (errors.length > 0) throw new AppError('validation-failed', { count: errors.length }, errors);
  const row = await insertTenant(deps.db, { name, ibge_code: ibge, intake_policy: policy, sandbox: input.sandbox ?? false });
  return tenantView(row);
}

export async function getTenant(deps: ServiceDeps, id: string): Promise<TenantView> {
  const row = isUuid(id) ? await findTenant(deps.db, id) : undefined;
  if (!row) throw new AppError('not-found', { resource: `tenant ${id}` });
  return tenantView(row);
}

export async function setIntakePolicy(deps: ServiceDeps, id: string, policy: string): Promise<TenantView> {
  const errors: FieldError[] = [];
  const value = checkIntakePolicy(policy, '/intakePolicy', errors);
  if (!value) throw new AppError('validation-failed', { count: errors.length }, errors);
  const row = isUuid(id) ? await updateTenant(deps.db, id, { intake_policy: value }) : undefined;
  if (!row) throw new AppError('not-found', { resource: `tenant ${id}` });
  return tenantView(row);
}

export async function listAllTenants(deps: ServiceDeps): Promise<TenantView[]> {
  return (await listTenants(deps.db)).map(tenantView);
}

export function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}
