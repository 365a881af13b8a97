import type { Tenant } from '../../../generated/admin/types.gen.js';
import { AppError, type FieldError } from '../../lib/errors.js';
import type { IntakePolicy } from '../../db/tables/foundation.js';
import { findTenant, insertTenant, listTenants, updateTenant, type TenantRow } from '../../db/repositories/tenant.repository.js';
import type { ServiceDeps } from '../deps.js';
import { extentOf } from '../city-extent/index.js';
import { recordAudit, type Actor } from '../audit/index.js';
import { requirePlatformAdmin, requireTenantRole, visibleTenants, type AdminAccess } from '../operators/index.js';

/** A tenant as the admin contract shows it. */
export type TenantView = Tenant;

export function tenantView(row: TenantRow): TenantView {
  const where = extentOf(row);
  return {
    id: row.id,
    name: row.name,
    ibgeCode: row.ibge_code,
    intakePolicy: row.intake_policy,
    sandbox: row.sandbox,
    extent: where?.extent ?? null,
    extentSource: where?.source ?? null,
    locationCheckMeters: row.location_check_meters,
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

/** A tenant created by a platform admin (API) or the CLI, with its audit entry. */
export async function createTenantAs(deps: ServiceDeps, actor: Actor, input: CreateTenantInput): Promise<TenantView> {
  requirePlatformAdmin(actor.access);
  const row = checkTenantInput(input);
  return deps.db.transaction().execute(async (tx) => {
    const view = tenantView(await insertTenant(tx, row));
    await recordAudit(tx, actor, { tenantId: view.id, action: 'tenant.create', entityType: 'tenant', entityId: view.id, before: null, after: view });
    return view;
  });
}

export async function createTenant(deps: ServiceDeps, input: CreateTenantInput): Promise<TenantView> {
  return tenantView(await insertTenant(deps.db, checkTenantInput(input)));
}

function checkTenantInput(input: CreateTenantInput): Parameters<typeof insertTenant>[1] {
  const errors: FieldError[] = [];
  const name = input.name?.trim() ?? '';
  if (name.length < 1 || name.length > 200) errors.push({ pointer: '/name', message: 'must be 1 to 200 characters' });
  const ibge = input.ibgeCode?.trim() || null;
  if (ibge !== null && !/^[0-9]{7}$/.test(ibge)) errors.push({ pointer: '/ibgeCode', message: 'must be 7 digits' });
  const policy = input.intakePolicy === undefined ? 'automatic' : checkIntakePolicy(input.intakePolicy, '/intakePolicy', errors);
  if (errors.length > 0) throw new AppError('validation-failed', { count: errors.length }, errors);
  return { name, ibge_code: ibge, intake_policy: policy, sandbox: input.sandbox ?? false };
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
  return (await listTenants(deps.db, 'all')).map(tenantView);
}

/** The tenants the caller holds a role on (every one for a platform admin). */
export async function listVisibleTenants(deps: ServiceDeps, access: AdminAccess): Promise<TenantView[]> {
  return (await listTenants(deps.db, visibleTenants(access))).map(tenantView);
}

/** One tenant, when the caller holds a role on it; not-found as an unknown id otherwise. */
export async function showTenant(deps: ServiceDeps, access: AdminAccess, id: string): Promise<TenantView> {
  if (isUuid(id)) requireTenantRole(access, id, 'viewer', `tenant ${id}`);
  return getTenant(deps, id);
}

export function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}
