import { randomUUID } from 'node:crypto';
import type { IntakeResponse } from '../../../generated/partner/types.gen.js';
import type { RuntimeDeps } from '../deps.js';
import type { Tx } from '../../db/database.js';
import type { Scope } from '../../db/tables/foundation.js';
import { findAlertByProtocol, lockNames, type AlertRow, type VersionedAlertRow } from '../../db/repositories/intake/alert.repository.js';
import { listAlertAttachments, type AlertAttachmentRow } from '../../db/repositories/intake/attachment.repository.js';
import { findIdempotencyKey, insertIdempotencyKey, type IdempotencyKeyRow } from '../../db/repositories/intake/idempotency.repository.js';
import type { AllocatedNumbers } from '../../db/repositories/counter.repository.js';
import { findIntakeStart, findIntakeState, type IntakeSetting, type IntakeState } from '../../db/repositories/intake/request.repository.js';
import { DEFAULT_REASON_CODE } from '../../db/repositories/operations/reason.repository.js';
import { blobStoreFor, type BlobStore } from '../../lib/blob-store/index.js';
import { AppError } from '../../lib/errors.js';
import type { Language } from '../../lib/i18n.js';
import { attachmentMemory, prepareAttachments } from '../attachments/index.js';
import { geocode } from '../geocoding/index.js';
import { applyResend, isClosed, type IntakeContext, type IntakeResult, type LocationPlan, type Plan } from './apply.js';
import { createIntake } from './create.js';
import { parseIdempotencyKey, requestHash, validateIntakeBody, type IntakeInput } from './validate.js';

export interface IntakeCaller {
  externalSystemId: string;
  tenantId: string;
  scopes: readonly Scope[];
}

export interface IntakeOptions {
  idempotencyKey?: string | null;
  lang: Language;
  signal?: AbortSignal;
  /** The body already passed the HTTP layer's scan (unstorableParts) and its validation of this operation. Default false (a polled item). */
  checkedByHttp?: boolean;
  /** Who the status history names; default `partner:<code>` (Lumen's own telemetry alerts say `telemetry`). */
  actor?: string;
  /** reasonCode names one of the tenant's own reasons (Open311's service_code) instead of a partner code to map. Default false. */
  internalReason?: boolean;
}

/** The alert as it was when the slow work was planned; the transaction checks it did not move. */
type Snapshot = { alert: VersionedAlertRow; attachments: AlertAttachmentRow[] } | null;

type Outcome = { kind: 'done'; result: IntakeResult } | { kind: 'replay'; stored: IdempotencyKeyRow } | { kind: 'stale' };

/** Rounds of plan-then-commit before giving up on an alert that keeps changing underneath. */
const MAX_ROUNDS = 5;

/**
 * The one intake path: HTTP POST and partner polling both call it. Validates rawBody
 * against the contract's IntakeRequest schema itself (the HTTP layer's own validator:
 * throws AppError 'validation-failed' with errors[] pointers), so a polled item gets
 * exactly the HTTP validation.
 *
 * Slow work (geocoding within its budget, attachment downloads, blob writes) happens
 * first, against a snapshot of the alert. Then:
 * - No alert yet: numbers are taken and the alert written (intake/create.ts) without a
 *   lock. Of simultaneous requests with the same protocolNumber or Idempotency-Key one
 *   commits; the others fail on the unique constraints (23505), remove their blobs and
 *   are planned again, which finds the winner's alert (a resend) or stored key (a replay).
 * - A known alert (a resend): the transaction takes advisory locks on (partner,
 *   Idempotency-Key) and (partner, protocolNumber), re-reads, and commits only if the
 *   snapshot still holds; otherwise its blobs are removed and the request is planned again.
 * Simultaneous identical requests therefore create exactly one alert and one order. A
 * request that fails leaves no alert, order, idempotency record or blob behind; numbers
 * it took stay unused (numbers are unique and increasing, not gap-free: see
 * counter.repository.ts).
 */
