import type { AlertGroup, AlertGrouping } from '../../../generated/admin/types.gen.js';
import { AppError, type FieldError } from '../../lib/errors.js';
import type { Database, Executor } from '../../db/database.js';
import { findAlert } from '../../db/repositories/intake/alert.repository.js';
import {
  findGroupingSettings,
  groupedInboxHiddenUnless,
  neighboursOfAlerts,
  poleOfAlert,
  supplyFaultPoles,
  updateGroupingSettings,
  type GroupingSettings,
  type NeighbourRow,
} from '../../db/repositories/operations/alert-group.repository.js';
import { recordAudit, type Actor } from '../audit/index.js';
import { requireTenantRole, type AdminAccess } from '../operators/index.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';
import type { Ref } from './resolve.js';

/**
 * Groups of Pending alerts (issues 23 §1 and 24 §2; the rule is in
 * alert-group.repository.ts and docs/triage.md). Nothing is stored: a group is read
 * from the alerts as they are, so an alert that leaves Pending leaves its group at
 * once. One order for a group is the bulk create-order (bulk-triage.ts), all or nothing.
 */

export const GROUP_MAX_ITEMS = 500;

/** Per database: each city's left-out alerts, with the inputs they were computed from (most recently used last). */
const keptHidden = new WeakMap<Database, Map<string, { inputs: string; ids: readonly string[] }>>();
/** Cities whose lists a process keeps (a list is at most a few thousand ids). */
const KEPT_CITIES = 64;

/**
 * The alerts of a city that the grouped inbox leaves out (groupedInboxHiddenQuery).
 * Computing them reads every Pending alert of the city and their neighbours (about
 * 100 ms for 10,000); an inbox is read far more often than its city changes. So each
 * process keeps the last list per city with the fingerprint of everything it was
 * computed from (groupedInboxInputs: the Pending alerts, the dark-pole records, the
 * poles' revision, the settings), and every request reads the fingerprint again
 * (groupedInboxHiddenUnless): the same inputs, the kept list; any change, on any
 * instance, a new list read with its inputs from one statement's snapshot. Nothing is ever served
 * from a list whose inputs differ from the database's at the time of the request.
 */
export async function inboxHiddenAlerts(db: Database, tenantId: string, poleMeters: number): Promise<readonly string[]> {
  let cities = keptHidden.get(db);
  if (!cities) keptHidden.set(db, (cities = new Map()));
  const key = `${tenantId} ${poleMeters}`;
  const known = cities.get(key);
  const read = await groupedInboxHiddenUnless(db, tenantId, poleMeters, known?.inputs ?? null);
  const kept = read.ids === null && known ? known : { inputs: read.inputs, ids: read.ids ?? [] };
  cities.delete(key);
  cities.set(key, kept);
  if (cities.size > KEPT_CITIES) cities.delete(cities.keys().next().value!);
  return kept.ids;
}

export type GroupSummary = NonNullable<import('../../../generated/admin/types.gen.js').AlertPage['groups']>[number];

function address(r: NeighbourRow): string {
  return r.address_number ? `${r.address_street}, ${r.address_number}` : r.address_street;
}

/** For each of `ids` with neighbours: how many, the kind, whether all are on its pole, a shared circuit. */
export async function groupSummaries(db: Executor, poleMeters: number, tenantId: string, ids: readonly string[]): Promise<GroupSummary[]> {
  const rows = await neighboursOfAlerts(db, tenantId, ids, poleMeters);
  const by = new Map<string, NeighbourRow[]>();
  for (const r of rows) by.set(r.of_id, [...(by.get(r.of_id) ?? []), r]);
  return ids
    .filter((id) => by.has(id))
    .map((id) => {
      const n = by.get(id)!;
      const circuits = new Set(n.map((r) => r.circuit));
      const circuit = circuits.size === 1 ? [...circuits][0]! : null;
      return { alertId: id, kind: n.some((r) => r.supply) ? 'supply-fault' : 'duplicate', others: n.length, samePole: n.every((r) => r.same_pole), circuit };
    });
}

/** The Pending alerts grouped with one alert; empty for an alert that is not Pending. */
export async function alertGroup(deps: ServiceDeps, access: AdminAccess, ref: Ref): Promise<AlertGroup> {
  requireTenantRole(access, ref.tenantId, 'viewer', `alert ${ref.id}`);
  const alert = (await findAlert(deps.db, ref.id))!;
  const pm = deps.config.poleMatchMeters;
  const [rows, pole] = await Promise.all([neighboursOfAlerts(deps.db, alert.tenant_id, [alert.id], pm), poleOfAlert(deps.db, alert.id, pm)]);
  const items = rows.slice(0, GROUP_MAX_ITEMS).map((r) => ({
    alertId: r.id,
    alertNumber: Number(r.alert_number),
    address: address(r),
    description: r.description,
    priority: r.priority as AlertGroup['items'][number]['priority'],
    createdAt: r.created_at.toISOString(),
    kind: (r.supply ? 'supply-fault' : 'duplicate') as AlertGroup['items'][number]['kind'],
    samePole: r.same_pole,
    distanceMeters: r.distance_m === null ? null : Math.round(r.distance_m * 10) / 10,
    circuit: r.circuit,
  }));
  return {
    alertId: alert.id,
    kind: items.length === 0 ? null : items.some((i) => i.kind === 'supply-fault') ? 'supply-fault' : 'duplicate',
    pole: pole ? { code: pole.code, circuit: pole.circuit } : null,
    items,
  };
}

