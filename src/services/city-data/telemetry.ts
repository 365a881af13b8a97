import type { IncomingHttpHeaders } from 'node:http';
import { AppError, type FieldError } from '../../lib/errors.js';
import { issueKey, keyMatches, parseKey } from '../../lib/api-key.js';
import type { Executor } from '../../db/database.js';
import { poleWritesSharedLock } from '../../db/repositories/city-data/pole.repository.js';
import { applyDeviceStates, type DeviceState } from '../../db/repositories/city-data/telemetry.repository.js';
import { findLiveTelemetryKey, insertTelemetryKey, listTelemetryKeys, revokeTelemetryKey, type TelemetryKeyRow } from '../../db/repositories/city-data/telemetry-key.repository.js';
import { findTenant } from '../../db/repositories/tenant.repository.js';
import type { ServiceDeps } from '../deps.js';
import { FairBudget } from '../../lib/budget.js';
import type { Config } from '../../config.js';
import { isUuid } from '../tenants/index.js';

/** Reports dated further ahead than this are refused: one wrong clock would freeze a device's state. */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000;
/** Largest batch of one call (the HTTP contract says the same). */
export const MAX_BATCH = 5000;
/** Seconds a telemetry system is asked to wait while a pole import of its tenant runs. */
const BUSY_RETRY_AFTER_SECONDS = 10;

export interface TelemetryReport {
  deviceIdentifier: string;
  online: boolean;
  relayOn: boolean | null;
  /** ISO 8601 instant. */
  reportedAt: string;
}

export interface RejectedReport {
  /** Position in the batch (0-based). */
  index: number;
  deviceIdentifier: string;
  reason: string;
}

export interface TelemetryResult {
  received: number;
  applied: number;
  stale: number;
  unknownDevices: string[];
  rejected: RejectedReport[];
}

export interface IngestOptions {
  /** Wait for a running pole import of the tenant (CLI) instead of answering 503 (HTTP). Default false. */
  waitForImport?: boolean;
  now?: Date;
}

const batchPlaces = new WeakMap<Config, FairBudget>();

/**
 * The places of telemetry batches applied at once (LUMEN_TELEMETRY_BATCHES), one budget
 * per configuration, which is one per process. A fleet's reports would otherwise take
 * every core the database has while partners and operators wait for theirs. Waiting
 * batches are served city by city in turn: a city whose fleet sends a thousand batches
 * delays another city's batch by one of its own, not by the thousand.
 */
function telemetryPlaces(config: Config): FairBudget {
  let places = batchPlaces.get(config);
  if (!places) {
    places = new FairBudget(config.telemetryBatches);
    batchPlaces.set(config, places);
  }
  return places;
}

/** Telemetry batches being applied and waiting for a place now (for tests and diagnostics). */
export function telemetryBatchesInProgress(config: Config): { applying: number; waiting: number; limit: number } {
  const places = telemetryPlaces(config);
  return { applying: places.inUse, waiting: places.waiting, limit: places.capacity };
}

/**
 * One batch of device reports for a tenant. Per device only the newest report counts,
 * and only when it is newer than the stored one; unknown identifiers are listed back
 * and never fail the batch. Each applied report stamps the device's pole (N5), so the
 * pole reappears for partners pulling by updatedSince.
 */
