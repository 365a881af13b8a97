import { fromKysely, type Job } from 'pg-boss';
import type { RuntimeDeps } from '../deps.js';
import type { Tx } from '../../db/database.js';
import { lockPollState, updatePollState, type PollStateRow } from '../../db/repositories/partner-poll.repository.js';

/**
 * Scheduling of partner polls on pg-boss. One job per partner (singletonKey = the
 * partner's id) on a queue with the `exclusive` policy: the database allows at most
 * one job per key that is queued, retrying or running, across every instance. So
 * two instances never poll one partner at once, and a partner never has two polls
 * waiting.
 *
 * Each run hands over to the next one: in one transaction it records its outcome,
 * completes its own job and queues the next with `startAfter` (the interval after a
 * success, a backoff after a failure). pg-boss cron works in minutes, which is why
 * the chain reschedules itself; a cron job every minute (the reconciler) only starts
 * chains that are missing and pulls in polls that settings made due earlier.
 */
export const PARTNER_POLL_QUEUE = 'partner-poll';

/** Payload of a poll job (versioned). */
export interface PartnerPollJobData {
  readonly v: 1;
  readonly externalSystemId: string;
}

export const pollJobData = (externalSystemId: string): PartnerPollJobData => ({ v: 1, externalSystemId });

/**
 * When the partner's next poll is due: now for a partner never polled or when an
 * operator asked; otherwise the planned time, but never later than the current
 * interval after the last attempt (so a shortened interval applies at once).
 */
export function dueAt(state: PollStateRow | undefined, intervalSeconds: number, now: Date): Date {
  if (!state || !state.last_attempt_at || state.poll_requested_at) return now;
  const byInterval = state.last_attempt_at.getTime() + intervalSeconds * 1000;
  const planned = state.next_poll_at ? Math.min(state.next_poll_at.getTime(), byInterval) : byInterval;
  return new Date(Math.max(planned, now.getTime()));
}

/** The running job's claim is gone (expired, or taken over after a crash): it must not hand over. */
export class ClaimLost extends Error {
  constructor(jobId: string) {
    super(`poll job ${jobId} is no longer this worker's`);
    this.name = 'ClaimLost';
  }
}

/**
 * Completes the running job and queues the next poll at `nextAt` (none when null),
 * inside the caller's transaction: the outcome written in it and the next job
 * commit together or not at all.
 */
export async function handOver(deps: RuntimeDeps, tx: Tx, job: Pick<Job<PartnerPollJobData>, 'id' | 'retryCount' | 'data'>, nextAt: Date | null): Promise<void> {
  // Fenced to this attempt: a job whose claim lapsed (and was retried elsewhere) completes nothing.
  const done = (await deps.jobs.boss.complete(PARTNER_POLL_QUEUE, { id: job.id, retryCount: job.retryCount }, null, { db: fromKysely(tx as never) })) as { affected?: number };
  if (done.affected === 0) throw new ClaimLost(job.id);
  if (nextAt) await deps.jobs.send(tx, PARTNER_POLL_QUEUE, pollJobData(job.data.externalSystemId), { singletonKey: job.data.externalSystemId, startAfter: nextAt });
}

export type EnsureResult = 'queued' | 'moved-earlier' | 'already-queued' | 'running';

/**
 * Makes sure the partner has a poll job due no later than `due`: queues one when it
 * has none, or moves a waiting one earlier. A running poll is left alone (it queues
 * its successor when it ends, reading the state this transaction wrote).
 */
export async function ensurePollJob(deps: RuntimeDeps, tx: Tx, externalSystemId: string, due: Date): Promise<EnsureResult> {
  const id = await deps.jobs.send(tx, PARTNER_POLL_QUEUE, pollJobData(externalSystemId), { singletonKey: externalSystemId, startAfter: due });
  if (id) return 'queued';
  const db = fromKysely(tx as never);
  const waiting = await deps.jobs.boss.findJobs<PartnerPollJobData>(PARTNER_POLL_QUEUE, { key: externalSystemId, queued: true, db });
  if (waiting.length === 0) return 'running';
  let moved = false;
  for (const job of waiting) {
    // A second of slack: the reconciler must not churn jobs that are already about right.
    if (job.startAfter.getTime() > due.getTime() + 1000) {
      await deps.jobs.boss.update(PARTNER_POLL_QUEUE, undefined, { id: job.id, startAfter: due, db });
      moved = true;
    }
  }
  return moved ? 'moved-earlier' : 'already-queued';
}

/** Reconciles one polling partner: its chain exists and is due no later than its settings say. */
export async function reconcilePartnerPoll(deps: RuntimeDeps, externalSystemId: string, intervalSeconds: number, now = new Date()): Promise<EnsureResult> {
  return deps.db.transaction().execute(async (tx) => {
    const state = await lockPollState(tx, externalSystemId);
    const due = dueAt(state, intervalSeconds, now);
    const result = await ensurePollJob(deps, tx, externalSystemId, due);
    if (result !== 'running' && (!state.next_poll_at || state.next_poll_at.getTime() !== due.getTime())) {
      await updatePollState(tx, externalSystemId, { next_poll_at: due });
    }
    return result;
  });
}

/**
 * An operator asks for a poll now: recorded on the state (so a running poll queues
 * its successor at once when it ends) and the waiting job, if any, made due now.
 */
export async function requestPollNow(
  deps: RuntimeDeps,
  externalSystemId: string,
  opts: { now?: Date; inTransaction?: (tx: Tx) => Promise<void> } = {},
): Promise<{ requestedAt: Date; result: EnsureResult }> {
  const now = opts.now ?? new Date();
  return deps.db.transaction().execute(async (tx) => {
    await lockPollState(tx, externalSystemId);
    await updatePollState(tx, externalSystemId, { poll_requested_at: now, next_poll_at: now });
    const result = await ensurePollJob(deps, tx, externalSystemId, now);
    await opts.inTransaction?.(tx);
    return { requestedAt: now, result };
  });
}
