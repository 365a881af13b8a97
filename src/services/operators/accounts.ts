import { AppError, type FieldError } from '../../lib/errors.js';
import type { Tx } from '../../db/database.js';
import { findTenant } from '../../db/repositories/tenant.repository.js';
import {
  deleteGrant,
  findOperator,
  findOperatorByEmail,
  grantsOfOperators,
  insertOperator,
  listOperators as listOperatorRows,
  lockOperator,
  updateOperator,
  upsertGrant,
  type OperatorGrantRow,
  type OperatorRow,
} from '../../db/repositories/operators/operator.repository.js';
import { endSessionsOf } from '../../db/repositories/operators/session.repository.js';
import { recordAudit, type Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';
import { isTenantRole, TENANT_ROLES, type AdminAccess, type TenantRole } from './access.js';
import { checkPassword, generatePassword, hashPassword } from './password.js';
import { administeredBy, administers, holdsBeyond, requireVisible, requireWhollyAdministered, visibleGrants, type Administered } from './city-scope.js';

/** One grant as operators see it. */
export interface GrantView {
  tenantId: string;
  tenantName: string;
  role: TenantRole;
}

/** What an operator looks like in lists and the admin API (never a password or its hash). */
export interface OperatorView {
  id: string;
  email: string;
  name: string;
  platformAdmin: boolean;
  grants: GrantView[];
  passwordSet: boolean;
  disabledAt: string | null;
  createdAt: string;
  updatedAt: string;
  /** For a city-admin caller: the operator also holds a role in a city the caller does not administer (or is a platform admin). */
  rolesElsewhere?: boolean;
}

/** The operator as `scope` may see it: only the grants of the cities it administers, and whether there are others. */
function scopedView(scope: Administered, row: OperatorRow, grants: readonly OperatorGrantRow[]): OperatorView {
  if (scope === 'all') return operatorView(row, grants);
  return { ...operatorView(row, visibleGrants(scope, grants)), rolesElsewhere: holdsBeyond(scope, row, grants) };
}

export function operatorView(row: OperatorRow, grants: readonly OperatorGrantRow[]): OperatorView {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    platformAdmin: row.platform_admin,
    grants: grants.filter((g) => g.operator_id === row.id).map((g) => ({ tenantId: g.tenant_id, tenantName: g.tenant_name, role: g.role })),
    passwordSet: row.password_hash !== null,
    disabledAt: row.disabled_at ? row.disabled_at.toISOString() : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** The audit log's picture of an operator: no password, only whether one is set. */
function snapshot(v: OperatorView): Record<string, unknown> {
  return { email: v.email, name: v.name, platformAdmin: v.platformAdmin, grants: v.grants.map((g) => ({ tenantId: g.tenantId, role: g.role })), passwordSet: v.passwordSet, disabledAt: v.disabledAt };
}

async function viewOf(db: ServiceDeps['db'] | Tx, row: OperatorRow): Promise<OperatorView> {
  return operatorView(row, await grantsOfOperators(db, [row.id]));
}

const EMAIL = /^[^@\s]+@[^@\s]+$/;

export function normalizeEmail(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const email = raw.trim().toLowerCase();
  return email.length >= 3 && email.length <= 254 && EMAIL.test(email) ? email : null;
}

/** An operator by id or e-mail (CLI arguments take either); not-found otherwise. */
async function resolveOperator(db: ServiceDeps['db'] | Tx, ref: string): Promise<OperatorRow> {
  const row = isUuid(ref) ? await findOperator(db, ref) : ref.includes('@') ? await findOperatorByEmail(db, ref) : undefined;
  if (!row) throw new AppError('not-found', { resource: `operator ${ref}` });
  return row;
}

async function lockResolved(tx: Tx, ref: string): Promise<OperatorRow> {
  const found = await resolveOperator(tx, ref);
  return (await lockOperator(tx, found.id))!;
}

export interface GrantInput {
  tenantId: string;
  role: string;
}

export interface CreateOperatorInput {
  email: string;
  name: string;
  platformAdmin?: boolean;
  grants?: readonly GrantInput[];
  /** Chosen by whoever creates the account; without one Lumen makes one, returned once. */
  password?: string;
}

function checkGrants(grants: readonly GrantInput[], errors: FieldError[], pointer = '/grants'): { tenantId: string; role: TenantRole }[] {
  const out: { tenantId: string; role: TenantRole }[] = [];
  grants.forEach((g, i) => {
    if (!isUuid(g?.tenantId ?? '')) errors.push({ pointer: `${pointer}/${i}/tenantId`, message: 'must be a tenant id (UUID)' });
    if (!isTenantRole(g?.role)) errors.push({ pointer: `${pointer}/${i}/role`, message: `must be one of: ${TENANT_ROLES.join(', ')}` });
    else if (isUuid(g.tenantId)) out.push({ tenantId: g.tenantId, role: g.role });
  });
  if (new Set(out.map((g) => g.tenantId)).size !== out.length) errors.push({ pointer, message: 'names a tenant twice' });
  return out;
}

/** Tenants named by grants must exist (422 with a pointer otherwise). */
async function requireTenants(tx: Tx, grants: readonly { tenantId: string }[], pointer = '/grants'): Promise<void> {
  const errors: FieldError[] = [];
  for (const [i, g] of grants.entries()) if (!(await findTenant(tx, g.tenantId))) errors.push({ pointer: `${pointer}/${i}/tenantId`, message: 'no such tenant' });
  if (errors.length > 0) throw new AppError('validation-failed', { count: errors.length }, errors);
}

/**
 * A new operator. Returns the password Lumen made, once, when none was given. A
 * city-admin invites with roles in the cities it administers only (at least one), and
 * never a platform admin.
 */
export async function createOperator(deps: ServiceDeps, actor: Actor, input: CreateOperatorInput): Promise<{ operator: OperatorView; initialPassword?: string }> {
  const scope = administeredBy(actor.access);
  if (input.platformAdmin && scope !== 'all') throw new AppError('platform-admin-only', { action: { 'pt-BR': 'criar um administrador da plataforma', en: 'create a platform admin' } });
  const errors: FieldError[] = [];
  const email = normalizeEmail(input.email);
  if (!email) errors.push({ pointer: '/email', message: 'must be an e-mail address (3 to 254 characters)' });
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (name.length < 1 || name.length > 200) errors.push({ pointer: '/name', message: 'must be 1 to 200 characters' });
  const grants = checkGrants(input.grants ?? [], errors);
  if (scope !== 'all') {
    if ((input.grants ?? []).length === 0) errors.push({ pointer: '/grants', message: 'must give a role in a city you administer' });
    // A city the caller does not administer is one it cannot name: 404 as an unknown id.
    for (const g of grants) if (!administers(scope, g.tenantId)) throw new AppError('not-found', { resource: `tenant ${g.tenantId}` });
  }
  if (input.password !== undefined) {
    try {
      checkPassword(input.password);
    } catch (err) {
      errors.push(...((err as AppError).errors ?? []));
    }
  }
  if (errors.length > 0) throw new AppError('validation-failed', { count: errors.length }, errors);
  const generated = input.password === undefined ? generatePassword() : undefined;
  const passwordHash = await hashPassword(input.password ?? generated!);
  const operator = await deps.db.transaction().execute(async (tx) => {
    await requireTenants(tx, grants);
    if (await findOperatorByEmail(tx, email!)) throw new AppError('conflict', { reason: `an operator with e-mail ${email} already exists` });
    let row: OperatorRow;
    try {
      row = await insertOperator(tx, { email: email!, name, password_hash: passwordHash, platform_admin: input.platformAdmin ?? false, disabled_at: null });
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new AppError('conflict', { reason: `an operator with e-mail ${email} already exists` });
      throw err;
    }
    for (const g of grants) await upsertGrant(tx, row.id, g.tenantId, g.role);
    const view = await viewOf(tx, row);
    await recordAudit(tx, actor, { tenantId: null, action: 'operator.create', entityType: 'operator', entityId: row.id, before: null, after: snapshot(view) });
    return scopedView(scope, row, await grantsOfOperators(tx, [row.id]));
  });
  return generated ? { operator, initialPassword: generated } : { operator };
}

/** Every operator (platform admin); for a city-admin, those with a role in its cities, showing only those roles. */
export async function listOperators(deps: ServiceDeps, access: AdminAccess): Promise<OperatorView[]> {
  const scope = administeredBy(access);
  const rows = await listOperatorRows(deps.db);
  const grants = await grantsOfOperators(deps.db, rows.map((r) => r.id));
  const byOperator = new Map<string, OperatorGrantRow[]>();
  for (const g of grants) byOperator.set(g.operator_id, [...(byOperator.get(g.operator_id) ?? []), g]);
  const out: OperatorView[] = [];
  for (const r of rows) {
    const own = byOperator.get(r.id) ?? [];
    if (scope === 'all' || own.some((g) => scope.has(g.tenant_id))) out.push(scopedView(scope, r, own));
  }
  return out;
}

export async function getOperator(deps: ServiceDeps, access: AdminAccess, ref: string): Promise<OperatorView> {
  const scope = administeredBy(access);
  const row = await resolveOperator(deps.db, ref);
  const grants = await grantsOfOperators(deps.db, [row.id]);
  requireVisible(scope, row, grants, ref);
  return scopedView(scope, row, grants);
}

/**
 * One change to an operator, audited, in one transaction. `check` runs on the locked
 * row and its grants before anything changes (the caller's scope rules).
 */
async function change(
  deps: ServiceDeps,
  actor: Actor,
  ref: string,
  action: string,
  apply: (tx: Tx, row: OperatorRow) => Promise<OperatorRow | null>,
  opts: { note?: string; check?: (scope: Administered, row: OperatorRow, grants: OperatorGrantRow[]) => void } = {},
): Promise<OperatorView> {
  const scope = administeredBy(actor.access);
  return deps.db.transaction().execute(async (tx) => {
    const row = await lockResolved(tx, ref);
    const grants = await grantsOfOperators(tx, [row.id]);
    requireVisible(scope, row, grants, ref);
    opts.check?.(scope, row, grants);
    const before = operatorView(row, grants);
    const changed = await apply(tx, row);
    if (!changed) return scopedView(scope, row, grants);
    const afterGrants = await grantsOfOperators(tx, [row.id]);
    const after = operatorView(changed, afterGrants);
    await recordAudit(tx, actor, { tenantId: null, action, entityType: 'operator', entityId: row.id, before: snapshot(before), after: snapshot(after), note: opts.note ?? null });
    return scopedView(scope, changed, afterGrants);
  });
}

const wholeAccount = { check: requireWhollyAdministered };

/**
 * Disables an operator: every session ends and every token they own stops at once (the
 * next request of any instance reads the operator's row). Disabling twice changes nothing.
 */
export async function disableOperator(deps: ServiceDeps, actor: Actor, ref: string): Promise<OperatorView> {
  return change(
    deps,
    actor,
    ref,
    'operator.disable',
    async (tx, row) => {
      if (row.disabled_at) return null;
      await endSessionsOf(tx, row.id);
      return updateOperator(tx, row.id, { disabled_at: new Date() });
    },
    wholeAccount,
  );
}

export async function enableOperator(deps: ServiceDeps, actor: Actor, ref: string): Promise<OperatorView> {
  return change(deps, actor, ref, 'operator.enable', async (tx, row) => (row.disabled_at ? updateOperator(tx, row.id, { disabled_at: null }) : null), wholeAccount);
}

/**
 * A new password made by Lumen, returned once, for an operator who lost theirs; their
 * open sessions end. The operator changes it after signing in.
 */
export async function resetOperatorPassword(deps: ServiceDeps, actor: Actor, ref: string): Promise<{ operator: OperatorView; password: string }> {
  const password = generatePassword();
  const hash = await hashPassword(password);
  const operator = await change(
    deps,
    actor,
    ref,
    'operator.reset-password',
    async (tx, row) => {
      await endSessionsOf(tx, row.id);
      return updateOperator(tx, row.id, { password_hash: hash });
    },
    { ...wholeAccount, note: 'new password made by Lumen (sessions ended)' },
  );
  return { operator, password };
}

/** A new password; the operator's open sessions end (sign in again with the new one). */
export async function setOperatorPassword(deps: ServiceDeps, actor: Actor, ref: string, password: string): Promise<OperatorView> {
  const hash = await hashPassword(checkPassword(password));
  return change(
    deps,
    actor,
    ref,
    'operator.set-password',
    async (tx, row) => {
      await endSessionsOf(tx, row.id);
      return updateOperator(tx, row.id, { password_hash: hash });
    },
    { ...wholeAccount, note: 'new password (sessions ended)' },
  );
}

/** Gives (or changes) an operator's role on a tenant; a city-admin only on a city it administers. */
export async function grantRole(deps: ServiceDeps, actor: Actor, ref: string, tenantId: string, role: string): Promise<OperatorView> {
  const errors: FieldError[] = [];
  const [grant] = checkGrants([{ tenantId, role }], errors, '');
  if (errors.length > 0) throw new AppError('validation-failed', { count: errors.length }, errors.map((e) => ({ ...e, pointer: e.pointer.replace(/^\/0/, '') })));
  return change(deps, actor, ref, 'operator.grant', async (tx, row) => {
    if (!administers(administeredBy(actor.access), grant!.tenantId)) throw cityNotAdministered(actor.access, tenantId);
    if (!(await findTenant(tx, grant!.tenantId))) throw new AppError('not-found', { resource: `tenant ${tenantId}` });
    await upsertGrant(tx, row.id, grant!.tenantId, grant!.role);
    return updateOperator(tx, row.id, {});
  });
}

/** Takes an operator's role on a tenant away; their tokens lose it at once. Revoking what is not granted changes nothing. */
export async function revokeRole(deps: ServiceDeps, actor: Actor, ref: string, tenantId: string): Promise<OperatorView> {
  if (!isUuid(tenantId ?? '')) throw new AppError('not-found', { resource: `tenant ${tenantId}` });
  return change(deps, actor, ref, 'operator.revoke', async (tx, row) => {
    if (!administers(administeredBy(actor.access), tenantId)) throw cityNotAdministered(actor.access, tenantId);
    return (await deleteGrant(tx, row.id, tenantId)) ? updateOperator(tx, row.id, {}) : null;
  });
}

/** A city the caller sees with a lower role: forbidden; one it cannot see at all: not found, as an unknown id. */
function cityNotAdministered(access: AdminAccess, tenantId: string): AppError {
  return access.grants.has(tenantId) ? new AppError('forbidden', { scopes: 'city-admin' }) : new AppError('not-found', { resource: `tenant ${tenantId}` });
}

/** Makes an operator a platform admin, or no longer one. */
export async function setPlatformAdmin(deps: ServiceDeps, actor: Actor, ref: string, platformAdmin: boolean): Promise<OperatorView> {
  if (!actor.access.platformAdmin) throw new AppError('platform-admin-only', { action: { 'pt-BR': 'tornar alguém administrador da plataforma', en: 'make someone a platform admin' } });
  return change(deps, actor, ref, 'operator.platform-admin', async (tx, row) => (row.platform_admin === platformAdmin ? null : updateOperator(tx, row.id, { platform_admin: platformAdmin })));
}

/** The operator an `--as EMAIL` names: must exist and be enabled. */
export async function operatorForCli(deps: ServiceDeps, email: string): Promise<OperatorRow> {
  const row = await findOperatorByEmail(deps.db, email);
  if (!row || row.disabled_at) throw new AppError('not-found', { resource: `operator ${email}` });
  return row;
}
