import { randomBytes, randomUUID } from 'node:crypto';
import { AppError, type FieldError } from '../../lib/errors.js';
import { issueKey } from '../../lib/api-key.js';
import { keyringOf, partnerSecretAad, sealSecret } from '../../lib/secret-box.js';
import { parseScopes } from '../../lib/scopes.js';
import type { Scope, Transport, WebhookSignatureScheme } from '../../db/tables/foundation.js';
import { STANDARD_SECRET_PREFIX, standardSecretProblem } from '../../lib/webhook-signature.js';
import { findTenant } from '../../db/repositories/tenant.repository.js';
import {
  findExternalSystemByCode,
  insertExternalSystem,
  listExternalSystems,
  lockExternalSystemByCode,
  updateExternalSystem,
  type ExternalSystemRow,
} from '../../db/repositories/external-system.repository.js';
import { findLiveKeyPrefix, findWorkingKeys, insertApiKey, keepNewestKeyUntil, revokeApiKeys } from '../../db/repositories/api-key.repository.js';
import type { Executor, Tx } from '../../db/database.js';
import type { RuntimeDeps, ServiceDeps } from '../deps.js';
import { isIP } from 'node:net';
import { addressRefusal } from '../../lib/outbound-http.js';
import type { EventType, Partner } from '../../../generated/admin/types.gen.js';
import { reconcilePartnerPoll } from '../partner-poll/index.js';
import { isUuid } from '../tenants/index.js';
import { recordAudit, type Actor } from '../audit/index.js';
import { canSee, inScope, requireTenantRole, visibleTenants, type AdminAccess } from '../operators/index.js';

/** What operators see of a partner (the admin contract's Partner). Secrets are never shown, only whether they are set. */
export type PartnerView = Partner;

/** Returned once, when a key is issued. */
export interface IssuedPartnerKey {
  apiKey: string;
  keyPrefix: string;
}

/** A partner's working keys as operators see them: the live key's prefix, and the previous key while a rotation's overlap lasts. */
export interface PartnerKeys {
  keyPrefix: string | null;
  previousKey: { keyPrefix: string; expiresAt: string } | null;
}

/** The working keys of a partner (see PartnerKeys). */
export async function partnerKeys(db: Executor, externalSystemId: string): Promise<PartnerKeys> {
  const [live, previous] = await findWorkingKeys(db, externalSystemId);
  return { keyPrefix: live?.key_prefix ?? null, previousKey: previous?.expires_at ? { keyPrefix: previous.key_prefix, expiresAt: previous.expires_at.toISOString() } : null };
}

export function partnerView(row: ExternalSystemRow, keys: string | null | PartnerKeys): PartnerView {
  const { keyPrefix, previousKey } = keys !== null && typeof keys === 'object' ? keys : { keyPrefix: keys, previousKey: null };
  return {
    id: row.id,
    code: row.code,
    tenantId: row.tenant_id,
    scopes: row.scopes,
    transport: row.transport,
    webhookUrl: row.webhook_url,
    webhookSecretSet: row.webhook_secret_enc !== null,
    pollingUrl: row.polling_url,
    pollingKeySet: row.polling_key_enc !== null,
    pollingIntervalSeconds: row.polling_interval_seconds,
    enabled: row.enabled,
    keyPrefix,
    previousKey,
    eventTypes: row.event_types as EventType[] | null,
    rateLimitPerMinute: row.rate_limit_per_minute,
    eventsMinIntervalSeconds: row.events_min_interval_seconds,
    signature: row.webhook_signature,
    previousWebhookSecretUntil: row.webhook_previous_secret_until && row.webhook_previous_secret_until.getTime() > Date.now() ? row.webhook_previous_secret_until.toISOString() : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export interface CreatePartnerInput {
  tenantId: string;
  code: string;
  scopes: string | readonly string[];
  transport?: string;
  webhookUrl?: string | null;
  webhookSecret?: string | null;
  /** Signature headers of its webhooks. Default both. */
  signature?: string;
  pollingUrl?: string | null;
  pollingKey?: string | null;
  pollingIntervalSeconds?: number | string | null;
}

const CODE_SHAPE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Checks a URL Lumen will call: absolute, https (http only when loopback is allowed). */
export function checkOutboundUrl(raw: string, allowLoopback: boolean): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && allowLoopback)) return allowLoopback ? 'must be an http(s) URL' : 'must be an https URL';
  // An address that can never be called is refused now rather than at the first call;
  // names are checked again on every connection, after DNS (src/lib/outbound-http.ts).
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const refusal = isIP(host) ? addressRefusal(host, allowLoopback) : null;
  if (refusal) return `must point at a public address, not a ${refusal}`;
  return null;
}