export async function ingestReports(deps: ServiceDeps, tenantId: string, reports: readonly TelemetryReport[], opts: IngestOptions = {}): Promise<TelemetryResult> {
  const now = (opts.now ?? new Date()).getTime();
  const rejected: RejectedReport[] = [];
  const newest = new Map<string, { state: DeviceState; at: number }>();
  reports.forEach((r, index) => {
    const at = Date.parse(r.reportedAt);
    if (!Number.isFinite(at)) {
      rejected.push({ index, deviceIdentifier: r.deviceIdentifier, reason: 'reportedAt is not an ISO 8601 date-time' });
      return;
    }
    if (at > now + MAX_CLOCK_SKEW_MS) {
      rejected.push({ index, deviceIdentifier: r.deviceIdentifier, reason: 'reportedAt is more than 5 minutes in the future' });
      return;
    }
    const prev = newest.get(r.deviceIdentifier);
    if (!prev || at >= prev.at) newest.set(r.deviceIdentifier, { state: { identifier: r.deviceIdentifier, online: r.online, relayOn: r.relayOn, reportedAt: new Date(at).toISOString() }, at });
  });

  const states = [...newest.values()].map((v) => v.state);
  const place = await telemetryPlaces(deps.config).acquire(tenantId, 1);
  const { known, applied } = await deps.db
    .transaction()
    .execute(async (tx) => {
      const result = await applyDeviceStates(tx, tenantId, states, poleWritesSharedLock(tenantId, opts.waitForImport ? 'wait' : 'try'));
      if (!result.locked) throw new AppError('unavailable', {}, undefined, { 'retry-after': String(BUSY_RETRY_AFTER_SECONDS) });
      return result;
    })
    .finally(() => place.release());

  const unknownDevices = states.map((s) => s.identifier).filter((id) => !known.has(id));
  const rejectedIndexes = new Set(rejected.map((r) => r.index));
  const unknownReports = reports.filter((r, i) => !rejectedIndexes.has(i) && !known.has(r.deviceIdentifier)).length;
  return {
    received: reports.length,
    applied: applied.size,
    stale: reports.length - rejected.length - unknownReports - applied.size,
    unknownDevices,
    rejected,
  };
}

export interface TelemetryPrincipal {
  readonly tenantId: string;
  readonly keyPrefix: string;
}

/** X-Api-Key with a live lmn_tel_ key, else 401 (partner keys included). */
export async function authenticateTelemetry(db: Executor, headers: IncomingHttpHeaders): Promise<TelemetryPrincipal> {
  const raw = headers['x-api-key'];
  const presented = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  const parsed = presented ? parseKey(presented) : null;
  if (!presented || parsed?.kind !== 'telemetry') throw new AppError('unauthorized');
  const keyId = parsed.keyId;
  const row = await findLiveTelemetryKey(db, keyId);
  if (!row || !keyMatches(presented, row.key_hash)) throw new AppError('unauthorized');
  return { tenantId: row.tenant_id, keyPrefix: row.key_prefix };
}

export interface TelemetryKeyView {
  id: string;
  tenantId: string;
  name: string;
  keyPrefix: string;
  createdAt: string;
  revokedAt: string | null;
}

const keyView = (row: TelemetryKeyRow): TelemetryKeyView => ({
  id: row.id,
  tenantId: row.tenant_id,
  name: row.name,
  keyPrefix: row.key_prefix,
  createdAt: row.created_at.toISOString(),
  revokedAt: row.revoked_at ? row.revoked_at.toISOString() : null,
});

async function requireTenant(deps: ServiceDeps, tenantId: string): Promise<void> {
  if (!isUuid(tenantId) || !(await findTenant(deps.db, tenantId))) throw new AppError('not-found', { resource: `tenant ${tenantId}` });
}

/** A new key for a tenant's telemetry system; the key itself is returned once. */
export async function createTelemetryKey(deps: ServiceDeps, input: { tenantId: string; name?: string }): Promise<TelemetryKeyView & { apiKey: string }> {
  const name = (input.name ?? 'telemetry').trim();
  const errors: FieldError[] = [];
  if (name.length < 1 || name.length > 100) errors.push({ pointer: '/name', message: 'must be 1 to 100 characters' });
  if (errors.length > 0) throw new AppError('validation-failed', { count: errors.length }, errors);
  await requireTenant(deps, input.tenantId);
  const issued = issueKey('telemetry', deps.config.isProduction);
  const row = await insertTelemetryKey(deps.db, { tenant_id: input.tenantId, name, key_id: issued.keyId, key_prefix: issued.keyPrefix, key_hash: issued.hash });
  return { ...keyView(row), apiKey: issued.key };
}

export async function listKeys(deps: ServiceDeps, tenantId: string): Promise<TelemetryKeyView[]> {
  await requireTenant(deps, tenantId);
  return (await listTelemetryKeys(deps.db, tenantId)).map(keyView);
}

export async function revokeKey(deps: ServiceDeps, prefixOrId: string): Promise<TelemetryKeyView> {
  const row = await revokeTelemetryKey(deps.db, prefixOrId.trim());
  if (!row) throw new AppError('not-found', { resource: `live telemetry key ${prefixOrId}` });
  return keyView(row);
}
