import type { Job } from 'pg-boss';
import type { RuntimeDeps } from '../deps.js';
import { findExternalSystem, type ExternalSystemRow } from '../../db/repositories/external-system.repository.js';
import { findPollState, listPollablePartners, lockPollState, updatePollState } from '../../db/repositories/partner-poll.repository.js';
import { keyringOf, openSecret, partnerSecretAad } from '../../lib/secret-box.js';
import { nextCursor } from './envelope.js';
import { fetchPartnerBatch, PollAborted, PollError } from './fetch.js';
import { storeBatch } from './store.js';
import { dueAt, handOver, reconcilePartnerPoll, type EnsureResult, type PartnerPollJobData } from './schedule.js';

/** Pages read one after the other in one run (hasMore); then the run hands over at once. */
export const MAX_PAGES_PER_RUN = 20;
/** A run stops starting new pages after this long, and hands over at once. */
export const RUN_BUDGET_MS = 5 * 60_000;
/** First retry delay after a failed poll; doubled per failure, never above the interval. */
export const BACKOFF_BASE_MS = 1000;
/** A job that wakes up this much before its partner's due time goes back to sleep. */
const EARLY_TOLERANCE_MS = 250;

/** Why Lumen does not poll a partner at all (null: it does). */
export function notPolledBecause(partner: Pick<ExternalSystemRow, 'transport' | 'enabled' | 'polling_url'>): string | null {
  if (partner.transport !== 'polling') return 'the partner is in webhook mode';
  if (!partner.enabled) return 'the partner is disabled';
  if (!partner.polling_url) return 'the partner has no polling URL';
  return null;
}

/**
 * Delay before retrying after `failures` consecutive failed polls: exponential from
 * one second with jitter, honouring the partner's Retry-After, and never longer than
 * the partner's interval (the agreed longest gap between polls).
 */
export function backoffMs(failures: number, intervalSeconds: number, retryAfterSeconds: number | null, random: () => number = Math.random): number {
  const intervalMs = intervalSeconds * 1000;
  const exponential = Math.min(intervalMs, BACKOFF_BASE_MS * 2 ** Math.min(20, Math.max(0, failures - 1)));
  // "Equal jitter": between half and all of the exponential step, so instances spread out.
  const jittered = exponential / 2 + (exponential / 2) * random();
  const asked = retryAfterSeconds === null ? 0 : retryAfterSeconds * 1000;
  return Math.round(Math.min(intervalMs, Math.max(jittered, asked)));
}

type RunOutcome = 'caught-up' | 'more' | 'stalled';

/** Runs one poll job: due check, pages until hasMore is false, hand-over to the next job. */
export async function runPartnerPollJob(deps: RuntimeDeps, job: Job<PartnerPollJobData>): Promise<void> {
  const id = job.data.externalSystemId;
  const partner = await findExternalSystem(deps.db, id);
  if (!partner || notPolledBecause(partner)) {
    // The chain ends here; the reconciler starts a new one once the partner polls again.
    if (partner) await updatePollState(deps.db, id, { next_poll_at: null });
    deps.log.debug({ partner: partner?.code ?? id, reason: partner ? notPolledBecause(partner) : 'unknown partner' }, 'partner poll chain ended');
    return;
  }

  const now = new Date();
  const due = dueAt(await findPollState(deps.db, id), partner.polling_interval_seconds, now);
  if (due.getTime() - now.getTime() > EARLY_TOLERANCE_MS) {
    // Woken early (a reconciler's job, a retry after a crash): sleep again until due.
    await deps.db.transaction().execute(async (tx) => {
      await lockPollState(tx, id);
      await handOver(deps, tx, job, due);
    });
    return;
  }

  const startedAt = new Date();
  const state = await deps.db.transaction().execute(async (tx) => {
    const s = await lockPollState(tx, id);
    await updatePollState(tx, id, { last_attempt_at: startedAt, poll_requested_at: null });
    return s;
  });
  const log = deps.log.child({ partner: partner.code });

  let outcome: RunOutcome;
  let pages = 0;
  // When the first request left: the interval runs from there, as the partner counts it
  // (the state's lock and the key's decryption before it take longer on a loaded machine).
  let sentAt = startedAt;
  try {
    outcome = await readPages(deps, partner, state.cursor, job.signal, startedAt, (n) => (pages = n), (at) => (sentAt = at));
  } catch (err) {
    if (err instanceof PollAborted || job.signal.aborted) throw new PollAborted();
    if (!(err instanceof PollError)) throw err;
    await recordFailure(deps, job, err, startedAt);
    return;
  }

  await deps.db.transaction().execute(async (tx) => {
    const current = await lockPollState(tx, id);
    const fresh = await findExternalSystem(tx, id);
    const finishedAt = new Date();
    const interval = fresh?.polling_interval_seconds ?? partner.polling_interval_seconds;
    let next: Date | null = new Date(Math.max(finishedAt.getTime(), sentAt.getTime() + interval * 1000));
    if (current.poll_requested_at || outcome === 'more') next = finishedAt;
    if (!fresh || notPolledBecause(fresh)) next = null;
    await updatePollState(
      tx,
      id,
      {
        last_success_at: finishedAt,
        consecutive_failures: 0,
        next_poll_at: next,
        ...(outcome === 'caught-up' ? { last_caught_up_at: finishedAt } : {}),
        ...(outcome === 'stalled'
          ? { last_error_at: finishedAt, last_error_kind: 'cursor-stalled' as const, last_error: 'the partner answered hasMore=true without moving the cursor (nextSince equal to since, or no later requestedAt); reading resumes at the next interval' }
          : {}),
      },
      { pollsSucceeded: 1 },
    );
    await handOver(deps, tx, job, next);
  });
  if (outcome === 'stalled') log.warn({ pages }, 'partner poll: hasMore=true but the cursor did not move');
}

