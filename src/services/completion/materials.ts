import type { Material, MaterialKind } from '../../../generated/admin/types.gen.js';
import { AppError, type FieldError } from '../../lib/errors.js';
import type { Tx } from '../../db/database.js';
import { recordAudit, type Actor } from '../audit/index.js';
import { requireTenantRole, type AdminAccess } from '../operators/index.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';
import type { CompletionMaterialTable } from '../../db/tables/completion.js';
import type { Selectable } from 'kysely';
import { findTenant } from '../../db/repositories/tenant.repository.js';

type MaterialRow = Selectable<CompletionMaterialTable>;

/** The caller's role on the tenant, and the tenant itself (a platform admin may name one that does not exist): 404 otherwise. */
async function requireTenant(deps: ServiceDeps, access: AdminAccess, tenantId: string, role: 'viewer' | 'city-admin'): Promise<void> {
  const resource = `tenant ${tenantId}`;
  requireTenantRole(access, tenantId, role, resource);
  if (!isUuid(tenantId) || !(await findTenant(deps.db, tenantId))) throw new AppError('not-found', { resource });
}

export function materialView(row: MaterialRow): Material {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    kind: row.kind,
    name: row.name,
    wattage: row.wattage,
    active: row.active,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** The city's materials, by kind then name; retired ones only when asked. */
export async function listMaterials(deps: ServiceDeps, access: AdminAccess, tenantId: string, includeRetired: boolean): Promise<Material[]> {
  await requireTenant(deps, access, tenantId, 'viewer');
  let q = deps.db.selectFrom('completion_material').selectAll().where('tenant_id', '=', tenantId);
  if (!includeRetired) q = q.where('active', '=', true);
  const rows = await q.orderBy('kind').orderBy('name').limit(1000).execute();
  return rows.map(materialView);
}

function invalid(pointer: string, message: string): AppError {
  const errors: FieldError[] = [{ pointer, message }];
  return new AppError('validation-failed', { count: 1 }, errors);
}

function cleanName(name: string): string {
  const text = name.trim().replace(/\s+/g, ' ');
  if (!text) throw invalid('/name', 'must not be blank');
  return text;
}

/** A unique-name violation reads as a 422 on /name (the index is on the lower-cased name). */
async function writeOrRefuse<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw invalid('/name', 'is already the name of another material of this city');
    throw err;
  }
}

export interface MaterialInput {
  kind?: MaterialKind;
  name?: string;
  wattage?: number | null;
  active?: boolean;
}

export async function createMaterial(deps: ServiceDeps, actor: Actor, tenantId: string, input: Required<Pick<MaterialInput, 'kind' | 'name'>> & MaterialInput): Promise<Material> {
  await requireTenant(deps, actor.access, tenantId, 'city-admin');
  const name = cleanName(input.name);
  return writeOrRefuse(() =>
    deps.db.transaction().execute(async (tx) => {
      const row = await tx.insertInto('completion_material').values({ tenant_id: tenantId, kind: input.kind, name, wattage: input.wattage ?? null }).returningAll().executeTakeFirstOrThrow();
      await recordAudit(tx, actor, { tenantId, action: 'material.create', entityType: 'tenant', entityId: tenantId, before: null, after: { materialId: row.id, kind: row.kind, name: row.name, wattage: row.wattage } });
      return materialView(row);
    }),
  );
}

async function lockMaterial(tx: Tx, tenantId: string, materialId: string): Promise<MaterialRow> {
  const row = isUuid(materialId) ? await tx.selectFrom('completion_material').selectAll().where('id', '=', materialId).where('tenant_id', '=', tenantId).forUpdate().executeTakeFirst() : undefined;
  if (!row) throw new AppError('not-found', { resource: `material ${materialId}` });
  return row;
}

export async function updateMaterial(deps: ServiceDeps, actor: Actor, tenantId: string, materialId: string, input: MaterialInput): Promise<Material> {
  await requireTenant(deps, actor.access, tenantId, 'city-admin');
  const name = input.name === undefined ? undefined : cleanName(input.name);
  return writeOrRefuse(() =>
    deps.db.transaction().execute(async (tx) => {
      const before = await lockMaterial(tx, tenantId, materialId);
      const patch = { ...(input.kind !== undefined && { kind: input.kind }), ...(name !== undefined && { name }), ...(input.wattage !== undefined && { wattage: input.wattage }), ...(input.active !== undefined && { active: input.active }) };
      const row = await tx.updateTable('completion_material').set({ ...patch, updated_at: new Date() }).where('id', '=', before.id).returningAll().executeTakeFirstOrThrow();
      await recordAudit(tx, actor, {
        tenantId,
        action: 'material.update',
        entityType: 'tenant',
        entityId: tenantId,
        before: { materialId: before.id, kind: before.kind, name: before.name, wattage: before.wattage, active: before.active },
        after: { materialId: row.id, kind: row.kind, name: row.name, wattage: row.wattage, active: row.active },
      });
      return materialView(row);
    }),
  );
}
