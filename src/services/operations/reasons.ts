import { AppError, type FieldError } from '../../lib/errors.js';
import type { Priority } from '../../db/tables/domain.js';
import { findExternalSystemByCode } from '../../db/repositories/external-system.repository.js';
import { findTenant } from '../../db/repositories/tenant.repository.js';
import {
  deleteReasonMapping,
  findReason,
  findReasonMapping,
  insertReason,
  listReasonMappings,
  listReasons as listReasonRows,
  upsertReasonMapping,
  type ReasonRow,
} from '../../db/repositories/operations/reason.repository.js';
import { cliActor, recordAudit, type Actor } from '../audit/index.js';
import { PLATFORM_ACCESS, requireTenantRole, type AdminAccess } from '../operators/index.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';


/** An internal reason of a tenant, as operators see it. */
export interface ReasonView {
  tenantId: string;
  code: string;
  namePt: string;
  nameEn: string;
  priority: Priority;
  slaHours: number;
  createdAt: string;
  updatedAt: string;
}

/** A partner reason code and the internal reason it maps to. */
export interface ReasonMappingView {
  partner: string;
  partnerCode: string;
  tenantId: string;
  reasonCode: string;
  /** What the partner means by the code; null when none. */
  description: string | null;
}

const PRIORITIES: readonly Priority[] = ['Low', 'Medium', 'High', 'Critical'];
const CODE_SHAPE = /^[A-Za-z0-9_.-]{1,64}$/;