function view(s: GroupingSettings): Required<AlertGrouping> {
  return {
    duplicateRadiusMeters: s.duplicate_radius_meters,
    duplicateWindowHours: s.duplicate_window_hours,
    supplyFaultRadiusMeters: s.supply_fault_radius_meters,
    supplyFaultWindowMinutes: s.supply_fault_window_minutes,
  };
}

export async function getAlertGrouping(deps: ServiceDeps, access: AdminAccess, tenantId: string): Promise<Required<AlertGrouping>> {
  const resource = `tenant ${tenantId}`;
  if (!isUuid(tenantId)) throw new AppError('not-found', { resource });
  requireTenantRole(access, tenantId, 'viewer', resource);
  const s = await findGroupingSettings(deps.db, tenantId);
  if (!s) throw new AppError('not-found', { resource });
  return view(s);
}

const LIMITS: Record<keyof AlertGrouping, [keyof GroupingSettings, number, number, string]> = {
  duplicateRadiusMeters: ['duplicate_radius_meters', 1, 1000, 'metres'],
  duplicateWindowHours: ['duplicate_window_hours', 1, 720, 'hours'],
  supplyFaultRadiusMeters: ['supply_fault_radius_meters', 1, 5000, 'metres'],
  supplyFaultWindowMinutes: ['supply_fault_window_minutes', 1, 1440, 'minutes'],
};

/** A city-admin changes any of the four settings; audited with before and after. */
export async function setAlertGrouping(deps: ServiceDeps, actor: Actor, tenantId: string, input: AlertGrouping): Promise<Required<AlertGrouping>> {
  const resource = `tenant ${tenantId}`;
  const errors: FieldError[] = [];
  const patch: Partial<GroupingSettings> = {};
  for (const [field, [column, lo, hi, unit]] of Object.entries(LIMITS) as [keyof AlertGrouping, (typeof LIMITS)[keyof AlertGrouping]][]) {
    const v = input[field];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) errors.push({ pointer: `/${field}`, message: `must be a whole number of ${unit} from ${lo} to ${hi}` });
    else patch[column] = v;
  }
  if (errors.length === 0 && Object.keys(patch).length === 0) errors.push({ pointer: '', message: `give at least one of ${Object.keys(LIMITS).join(', ')}` });
  if (errors.length > 0) throw new AppError('validation-failed', { count: errors.length }, errors);
  if (!isUuid(tenantId)) throw new AppError('not-found', { resource });
  requireTenantRole(actor.access, tenantId, 'city-admin', resource);
  return deps.db.transaction().execute(async (tx) => {
    const before = await tx.selectFrom('tenant').select(['duplicate_radius_meters', 'duplicate_window_hours', 'supply_fault_radius_meters', 'supply_fault_window_minutes']).where('id', '=', tenantId).forUpdate().executeTakeFirst();
    if (!before) throw new AppError('not-found', { resource });
    const after = await updateGroupingSettings(tx, tenantId, patch);
    await recordAudit(tx, actor, { tenantId, action: 'tenant.set-alert-grouping', entityType: 'tenant', entityId: tenantId, before: view(before), after: view(after) });
    return view(after);
  });
}

/** The dark poles of suspected supply faults, for the map (at most 2000). */
export async function supplyFaultMarkers(deps: ServiceDeps, access: AdminAccess, tenantId: string) {
  const resource = `tenant ${tenantId}`;
  if (!isUuid(tenantId)) throw new AppError('not-found', { resource });
  requireTenantRole(access, tenantId, 'viewer', resource);
  // A city that does not exist is not found, also for a platform admin (not an empty list).
  if (!(await findGroupingSettings(deps.db, tenantId))) throw new AppError('not-found', { resource });
  const rows = await supplyFaultPoles(deps.db, tenantId, deps.config.poleMatchMeters);
  return { items: rows.map((r) => ({ alertId: r.alert_id, alertNumber: Number(r.alert_number), latitude: r.latitude, longitude: r.longitude, poleCode: r.code, circuit: r.circuit, others: r.neighbours })) };
}