async function issuePartnerKey(tx: Tx, deps: ServiceDeps, externalSystemId: string): Promise<IssuedPartnerKey> {
  // A sandbox partner's key says so (lmn_test_), also in production.
  const sandbox = await tx
    .selectFrom('external_system as e')
    .innerJoin('tenant as t', 't.id', 'e.tenant_id')
    .select('t.sandbox')
    .where('e.id', '=', externalSystemId)
    .executeTakeFirst();
  const issued = issueKey('partner', deps.config.isProduction && !sandbox?.sandbox);
  await insertApiKey(tx, { external_system_id: externalSystemId, key_id: issued.keyId, key_prefix: issued.keyPrefix, key_hash: issued.hash });
  return { apiKey: issued.key, keyPrefix: issued.keyPrefix };
}

/**
 * A webhook secret made by Lumen: 32 random bytes in the Standard Webhooks form
 * (`whsec_` + base64), which that scheme's libraries take as it is and Lumen's own
 * scheme uses as text.
 */
export function generateWebhookSecret(): string {
  return STANDARD_SECRET_PREFIX + randomBytes(32).toString('base64');
}

const SIGNATURE_SCHEMES: readonly WebhookSignatureScheme[] = ['lumen', 'standard', 'both'];

function checkSignatureScheme(raw: string | undefined, errors: FieldError[]): WebhookSignatureScheme | undefined {
  if (raw === undefined) return undefined;
  const scheme = raw.trim() as WebhookSignatureScheme;
  if (SIGNATURE_SCHEMES.includes(scheme)) return scheme;
  errors.push({ pointer: '/signature', message: 'must be lumen, standard or both' });
  return undefined;
}

/**
 * A new partner and its key. A webhook partner created with a URL and no secret gets a
 * secret made by Lumen, returned here once (`webhookSecret`), so no secret has to be
 * typed on a command line. With an actor (the admin API, the CLI) the actor must be
 * city-admin of the tenant; a tenant it cannot see is not-found, as an unknown one.
 * Without one (seeding, tests) nothing is checked or audited.
 */
export async function createPartner(deps: ServiceDeps, input: CreatePartnerInput, actor?: Actor): Promise<PartnerView & IssuedPartnerKey & { webhookSecret?: string }> {
  const generated = (input.transport ?? 'webhook').trim() === 'webhook' && input.webhookUrl && !input.webhookSecret ? generateWebhookSecret() : undefined;
  if (generated) input = { ...input, webhookSecret: generated };
  const errors: FieldError[] = [];
  const code = input.code?.trim() ?? '';
  if (!CODE_SHAPE.test(code)) errors.push({ pointer: '/code', message: 'must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit' });
  if (!isUuid(input.tenantId ?? '')) errors.push({ pointer: '/tenantId', message: 'must be a tenant id (UUID)' });

  let scopes: Scope[] = [];
  try {
    scopes = parseScopes(input.scopes ?? []);
  } catch (err) {
    errors.push({ pointer: '/scopes', message: (err as Error).message });
  }

  const transport = (input.transport ?? 'webhook').trim();
  if (transport !== 'webhook' && transport !== 'polling') errors.push({ pointer: '/transport', message: 'must be webhook or polling' });
  const signature = checkSignatureScheme(input.signature, errors);

  // The id is chosen here: stored secrets are sealed with their row's id as associated data.
  const id = randomUUID();
  const settings = checkDeliverySettings(deps, input, errors, id);
  if (errors.length > 0) throw new AppError('validation-failed', { count: errors.length }, errors);

  if (actor) requireTenantRole(actor.access, input.tenantId, 'city-admin', `tenant ${input.tenantId}`);
  const created = await deps.db.transaction().execute(async (tx) => {
    if (!(await findTenant(tx, input.tenantId))) throw new AppError('not-found', { resource: `tenant ${input.tenantId}` });
    if (await findExternalSystemByCode(tx, code)) throw new AppError('conflict', { reason: `partner code "${code}" is already taken` });
    let row: ExternalSystemRow;
    try {
      row = await insertExternalSystem(tx, {
        id,
        tenant_id: input.tenantId,
        code,
        scopes,
        transport: transport as Transport,
        ...(signature ? { webhook_signature: signature } : {}),
        ...settings,
      });
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new AppError('conflict', { reason: `partner code "${code}" is already taken` });
      throw err;
    }
    const key = await issuePartnerKey(tx, deps, row.id);
    const view = partnerView(row, key.keyPrefix);
    if (actor) await recordAudit(tx, actor, { tenantId: row.tenant_id, action: 'partner.create', entityType: 'partner', entityId: row.id, before: null, after: view });
    return { ...view, ...key, ...(generated ? { webhookSecret: generated } : {}) };
  });
  await wakePoller(deps, created);
  return created;
}