/** Reads pages while the partner has more, storing each batch before moving the cursor. */
async function readPages(
  deps: RuntimeDeps,
  partner: ExternalSystemRow,
  cursor: Date | null,
  signal: AbortSignal,
  startedAt: Date,
  onPage: (pages: number) => void,
  onFirstSend: (at: Date) => void,
): Promise<RunOutcome> {
  if (!partner.scopes.includes('canCreateServiceOrders') && !partner.scopes.includes('canCreateAlerts')) {
    throw new PollError('configuration', 'the partner has neither canCreateServiceOrders nor canCreateAlerts: its requests cannot be taken in');
  }
  if (!partner.polling_key_enc) throw new PollError('configuration', 'no polling key is set for the partner (the key the partner issued to Lumen)');
  let apiKey: string;
  try {
    apiKey = openSecret(keyringOf(deps.config), partner.polling_key_enc, partnerSecretAad(partner.id, 'polling_key_enc'));
  } catch (err) {
    throw new PollError('configuration', (err as Error).message);
  }
  const caller = { externalSystemId: partner.id, tenantId: partner.tenant_id, scopes: partner.scopes };
  const log = deps.log.child({ partner: partner.code });

  let since = cursor;
  for (let pages = 1; ; pages++) {
    if (signal.aborted) throw new PollAborted();
    if (pages === 1) onFirstSend(new Date());
    const batch = await fetchPartnerBatch({
      url: partner.polling_url!,
      apiKey,
      since,
      timeoutMs: deps.config.pollTimeoutMs,
      maxResponseBytes: deps.config.pollMaxResponseBytes,
      allowLoopback: deps.config.allowLoopback,
      signal,
    });
    const stored = await storeBatch(deps, caller, since, batch.items, signal);
    const cursorAfter = nextCursor(since, batch);
    const moved = cursorAfter !== null && (since === null || cursorAfter.getTime() !== since.getTime());
    const at = new Date();
    await updatePollState(
      deps.db,
      partner.id,
      {
        cursor: cursorAfter,
        ...(moved ? { cursor_updated_at: at } : {}),
        // The partner answered and the batch is stored: the failure streak ends with the
        // cursor's move, so the status never shows a moved cursor beside old failures.
        consecutive_failures: 0,
        last_success_at: at,
        last_batch_at: at,
        last_batch_items: batch.items.length,
        last_batch_accepted: stored.accepted,
        last_batch_rejected: stored.rejected,
      },
      { itemsAccepted: stored.accepted, itemsRejected: stored.rejected },
    );
    onPage(pages);
    const fields = { items: batch.items.length, created: stored.created, accepted: stored.accepted, rejected: stored.rejected, cursor: cursorAfter?.toISOString() ?? null, hasMore: batch.hasMore };
    // Resends of known requests come back on every poll with an inclusive since: debug only.
    if (stored.created > 0 || stored.rejected > 0) log.info(fields, 'partner poll: batch stored');
    else log.debug(fields, 'partner poll: batch stored');
    since = cursorAfter;
    if (!batch.hasMore) return 'caught-up';
    if (!moved) return 'stalled';
    if (pages >= MAX_PAGES_PER_RUN || Date.now() - startedAt.getTime() > RUN_BUDGET_MS) return 'more';
  }
}

async function recordFailure(deps: RuntimeDeps, job: Job<PartnerPollJobData>, err: PollError, startedAt: Date): Promise<void> {
  const id = job.data.externalSystemId;
  let delay = 0;
  let failures = 0;
  let code = id;
  await deps.db.transaction().execute(async (tx) => {
    const current = await lockPollState(tx, id);
    const partner = await findExternalSystem(tx, id);
    code = partner?.code ?? id;
    const at = new Date();
    failures = current.consecutive_failures + 1;
    delay = backoffMs(failures, partner?.polling_interval_seconds ?? 180, err.retryAfterSeconds);
    let next: Date | null = current.poll_requested_at ? at : new Date(at.getTime() + delay);
    if (!partner || notPolledBecause(partner)) next = null;
    await updatePollState(
      tx,
      id,
      { last_error_at: at, last_error_kind: err.kind, last_error: err.message.slice(0, 2000), consecutive_failures: failures, next_poll_at: next },
      { pollsFailed: 1 },
    );
    await handOver(deps, tx, job, next);
  });
  deps.log.warn({ partner: code, kind: err.kind, error: err.message, failures, retryInMs: delay, tookMs: Date.now() - startedAt.getTime() }, 'partner poll failed; the cursor stays');
}

/** What the reconciler did, partner by partner (for its log and for tests). */
export interface ReconcileReport {
  readonly partners: { readonly code: string; readonly result: EnsureResult }[];
}

/** Every polling partner has a poll job, due no later than its settings say (run every minute). */
export async function reconcilePartnerPolls(deps: RuntimeDeps): Promise<ReconcileReport> {
  const partners = await listPollablePartners(deps.db);
  const report: { code: string; result: EnsureResult }[] = [];
  for (const p of partners) {
    try {
      report.push({ code: p.code, result: await reconcilePartnerPoll(deps, p.id, p.polling_interval_seconds) });
    } catch (err) {
      deps.log.error({ err, partner: p.code }, 'partner poll reconciliation failed');
    }
  }
  const changed = report.filter((r) => r.result === 'queued' || r.result === 'moved-earlier');
  if (changed.length > 0) deps.log.info({ partners: changed }, 'partner polls scheduled');
  return { partners: report };
}