export async function submitIntake(deps: RuntimeDeps, caller: IntakeCaller, rawBody: unknown, opts: IntakeOptions): Promise<{ status: 200 | 201; body: IntakeResponse; replayed?: true }> {
  const key = opts.idempotencyKey == null ? null : parseIdempotencyKey(opts.idempotencyKey);
  if (!caller.scopes.includes('canCreateServiceOrders') && !caller.scopes.includes('canCreateAlerts')) {
    throw new AppError('forbidden', { scopes: 'canCreateServiceOrders | canCreateAlerts' });
  }
  const input = await validateIntakeBody(rawBody, { checkedByHttp: opts.checkedByHttp });
  const hash = key ? requestHash(rawBody) : null;
  const blobs = blobStoreFor(deps.config.blobStore);

  let known: IntakeContext | null = null;
  for (let round = 1; ; round++) {
    // The context is read once, with the first round's state in the same statement.
    // A new request's numbers come with it (taken only when no key and no alert was found).
    let ctx: IntakeContext;
    let state: IntakeState;
    let numbers: AllocatedNumbers | null = null;
    if (known) {
      ctx = known;
      state = await findIntakeState(deps.db, caller.externalSystemId, key, input.protocolNumber);
    } else {
      const canCreateOrders = caller.scopes.includes('canCreateServiceOrders');
      const first = await findIntakeStart(deps.db, caller.externalSystemId, caller.tenantId, input.reasonCode, key, input.protocolNumber, { canCreateOrders, year: new Date().getUTCFullYear() }, opts.internalReason);
      ctx = contextOf(caller, first.setting, opts.actor);
      state = first.state;
      numbers = first.numbers;
    }
    known = ctx;
    if (state.stored) return replay(state.stored, hash!);
    const snapshot = await loadSnapshot(deps, state.alert);
    const plan = await preparePlan(deps, blobs, ctx, input, snapshot, opts.signal);
    let outcome: Outcome;
    try {
      outcome = snapshot
        ? await deps.db.transaction().execute((tx) => commitResend(tx, deps, ctx, input, { key, hash }, snapshot, plan, opts.lang))
        : { kind: 'done', result: await createIntake(deps, ctx, input, { key, hash }, plan, opts.lang, numbers) };
    } catch (err) {
      await removeBlobs(deps, blobs, plan.attachments.written);
      if (round < MAX_ROUNDS && (err as { code?: string }).code === '23505') continue;
      throw err;
    }
    if (outcome.kind === 'done') {
      deps.log.info(
        { alertId: outcome.result.body.alert.id, protocolNumber: input.protocolNumber, status: outcome.result.status, alertStatus: outcome.result.body.alert.status, geolocated: outcome.result.body.alert.latitude !== null },
        outcome.result.status === 201 ? 'request registered' : 'request resent',
      );
      return outcome.result;
    }
    await removeBlobs(deps, blobs, plan.attachments.written);
    if (outcome.kind === 'replay') return replay(outcome.stored, hash!);
    if (round >= MAX_ROUNDS) throw new Error(`request ${input.protocolNumber} could not be committed: its alert kept changing during ${MAX_ROUNDS} rounds`);
  }
}

/** The stored answer of an Idempotency-Key used again with the same body, marked as a replay (the Idempotent-Replayed header). */
function replay(stored: Pick<IdempotencyKeyRow, 'request_hash' | 'response_body'>, hash: Buffer): IntakeResult & { replayed: true } {
  if (!stored.request_hash.equals(hash)) throw new AppError('idempotency-key-reused');
  return { status: 200, body: JSON.parse(stored.response_body) as IntakeResponse, replayed: true };
}

/** Who sends the request, for which tenant, and the reason its code maps to. */
function contextOf(caller: IntakeCaller, setting: IntakeSetting | undefined, actor?: string): IntakeContext {
  if (!setting) throw new Error(`intake caller ${caller.externalSystemId} does not belong to tenant ${caller.tenantId}, or the tenant has no ${DEFAULT_REASON_CODE} reason`);
  return {
    caller,
    tenant: setting.tenant,
    actor: actor ?? `partner:${setting.partnerCode}`,
    automatic: setting.tenant.intake_policy === 'automatic' && caller.scopes.includes('canCreateServiceOrders'),
    reason: setting.reason,
  };
}

/** The alert as found, with its attachments (a resend compares the request's attachments with them). */
async function loadSnapshot(deps: RuntimeDeps, alert: VersionedAlertRow | undefined): Promise<Snapshot> {
  return alert ? { alert, attachments: await listAlertAttachments(deps.db, alert.id) } : null;
}