/**
 * A polling partner's poller follows new settings at once (creation, enabling, a new
 * URL or a shorter interval) instead of at the next reconcile pass, about a minute
 * later. The change is committed already: if this fails, that pass still catches up.
 */
async function wakePoller(deps: ServiceDeps, view: PartnerView): Promise<void> {
  if (!('jobs' in deps) || view.transport !== 'polling' || !view.enabled || !view.pollingUrl) return;
  try {
    await reconcilePartnerPoll(deps as RuntimeDeps, view.id, view.pollingIntervalSeconds);
  } catch (err) {
    deps.log.warn({ err, partner: view.code }, 'could not reschedule the partner poller; the next reconcile pass will');
  }
}

/** Webhook and polling settings shared by create and update; secrets sealed here. */
export function checkDeliverySettings(
  deps: ServiceDeps,
  input: Pick<CreatePartnerInput, 'webhookUrl' | 'webhookSecret' | 'pollingUrl' | 'pollingKey' | 'pollingIntervalSeconds'>,
  errors: FieldError[],
  /** The partner's row id: bound to its sealed secrets (they open only there). */
  partnerId: string,
): { webhook_url?: string | null; webhook_secret_enc?: string | null; polling_url?: string | null; polling_key_enc?: string | null; polling_interval_seconds?: number } {
  const out: ReturnType<typeof checkDeliverySettings> = {};
  const allow = deps.config.allowLoopback;
  if (input.webhookUrl !== undefined) {
    const url = input.webhookUrl?.trim() || null;
    const problem = url ? checkOutboundUrl(url, allow) : null;
    if (problem) errors.push({ pointer: '/webhookUrl', message: problem });
    out.webhook_url = url;
  }
  if (input.webhookSecret !== undefined) {
    const secret = input.webhookSecret ?? null;
    if (secret !== null && secret.length < 16) errors.push({ pointer: '/webhookSecret', message: 'must be at least 16 characters' });
    else if (secret !== null && standardSecretProblem(secret)) errors.push({ pointer: '/webhookSecret', message: standardSecretProblem(secret)! });
    out.webhook_secret_enc = secret === null || secret === '' ? null : sealSecret(keyringOf(deps.config), secret, partnerSecretAad(partnerId, 'webhook_secret_enc'));
  }
  if (input.pollingUrl !== undefined) {
    const url = input.pollingUrl?.trim() || null;
    const problem = url ? checkOutboundUrl(url, allow) : null;
    if (problem) errors.push({ pointer: '/pollingUrl', message: problem });
    out.polling_url = url;
  }
  if (input.pollingKey !== undefined) {
    const key = input.pollingKey ?? null;
    out.polling_key_enc = key === null || key === '' ? null : sealSecret(keyringOf(deps.config), key, partnerSecretAad(partnerId, 'polling_key_enc'));
  }
  if (input.pollingIntervalSeconds !== undefined && input.pollingIntervalSeconds !== null) {
    const n = Number(input.pollingIntervalSeconds);
    if (!Number.isInteger(n) || n < 1 || n > 180) errors.push({ pointer: '/pollingIntervalSeconds', message: 'must be a whole number of seconds from 1 to 180' });
    else out.polling_interval_seconds = n;
  }
  return out;
}

export async function getPartner(deps: ServiceDeps, access: AdminAccess, code: string): Promise<PartnerView> {
  const row = inScope(access, await findExternalSystemByCode(deps.db, code), 'viewer', `partner ${code}`);
  return partnerView(row, await partnerKeys(deps.db, row.id));
}

/** Partners of the caller's tenants, or of one of them; a tenant the caller cannot see has none. */
export async function listPartners(deps: ServiceDeps, access: AdminAccess, tenantId?: string): Promise<PartnerView[]> {
  if (tenantId !== undefined && !canSee(access, tenantId)) return [];
  const rows = await listExternalSystems(deps.db, visibleTenants(access), tenantId);
  return Promise.all(rows.map(async (r) => partnerView(r, await partnerKeys(deps.db, r.id))));
}

/** The longest a replaced API key may keep working after a rotation: 7 days. */
export const MAX_KEY_OVERLAP_SECONDS = 7 * 86_400;

