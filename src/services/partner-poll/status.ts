import type { RuntimeDeps } from '../deps.js';
import type { PartnerPolling } from '../../../generated/admin/types.gen.js';
import { findExternalSystemByCode, type ExternalSystemRow } from '../../db/repositories/external-system.repository.js';
import {
  countRejectedItems,
  findPollState,
  listRejectedItems,
  type PollStateRow,
  type RejectedItemRow,
  type RejectedStatusFilter,
} from '../../db/repositories/partner-poll.repository.js';
import type { PollErrorKind, RejectionReason } from '../../db/tables/polling.js';
import { AppError } from '../../lib/errors.js';
import { recordAudit, type Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { requestPollNow } from './schedule.js';
import { notPolledBecause } from './service.js';
import { inScope, type AdminAccess, type TenantRole } from '../operators/index.js';

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/** What `lumen partner status` and GET /api/admin/partners/{code}/polling show. */
export type PartnerPollStatus = PartnerPolling;

/** The partner, when the caller holds `role` on its tenant (not-found as an unknown code otherwise). */
async function requirePartner(deps: ServiceDeps, access: AdminAccess, code: string, role: TenantRole): Promise<ExternalSystemRow> {
  return inScope(access, await findExternalSystemByCode(deps.db, code), role, `partner ${code}`);
}

export function pollStatusView(partner: ExternalSystemRow, state: PollStateRow | undefined, openRejected: number, now = new Date()): PartnerPollStatus {
  const reason = notPolledBecause(partner);
  return {
    partner: partner.code,
    polling: reason === null,
    notPolledBecause: reason,
    pollingUrl: partner.polling_url,
    pollingKeySet: partner.polling_key_enc !== null,
    intervalSeconds: partner.polling_interval_seconds,
    cursor: iso(state?.cursor),
    cursorUpdatedAt: iso(state?.cursor_updated_at),
    lastAttemptAt: iso(state?.last_attempt_at),
    lastSuccessAt: iso(state?.last_success_at),
    lastCaughtUpAt: iso(state?.last_caught_up_at),
    lastError: state?.last_error_at && state.last_error_kind ? { at: state.last_error_at.toISOString(), kind: state.last_error_kind, message: state.last_error ?? '' } : null,
    consecutiveFailures: state?.consecutive_failures ?? 0,
    nextPollAt: reason === null ? iso(state?.next_poll_at) : null,
    pollRequestedAt: iso(state?.poll_requested_at),
    lagSeconds: state?.last_caught_up_at ? Math.max(0, Math.round((now.getTime() - state.last_caught_up_at.getTime()) / 1000)) : null,
    lastBatch:
      state?.last_batch_at && state.last_batch_items !== null
        ? { at: state.last_batch_at.toISOString(), items: state.last_batch_items, accepted: state.last_batch_accepted ?? 0, rejected: state.last_batch_rejected ?? 0 }
        : null,
    totals: {
      itemsAccepted: Number(state?.items_accepted ?? 0),
      itemsRejected: Number(state?.items_rejected ?? 0),
      pollsSucceeded: Number(state?.polls_succeeded ?? 0),
      pollsFailed: Number(state?.polls_failed ?? 0),
    },
    openRejectedItems: openRejected,
  };
}

export async function getPartnerPollStatus(deps: ServiceDeps, access: AdminAccess, code: string): Promise<PartnerPollStatus> {
  const partner = await requirePartner(deps, access, code, 'viewer');
  const [state, open] = await Promise.all([findPollState(deps.db, partner.id), countRejectedItems(deps.db, { externalSystemId: partner.id, status: 'open' })]);
  return pollStatusView(partner, state, open);
}

export interface PollNowResult {
  partner: string;
  requestedAt: string;
  /** queued: the poll waits for a worker (at once with `lumen serve` running); running: a poll is under way and another follows it at once. */
  state: 'queued' | 'running';
}

/** `lumen partner poll-now`: the partner's next poll is due now (409 when Lumen does not poll it). Audited. */
export async function pollPartnerNow(deps: RuntimeDeps, code: string, actor: Actor): Promise<PollNowResult> {
  const partner = await requirePartner(deps, actor.access, code, 'triager');
  const reason = notPolledBecause(partner);
  if (reason) throw new AppError('conflict', { reason: `Lumen does not poll ${code}: ${reason}` });
  const { requestedAt, result } = await requestPollNow(deps, partner.id, {
    inTransaction: (tx) => recordAudit(tx, actor, { tenantId: partner.tenant_id, action: 'partner.poll-now', entityType: 'partner', entityId: partner.id, before: null, after: null }),
  });
  return { partner: code, requestedAt: requestedAt.toISOString(), state: result === 'running' ? 'running' : 'queued' };
}

/**
 * The poll an operator requested has ended (successfully or not). A run clears the
 * request when it starts (a run already under way leaves it, and queues the next run
 * at once), so no request pending plus an ended last attempt means the requested poll
 * is over. A run records a success with each page it stores, so a success alone does
 * not say the run is over: its end hands the chain over, setting the next poll at or
 * after the attempt (or none when the partner stopped being polled), while during the
 * run the next poll is still the due time that started it, before the attempt (the
 * request's own time when an operator asked: on one machine, or clocks in step, that
 * is before the worker's attempt; a requesting clock ahead of the worker's by more
 * than the pick-up delay can let a wait end at the run's first stored page).
 */
export function requestedPollEnded(status: PartnerPollStatus): boolean {
  if (status.pollRequestedAt !== null || !status.lastAttemptAt) return false;
  const attempt = Date.parse(status.lastAttemptAt);
  if (status.nextPollAt !== null && Date.parse(status.nextPollAt) < attempt) return false;
  const ok = status.lastSuccessAt !== null && Date.parse(status.lastSuccessAt) >= attempt;
  const failed = status.lastError !== null && status.lastError.kind !== 'cursor-stalled' && Date.parse(status.lastError.at) >= attempt;
  return ok || failed;
}

/** One refused item, as operators see it. */
export interface RejectedInboundItemView {
  id: string;
  partner: string;
  protocolNumber: string | null;
  problemCode: string;
  reasons: RejectionReason[];
  /** The item as the partner sent it (strings over 8 KiB shortened). */
  item: unknown;
  since: string | null;
  firstSeenAt: string;
  lastSeenAt: string;
  timesSeen: number;
  /** When a later valid item with the same protocolNumber was accepted; null while open. */
  resolvedAt: string | null;
  /** When an operator dismissed it (0024); null otherwise. */
  dismissedAt: string | null;
  dismissedBy: string | null;
  /** The operator's reason for dismissing it (0092). */
  dismissReason: string | null;
  /** The fields an operator corrected before accepting it (0092). */
  corrections: Record<string, unknown> | null;
  acceptedBy: string | null;
}

export interface RejectedInboundPage {
  partner: string;
  status: RejectedStatusFilter;
  items: RejectedInboundItemView[];
  page: number;
  pageSize: number;
  total: number;
}

export function rejectedItemView(code: string, row: RejectedItemRow): RejectedInboundItemView {
  return {
    id: row.id,
    partner: code,
    protocolNumber: row.protocol_number,
    problemCode: row.problem_code,
    reasons: row.reasons,
    item: row.item,
    since: iso(row.since),
    firstSeenAt: row.first_seen_at.toISOString(),
    lastSeenAt: row.last_seen_at.toISOString(),
    timesSeen: row.times_seen,
    resolvedAt: iso(row.resolved_at),
    dismissedAt: iso(row.dismissed_at),
    dismissedBy: row.dismissed_by,
    dismissReason: row.dismiss_reason,
    corrections: row.corrections,
    acceptedBy: row.accepted_by,
  };
}

export const REJECTED_PAGE_SIZE_DEFAULT = 50;
export const REJECTED_PAGE_SIZE_MAX = 500;

export interface RejectedListInput {
  partnerCode: string;
  status?: RejectedStatusFilter;
  page?: number;
  pageSize?: number;
}

/** Rejected inbound items of one partner, newest first. pageSize above 500 is cut to 500. */
export async function listRejectedInbound(deps: ServiceDeps, access: AdminAccess, input: RejectedListInput): Promise<RejectedInboundPage> {
  const partner = await requirePartner(deps, access, input.partnerCode, 'viewer');
  const status = input.status ?? 'all';
  const page = input.page ?? 1;
  const pageSize = Math.min(input.pageSize ?? REJECTED_PAGE_SIZE_DEFAULT, REJECTED_PAGE_SIZE_MAX);
  // Query values: 400 invalid-parameter, as every other query problem.
  if (!Number.isSafeInteger(page) || page < 1) throw new AppError('invalid-parameter', {}, [{ pointer: '/query/page', message: 'must be a whole number from 1' }]);
  if (!Number.isSafeInteger(pageSize) || pageSize < 1) throw new AppError('invalid-parameter', {}, [{ pointer: '/query/pageSize', message: 'must be a whole number from 1' }]);
  const [rows, total] = await Promise.all([
    listRejectedItems(deps.db, { externalSystemId: partner.id, status, limit: pageSize, offset: (page - 1) * pageSize }),
    countRejectedItems(deps.db, { externalSystemId: partner.id, status }),
  ]);
  return { partner: partner.code, status, items: rows.map((r) => rejectedItemView(partner.code, r)), page, pageSize, total };
}