export function reasonView(row: ReasonRow): ReasonView {
  return {
    tenantId: row.tenant_id,
    code: row.code,
    namePt: row.name_pt,
    nameEn: row.name_en,
    priority: row.priority,
    slaHours: row.sla_hours,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export interface CreateReasonInput {
  tenantId: string;
  code: string;
  namePt: string;
  nameEn: string;
  priority: string;
  slaHours: number | string;
}

async function requireTenant(deps: ServiceDeps, access: AdminAccess, tenantId: string, role: 'viewer' | 'city-admin'): Promise<void> {
  const resource = `tenant ${tenantId}`;
  if (!isUuid(tenantId)) throw new AppError('not-found', { resource });
  requireTenantRole(access, tenantId, role, resource);
  if (!(await findTenant(deps.db, tenantId))) throw new AppError('not-found', { resource });
}

/** A partner by code, visible to the caller with `role` on its tenant (404 as unknown otherwise). */
export async function requirePartner(deps: ServiceDeps, access: AdminAccess, code: string, role: 'viewer' | 'triager' | 'city-admin') {
  const resource = `partner ${code}`;
  const partner = await findExternalSystemByCode(deps.db, code);
  if (!partner) throw new AppError('not-found', { resource });
  requireTenantRole(access, partner.tenant_id, role, resource);
  return partner;
}

/** Adds an internal reason to a tenant's catalogue (priority and SLA feed the orders created from it). */
export async function createReason(deps: ServiceDeps, input: CreateReasonInput, by: Actor = cliActor()): Promise<ReasonView> {
  const errors: FieldError[] = [];
  const code = input.code?.trim() ?? '';
  if (!CODE_SHAPE.test(code)) errors.push({ pointer: '/code', message: 'must be 1 to 64 letters, digits, "_", "." or "-"' });
  const namePt = input.namePt?.trim() ?? '';
  const nameEn = input.nameEn?.trim() ?? '';
  if (namePt.length < 1 || namePt.length > 200) errors.push({ pointer: '/namePt', message: 'must be 1 to 200 characters' });
  if (nameEn.length < 1 || nameEn.length > 200) errors.push({ pointer: '/nameEn', message: 'must be 1 to 200 characters' });
  const priority = PRIORITIES.find((p) => p.toLowerCase() === String(input.priority ?? '').trim().toLowerCase());
  if (!priority) errors.push({ pointer: '/priority', message: `must be one of ${PRIORITIES.join(', ')}` });
  const slaHours = typeof input.slaHours === 'number' ? input.slaHours : /^\s*\d+\s*$/.test(String(input.slaHours)) ? Number(input.slaHours) : NaN;
  if (!Number.isInteger(slaHours) || slaHours < 1 || slaHours > 8760) errors.push({ pointer: '/slaHours', message: 'must be a whole number of hours from 1 to 8760' });
  if (errors.length > 0) throw new AppError('validation-failed', { count: errors.length }, errors);
  await requireTenant(deps, by.access, input.tenantId, 'city-admin');
  if (await findReason(deps.db, input.tenantId, code)) throw new AppError('conflict', { reason: `reason ${code} already exists in tenant ${input.tenantId}` });
  try {
    return await deps.db.transaction().execute(async (tx) => {
      const view = reasonView(await insertReason(tx, { tenant_id: input.tenantId, code, name_pt: namePt, name_en: nameEn, priority: priority!, sla_hours: slaHours }));
      await recordAudit(tx, by, { tenantId: input.tenantId, action: 'reason.create', entityType: 'tenant', entityId: input.tenantId, before: null, after: view });
      return view;
    });
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw new AppError('conflict', { reason: `reason ${code} already exists in tenant ${input.tenantId}` });
    throw err;
  }
}

export async function listReasons(deps: ServiceDeps, tenantId: string, access: AdminAccess = PLATFORM_ACCESS): Promise<{ reasons: ReasonView[]; mappings: ReasonMappingView[] }> {
  await requireTenant(deps, access, tenantId, 'viewer');
  const [reasons, mappings] = await Promise.all([listReasonRows(deps.db, tenantId), listReasonMappings(deps.db, tenantId)]);
  return {
    reasons: reasons.map(reasonView),
    mappings: mappings.map((m) => ({ partner: m.partner, partnerCode: m.partner_code, tenantId: m.tenant_id, reasonCode: m.reason_code, description: m.description })),
  };
}

/**
 * Maps a partner's reason code to one of its tenant's internal reasons (replacing an
 * earlier mapping of that code). Applies to requests received from now on; alerts
 * already waiting are reclassified only on request (applyReasonMapping). Audited with
 * the mapping before and after. `pointers` name the fields as the caller's surface does.
 */
export async function mapReason(
  deps: ServiceDeps,
  input: { partnerCode: string; from: string; to: string; /** undefined keeps it; null or blank removes it. */ description?: string | null },
  by: Actor = cliActor(),
  pointers: { from: string; to: string } = { from: '/from', to: '/to' },
): Promise<ReasonMappingView> {
  const from = input.from ?? '';
  if (from.trim().length < 1 || from.length > 100) {
    throw new AppError('validation-failed', { count: 1 }, [{ pointer: pointers.from, message: 'must be 1 to 100 characters' }]);
  }
  const description = input.description === undefined ? undefined : input.description?.trim() || null;
  if (description && description.length > 500) throw new AppError('validation-failed', { count: 1 }, [{ pointer: '/description', message: 'must be at most 500 characters' }]);
  const partner = await requirePartner(deps, by.access, input.partnerCode, 'city-admin');
  const reason = await findReason(deps.db, partner.tenant_id, input.to);
  if (!reason) throw new AppError('validation-failed', { count: 1 }, [{ pointer: pointers.to, message: `no reason "${input.to}" in the partner's tenant` }]);
  return deps.db.transaction().execute(async (tx) => {
    const before = await findReasonMapping(tx, partner.id, from);
    const row = await upsertReasonMapping(tx, { external_system_id: partner.id, partner_code: from, tenant_id: partner.tenant_id, reason_code: reason.code, description });
    await recordAudit(tx, by, {
      tenantId: partner.tenant_id,
      action: 'reason.map',
      entityType: 'partner',
      entityId: partner.id,
      before: before ? { partnerCode: from, reasonCode: before.reason_code, description: before.description } : null,
      after: { partnerCode: from, reasonCode: row.reason_code, description: row.description },
    });
    return { partner: partner.code, partnerCode: row.partner_code, tenantId: row.tenant_id, reasonCode: row.reason_code, description: row.description };
  });
}

/** Removes a mapping: that partner code falls back to EXTERNAL_OTHER. Audited when there was one. */
export async function unmapReason(deps: ServiceDeps, input: { partnerCode: string; from: string }, by: Actor = cliActor()): Promise<{ partner: string; partnerCode: string; removed: boolean }> {
  const partner = await requirePartner(deps, by.access, input.partnerCode, 'city-admin');
  return deps.db.transaction().execute(async (tx) => {
    const before = await findReasonMapping(tx, partner.id, input.from);
    const removed = await deleteReasonMapping(tx, partner.id, input.from);
    if (removed && before) {
      await recordAudit(tx, by, { tenantId: partner.tenant_id, action: 'reason.unmap', entityType: 'partner', entityId: partner.id, before: { partnerCode: input.from, reasonCode: before.reason_code }, after: null });
    }
    return { partner: partner.code, partnerCode: input.from, removed };
  });
}