export interface RotatePartnerKeyInput {
  /** Seconds the replaced key keeps working; default 0: it stops at once, as the interface says. */
  overlapSeconds?: number | string;
}

/**
 * Issues a new key. Without an overlap the previous key stops working in the same
 * transaction (the interface's rule); with one it keeps working until then (its
 * answers carry `Lumen-Key-Expires`), and a key left over from an earlier overlap stops
 * at once: never more than two working keys.
 */
export async function rotatePartnerKey(deps: ServiceDeps, code: string, actor?: Actor, input: RotatePartnerKeyInput = {}): Promise<PartnerView & IssuedPartnerKey> {
  const overlap = input.overlapSeconds === undefined || input.overlapSeconds === '' ? 0 : Number(input.overlapSeconds);
  if (!Number.isInteger(overlap) || overlap < 0 || overlap > MAX_KEY_OVERLAP_SECONDS) {
    throw new AppError('validation-failed', { count: 1 }, [{ pointer: '/overlapSeconds', message: `must be a whole number of seconds from 0 to ${MAX_KEY_OVERLAP_SECONDS}` }]);
  }
  return deps.db.transaction().execute(async (tx) => {
    const found = await lockExternalSystemByCode(tx, code);
    const row = actor ? inScope(actor.access, found, 'city-admin', `partner ${code}`) : found;
    if (!row) throw new AppError('not-found', { resource: `partner ${code}` });
    const previousPrefix = (await findLiveKeyPrefix(tx, row.id)) ?? null;
    const kept = overlap > 0 ? await keepNewestKeyUntil(tx, row.id, new Date(Date.now() + overlap * 1000)) : (await revokeApiKeys(tx, row.id), undefined);
    const key = await issuePartnerKey(tx, deps, row.id);
    const previousKey = kept ? { keyPrefix: kept.key_prefix, expiresAt: kept.expires_at.toISOString() } : null;
    if (actor) {
      await recordAudit(tx, actor, {
        tenantId: row.tenant_id,
        action: 'partner.rotate-key',
        entityType: 'partner',
        entityId: row.id,
        before: { keyPrefix: previousPrefix },
        after: { keyPrefix: key.keyPrefix, previousKeyExpiresAt: previousKey?.expiresAt ?? null },
      });
    }
    return { ...partnerView(row, { keyPrefix: key.keyPrefix, previousKey }), ...key };
  });
}

export async function setPartnerEnabled(deps: ServiceDeps, code: string, enabled: boolean, actor?: Actor): Promise<PartnerView> {
  const view = await deps.db.transaction().execute(async (tx) => {
    const found = await lockExternalSystemByCode(tx, code);
    const row = actor ? inScope(actor.access, found, 'city-admin', `partner ${code}`) : found;
    if (!row) throw new AppError('not-found', { resource: `partner ${code}` });
    const updated = await updateExternalSystem(tx, row.id, { enabled });
    if (actor && row.enabled !== enabled) {
      await recordAudit(tx, actor, { tenantId: row.tenant_id, action: 'partner.update', entityType: 'partner', entityId: row.id, before: { enabled: row.enabled }, after: { enabled } });
    }
    return partnerView(updated, (await findLiveKeyPrefix(tx, row.id)) ?? null);
  });
  await wakePoller(deps, view);
  return view;
}

export interface UpdatePartnerInput {
  scopes?: string | readonly string[];
  transport?: string;
  webhookUrl?: string | null;
  webhookSecret?: string | null;
  pollingUrl?: string | null;
  pollingKey?: string | null;
  pollingIntervalSeconds?: number | string | null;
  /** null = every event type; otherwise a comma list or an array of the N6 types. */
  eventTypes?: string | readonly string[] | null;
  /** null = the service default. */
  rateLimitPerMinute?: number | string | null;
  /** null = no minimum. */
  eventsMinIntervalSeconds?: number | string | null;
  signature?: string;
  enabled?: boolean;
}

export const EVENT_TYPES = ['ServiceOrder.Created', 'ServiceOrder.Completed', 'ServiceOrder.StatusChanged', 'ServiceOrder.Cancelled', 'Alert.Cancelled'] as const;

function optionalInteger(raw: number | string | null, min: number, max: number, pointer: string, errors: FieldError[]): number | null {
  if (raw === null || raw === '') return null;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    errors.push({ pointer, message: `must be a whole number from ${min} to ${max}, or null` });
    return null;
  }
  return n;
}

