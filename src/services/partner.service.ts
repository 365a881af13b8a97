import { AppError, type FieldError } from '../lib/errors.js';
import { issueKey } from '../lib/api-key.js';
import { sealSecret } from '../lib/secret-box.js';
import { parseScopes } from '../lib/scopes.js';
import type { Scope, Transport } from '../db/tables/foundation.js';
import { findTenant } from '../db/repositories/tenant.repository.js';
import {
  findExternalSystemByCode,
  insertExternalSystem,
  listExternalSystems,
  lockExternalSystemByCode,
  updateExternalSystem,
  type ExternalSystemRow,
} from '../db/repositories/external-system.repository.js';
import { findLiveKeyPrefix, insertApiKey, revokeApiKeys } from '../db/repositories/api-key.repository.js';
import type { Executor, Tx } from '../db/database.js';
import type { ServiceDeps } from './deps.js';
import { isUuid } from './tenant.service.js';

/** What operators see of a partner. Secrets are never shown, only whether they are set. */
export interface PartnerView {
  id: string;
  code: string;
  tenantId: string;
  scopes: Scope[];
  transport: Transport;
  webhookUrl: string | null;
  webhookSecretSet: boolean;
  pollingUrl: string | null;
  pollingKeySet: boolean;
  pollingIntervalSeconds: number;
  enabled: boolean;
  keyPrefix: string | null;
  createdAt: string;
  updatedAt: string;
}

/** Returned once, when a key is issued. */
export interface IssuedPartnerKey {
  apiKey: string;
  keyPrefix: string;
}

export function partnerView(row: ExternalSystemRow, keyPrefix: string | null): PartnerView {
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
  if (u.protocol === 'https:') return null;
  if (u.protocol === 'http:' && allowLoopback) return null;
  return allowLoopback ? 'must be an http(s) URL' : 'must be an https URL';
}

async function issuePartnerKey(tx: Tx, deps: ServiceDeps, externalSystemId: string): Promise<IssuedPartnerKey> {
  const issued = issueKey('partner', deps.config.isProduction);
  await insertApiKey(tx, { external_system_id: externalSystemId, key_id: issued.keyId, key_prefix: issued.keyPrefix, key_hash: issued.hash });
  return { apiKey: issued.key, keyPrefix: issued.keyPrefix };
}

export async function createPartner(deps: ServiceDeps, input: CreatePartnerInput): Promise<PartnerView & IssuedPartnerKey> {
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

  const settings = checkDeliverySettings(deps, input, errors);
  if (errors.length > 0) throw new AppError('validation-failed', { count: errors.length }, errors);

  return deps.db.transaction().execute(async (tx) => {
    if (!(await findTenant(tx, input.tenantId))) throw new AppError('not-found', { resource: `tenant ${input.tenantId}` });
    if (await findExternalSystemByCode(tx, code)) throw new AppError('conflict', { reason: `partner code "${code}" is already taken` });
    let row: ExternalSystemRow;
    try {
      row = await insertExternalSystem(tx, {
        tenant_id: input.tenantId,
        code,
        scopes,
        transport: transport as Transport,
        ...settings,
      });
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new AppError('conflict', { reason: `partner code "${code}" is already taken` });
      throw err;
    }
    const key = await issuePartnerKey(tx, deps, row.id);
    return { ...partnerView(row, key.keyPrefix), ...key };
  });
}

/** Webhook and polling settings shared by create and update; secrets sealed here. */
export function checkDeliverySettings(
  deps: ServiceDeps,
  input: Pick<CreatePartnerInput, 'webhookUrl' | 'webhookSecret' | 'pollingUrl' | 'pollingKey' | 'pollingIntervalSeconds'>,
  errors: FieldError[],
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
    out.webhook_secret_enc = secret === null || secret === '' ? null : sealSecret(deps.config.secretKey, secret);
  }
  if (input.pollingUrl !== undefined) {
    const url = input.pollingUrl?.trim() || null;
    const problem = url ? checkOutboundUrl(url, allow) : null;
    if (problem) errors.push({ pointer: '/pollingUrl', message: problem });
    out.polling_url = url;
  }
  if (input.pollingKey !== undefined) {
    const key = input.pollingKey ?? null;
    out.polling_key_enc = key === null || key === '' ? null : sealSecret(deps.config.secretKey, key);
  }
  if (input.pollingIntervalSeconds !== undefined && input.pollingIntervalSeconds !== null) {
    const n = Number(input.pollingIntervalSeconds);
    if (!Number.isInteger(n) || n < 1 || n > 180) errors.push({ pointer: '/pollingIntervalSeconds', message: 'must be a whole number of seconds from 1 to 180' });
    else out.polling_interval_seconds = n;
  }
  return out;
}

async function requirePartner(db: Executor, code: string): Promise<ExternalSystemRow> {
  const row = await findExternalSystemByCode(db, code);
  if (!row) throw new AppError('not-found', { resource: `partner ${code}` });
  return row;
}

export async function getPartner(deps: ServiceDeps, code: string): Promise<PartnerView> {
  const row = await requirePartner(deps.db, code);
  return partnerView(row, (await findLiveKeyPrefix(deps.db, row.id)) ?? null);
}

export async function listPartners(deps: ServiceDeps, tenantId?: string): Promise<PartnerView[]> {
  const rows = await listExternalSystems(deps.db, tenantId);
  return Promise.all(rows.map(async (r) => partnerView(r, (await findLiveKeyPrefix(deps.db, r.id)) ?? null)));
}

/** Issues a new key and invalidates the previous one in the same transaction. */
export async function rotatePartnerKey(deps: ServiceDeps, code: string): Promise<PartnerView & IssuedPartnerKey> {
  return deps.db.transaction().execute(async (tx) => {
    const row = await lockExternalSystemByCode(tx, code);
    if (!row) throw new AppError('not-found', { resource: `partner ${code}` });
    await revokeApiKeys(tx, row.id);
    const key = await issuePartnerKey(tx, deps, row.id);
    return { ...partnerView(row, key.keyPrefix), ...key };
  });
}

export async function setPartnerEnabled(deps: ServiceDeps, code: string, enabled: boolean): Promise<PartnerView> {
  return deps.db.transaction().execute(async (tx) => {
    const row = await lockExternalSystemByCode(tx, code);
    if (!row) throw new AppError('not-found', { resource: `partner ${code}` });
    const updated = await updateExternalSystem(tx, row.id, { enabled });
    return partnerView(updated, (await findLiveKeyPrefix(tx, row.id)) ?? null);
  });
}
