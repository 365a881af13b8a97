import { userInfo } from 'node:os';
import { AppError, type FieldError } from '../../lib/errors.js';
import type { Tx } from '../../db/database.js';
import { insertAudit, listAudit, type AuditRow } from '../../db/repositories/audit.repository.js';
import type { AuditEntityType } from '../../db/tables/operations.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';
import { PLATFORM_ACCESS, visibleTenants, type AdminAccess } from '../operators/index.js';

/**
 * Who performs an operator action: an operator (console session or their own token),
 * a service token (API), a system user (CLI on the server) or a sandbox partner.
 */
export interface Actor {
  readonly kind: 'admin-token' | 'operator' | 'cli' | 'sandbox' | 'partner';
  /** The token's name, the operator's e-mail, the system user (or `--as` e-mail), the partner code. */
  readonly name: string;
  /** The admin token's id, when a token carried the action. */
  readonly tokenId?: string;
  /** The operator behind the action (session, their token, `lumen --as`). */
  readonly operatorId?: string;
  /** The HTTP request that carried the action, when there was one. */
  readonly requestId?: string;
  /** What the actor may reach: every service checks the rows it acts on against it. */
  readonly access: AdminAccess;
}

/** How an actor is written in status history and the audit log: admin-token:<name>, operator:<email>, cli:<user>, sandbox:<partner code> or partner:<partner code> (its own integration). */
export function actorLabel(actor: Actor): string {
  return `${actor.kind}:${actor.name}`.slice(0, 200);
}

/**
 * The CLI's actor: the system user running the command, with the local machine
 * administrator's reach (whoever runs it holds the database URL). `--as EMAIL` names the
 * operator instead (`cli:<email>`, and the operator's id in the audit log).
 */
export function cliActor(as?: { id: string; email: string }): Actor {
  if (as) return { kind: 'cli', name: as.email, operatorId: as.id, access: PLATFORM_ACCESS };
  let name = 'unknown';
  try {
    name = userInfo().username || name;
  } catch {
    // no passwd entry (some containers): keep "unknown"
  }
  return { kind: 'cli', name, access: PLATFORM_ACCESS };
}

export interface AuditEntry {
  tenantId: string | null;
  action: string;
  entityType: AuditEntityType;
  entityId: string;
  before: unknown;
  after: unknown;
  note?: string | null;
}

/** One audit row, in the caller's transaction (it commits with the change or not at all). */
export async function recordAudit(tx: Tx, actor: Actor, entry: AuditEntry): Promise<void> {
  await insertAudit(tx, {
    tenant_id: entry.tenantId,
    actor: actorLabel(actor),
    admin_token_id: actor.tokenId ?? null,
    operator_id: actor.operatorId ?? null,
    action: entry.action,
    entity_type: entry.entityType,
    entity_id: entry.entityId,
    before: entry.before === undefined || entry.before === null ? null : JSON.stringify(entry.before),
    after: entry.after === undefined || entry.after === null ? null : JSON.stringify(entry.after),
    note: entry.note ?? null,
    request_id: actor.requestId ?? null,
  });
}

export interface AuditEntryView {
  id: number;
  at: string;
  tenantId: string | null;
  actor: string;
  action: string;
  entityType: AuditEntityType;
  entityId: string;
  /** What a person calls the entity (a number, a name, a code); null when it no longer exists. */
  entityLabel: string | null;
  before: unknown;
  after: unknown;
  note: string | null;
  requestId: string | null;
}

export interface AuditPage {
  items: AuditEntryView[];
  /** Send back as `after` for the next page; null when this page is the last. */
  nextAfter: number | null;
}

function auditView(row: AuditRow & { entity_label: string | null }): AuditEntryView {
  return {
    id: row.id,
    at: row.at.toISOString(),
    tenantId: row.tenant_id,
    actor: row.actor,
    action: row.action,
    entityType: row.entity_type,
    entityId: row.entity_id,
    entityLabel: row.entity_label,
    before: row.before ?? null,
    after: row.after ?? null,
    note: row.note,
    requestId: row.request_id,
  };
}

export interface AuditListInput {
  tenantId?: string;
  since?: string;
  /** Only entries before this instant (ISO 8601). */
  until?: string;
  /** Only entries whose actor contains this text (an operator's e-mail, a token's name). */
  actor?: string;
  entityType?: string;
  entityId?: string;
  after?: number | string;
  limit?: number | string;
}

const ENTITY_TYPES: readonly AuditEntityType[] = ['tenant', 'team', 'alert', 'service_order', 'partner', 'admin_token', 'operator'];
export const AUDIT_DEFAULT_LIMIT = 100;
export const AUDIT_MAX_LIMIT = 1000;

/**
 * Audit entries oldest first, filtered; `limit` default 100, larger than 1000 cut to 1000.
 * Only entries of the caller's tenants; entries outside any tenant (operators,
 * platform-wide tokens, sign-ins) only for platform admins. A tenantId the caller cannot
 * see has no entries.
 */
export async function listAuditEntries(deps: ServiceDeps, access: AdminAccess, input: AuditListInput): Promise<AuditPage> {
  const errors: FieldError[] = [];
  if (input.tenantId !== undefined && !isUuid(input.tenantId)) errors.push({ pointer: '/tenantId', message: 'must be a tenant id (UUID)' });
  let since: Date | undefined;
  if (input.since !== undefined) {
    since = new Date(input.since);
    if (!/^\d{4}-\d\d-\d\d/.test(input.since) || Number.isNaN(since.getTime())) errors.push({ pointer: '/since', message: 'must be an ISO 8601 timestamp' });
  }
  let until: Date | undefined;
  if (input.until !== undefined) {
    until = new Date(input.until);
    if (!/^\d{4}-\d\d-\d\d/.test(input.until) || Number.isNaN(until.getTime())) errors.push({ pointer: '/until', message: 'must be an ISO 8601 timestamp' });
  }
  const actor = input.actor?.trim() || undefined;
  if (input.entityType !== undefined && !(ENTITY_TYPES as readonly string[]).includes(input.entityType)) errors.push({ pointer: '/entityType', message: `must be one of: ${ENTITY_TYPES.join(', ')}` });
  const after = input.after === undefined ? undefined : Number(input.after);
  if (after !== undefined && (!Number.isInteger(after) || after < 0)) errors.push({ pointer: '/after', message: 'must be a whole number' });
  let limit = input.limit === undefined ? AUDIT_DEFAULT_LIMIT : Number(input.limit);
  if (!Number.isInteger(limit) || limit < 1) errors.push({ pointer: '/limit', message: 'must be a whole number of at least 1' });
  limit = Math.min(limit, AUDIT_MAX_LIMIT);
  if (errors.length > 0) throw new AppError('invalid-parameter', {}, errors);
  const tenants = visibleTenants(access);
  if (input.tenantId !== undefined && tenants !== 'all' && !tenants.includes(input.tenantId)) return { items: [], nextAfter: null };
  const rows = await listAudit(deps.db, { tenants, tenantId: input.tenantId, since, until, actor, entityType: input.entityType as AuditEntityType | undefined, entityId: input.entityId, afterId: after, limit });
  const page = rows.slice(0, limit);
  return { items: page.map(auditView), nextAfter: rows.length > limit ? page[page.length - 1]!.id : null };
}