/** What the audit log keeps of a partner: its settings, secrets only as set or not. */
function partnerSnapshot(v: PartnerView): Record<string, unknown> {
  const { id: _id, createdAt: _c, updatedAt: _u, keyPrefix: _k, ...settings } = v;
  return settings;
}

/**
 * Changes only the settings given (undefined = keep). Secrets are sealed; the audit
 * entry records which settings changed, with secrets only as set or not.
 */
export async function updatePartner(deps: ServiceDeps, code: string, input: UpdatePartnerInput, actor: Actor): Promise<PartnerView> {
  const errors: FieldError[] = [];
  const patch: Parameters<typeof updateExternalSystem>[2] = {};
  if (input.scopes !== undefined) {
    try {
      patch.scopes = parseScopes(input.scopes);
    } catch (err) {
      errors.push({ pointer: '/scopes', message: (err as Error).message });
    }
  }
  if (input.transport !== undefined) {
    const transport = input.transport.trim();
    if (transport !== 'webhook' && transport !== 'polling') errors.push({ pointer: '/transport', message: 'must be webhook or polling' });
    else patch.transport = transport;
  }
  const sealsSecret = (input.webhookSecret ?? input.pollingKey ?? null) !== null;
  const existing = sealsSecret ? inScope(actor.access, await findExternalSystemByCode(deps.db, code), 'city-admin', `partner ${code}`) : undefined;
  Object.assign(patch, checkDeliverySettings(deps, input, errors, existing?.id ?? ''));
  if (input.pollingIntervalSeconds === null) errors.push({ pointer: '/pollingIntervalSeconds', message: 'must be a whole number of seconds from 1 to 180' });
  if (input.eventTypes !== undefined) {
    if (input.eventTypes === null) patch.event_types = null;
    else {
      const names = (typeof input.eventTypes === 'string' ? input.eventTypes.split(',') : input.eventTypes).map((t) => t.trim()).filter(Boolean);
      const unknown = names.filter((n) => !(EVENT_TYPES as readonly string[]).includes(n));
      if (unknown.length > 0) errors.push({ pointer: '/eventTypes', message: `unknown event type(s): ${unknown.join(', ')} (known: ${EVENT_TYPES.join(', ')})` });
      else patch.event_types = [...new Set(names)];
    }
  }
  if (input.rateLimitPerMinute !== undefined) patch.rate_limit_per_minute = optionalInteger(input.rateLimitPerMinute, 1, 1_000_000, '/rateLimitPerMinute', errors);
  if (input.eventsMinIntervalSeconds !== undefined) patch.events_min_interval_seconds = optionalInteger(input.eventsMinIntervalSeconds, 1, 180, '/eventsMinIntervalSeconds', errors);
  const signature = checkSignatureScheme(input.signature, errors);
  if (signature) patch.webhook_signature = signature;
  if (input.enabled !== undefined) patch.enabled = input.enabled;
  if (errors.length === 0 && Object.keys(patch).length === 0) errors.push({ pointer: '', message: 'give at least one setting to change' });
  if (errors.length > 0) throw new AppError('validation-failed', { count: errors.length }, errors);

  const updated = await deps.db.transaction().execute(async (tx) => {
    const row = inScope(actor.access, await lockExternalSystemByCode(tx, code), 'city-admin', `partner ${code}`);
    const prefix = (await findLiveKeyPrefix(tx, row.id)) ?? null;
    const updated = await updateExternalSystem(tx, row.id, patch);
    const before = partnerSnapshot(partnerView(row, prefix));
    const after = partnerSnapshot(partnerView(updated, prefix));
    const changed = Object.keys(after).filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
    // A new secret is a change even when "set" stays true.
    if (input.webhookSecret && !changed.includes('webhookSecretSet')) changed.push('webhookSecretSet');
    if (input.pollingKey && !changed.includes('pollingKeySet')) changed.push('pollingKeySet');
    if (changed.length > 0) {
      await recordAudit(tx, actor, {
        tenantId: row.tenant_id,
        action: 'partner.update',
        entityType: 'partner',
        entityId: row.id,
        before: Object.fromEntries(changed.map((k) => [k, before[k]])),
        after: Object.fromEntries(changed.map((k) => [k, after[k]])),
        note: input.webhookSecret || input.pollingKey ? `new secret(s): ${[input.webhookSecret ? 'webhookSecret' : null, input.pollingKey ? 'pollingKey' : null].filter(Boolean).join(', ')}` : null,
      });
    }
    return partnerView(updated, prefix);
  });
  await wakePoller(deps, updated);
  return updated;
}