/** A resend of a Pending alert moves it when street, number, neighborhood or the sent coordinates changed. */
function locationChanged(alert: AlertRow, address: IntakeInput['address']): boolean {
  const textChanged = alert.address_street !== address.street || alert.address_number !== address.number || alert.address_neighborhood !== address.neighborhood;
  const hadPayload = alert.location_source === 'payload';
  const coordinatesChanged = address.latitude !== null ? !(hadPayload && alert.latitude === address.latitude && alert.longitude === address.longitude) : hadPayload;
  return textChanged || coordinatesChanged;
}

/** Geocoding (within the intake budget) and attachments, in parallel, before any lock is taken. */
async function preparePlan(deps: RuntimeDeps, blobs: BlobStore, ctx: IntakeContext, input: IntakeInput, snapshot: Snapshot, signal?: AbortSignal): Promise<Plan> {
  const alert = snapshot?.alert ?? null;
  const alertId = alert?.id ?? randomUUID();
  const frozen = alert !== null && isClosed(alert.status);
  const needsLocation = alert === null || (alert.status === 'Pending' && locationChanged(alert, input.address));
  // The city's share of the process's downloads and attachment memory (LUMEN_TENANT_BUDGET_SHARE).
  const limits = { ...deps.config.attachmentDownload, allowLoopback: deps.config.allowLoopback, shareKey: ctx.tenant.id };
  const [location, attachments] = await Promise.all([
    needsLocation ? locate(deps, ctx, input, signal) : Promise.resolve(undefined),
    prepareAttachments(
      { blobs, log: deps.log, limits, memory: attachmentMemory(deps.config).for(ctx.tenant.id) },
      { tenantId: ctx.tenant.id, alertId, inputs: frozen ? [] : input.attachments, existing: snapshot?.attachments ?? [] },
      signal,
    ),
  ]);
  return { alertId, location, attachments };
}

/** Sent coordinates win; otherwise the provider chain within LUMEN_GEOCODE_BUDGET_MS; null = not geolocated. */
async function locate(deps: RuntimeDeps, ctx: IntakeContext, input: IntakeInput, signal?: AbortSignal): Promise<LocationPlan> {
  const a = input.address;
  if (a.latitude !== null && a.longitude !== null) return { latitude: a.latitude, longitude: a.longitude, source: 'payload' };
  const outcome = await geocode(
    deps,
    { tenantId: ctx.tenant.id, city: ctx.tenant.name, brazil: ctx.tenant.ibge_code !== null, street: a.street, number: a.number, neighborhood: a.neighborhood },
    { deadline: Date.now() + deps.config.geocodeBudgetMs, signal },
  );
  if (outcome.hit) return outcome.hit;
  deps.log.info({ protocolNumber: input.protocolNumber, misses: outcome.misses }, 'request not geolocated at intake; retrying in the background');
  return null;
}

/** A resend of a known alert, under the request's advisory locks. */
async function commitResend(
  tx: Tx,
  deps: RuntimeDeps,
  ctx: IntakeContext,
  input: IntakeInput,
  idem: { key: string | null; hash: Buffer | null },
  snapshot: NonNullable<Snapshot>,
  plan: Plan,
  lang: Language,
): Promise<Outcome> {
  const esid = ctx.caller.externalSystemId;
  // Always key first, then protocol: every request takes them in the same order.
  await lockNames(tx, [...(idem.key ? [`lumen:intake:key:${esid}:${idem.key}`] : []), `lumen:intake:protocol:${esid}:${input.protocolNumber}`]);
  if (idem.key) {
    const stored = await findIdempotencyKey(tx, esid, idem.key);
    if (stored) return { kind: 'replay', stored };
  }
  const current = await findAlertByProtocol(tx, esid, input.protocolNumber, { forUpdate: true });
  if (!current || current.row_version !== snapshot.alert.row_version || current.id !== snapshot.alert.id) return { kind: 'stale' };

  const result = await applyResend(tx, deps, ctx, input, current, plan, lang);
  if (idem.key) {
    await insertIdempotencyKey(tx, {
      external_system_id: esid,
      key: idem.key,
      request_hash: idem.hash!,
      alert_id: result.body.alert.id,
      response_status: result.status,
      response_body: JSON.stringify(result.body),
    });
  }
  return { kind: 'done', result };
}

async function removeBlobs(deps: RuntimeDeps, blobs: BlobStore, paths: readonly string[]): Promise<void> {
  await Promise.all(
    paths.map((p) =>
      blobs.delete(p).catch((err: unknown) => deps.log.error({ err, blobPath: p, store: blobs.description }, 'blob of a request that did not commit could not be removed')),
    ),
  );
}
