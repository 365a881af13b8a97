import type { AppDeps } from '../app-deps.js';
import { openSecret } from '../lib/secret-box.js';
import { OutboundError, outboundRequest, type OutboundResponse } from '../lib/outbound-http.js';
import { signWebhookBody } from '../lib/webhook-signature.js';
import { VERSION } from '../version.js';
import { claimDelivery, headOfKey, insertAttempt, loadDeliveryTarget, settleDelivery, type DeliveryRow } from '../db/repositories/webhook-delivery.repository.js';
import { enqueueDelivery, wakeDeliveryWorkersAt } from './events-dispatch.js';

/** An attempt's lease outlives its longest HTTP call (10 s) with room for the bookkeeping. */
const LEASE_MS = 60_000;
/** The partner's answer is ignored beyond its status; read at most this much of it. */
const MAX_RESPONSE_BYTES = 1024 * 1024;
/** A Retry-After is honoured up to this; a longer one is cut to it. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;
/** How much of a failing answer's body the delivery log keeps. */
const ERROR_BODY_CHARS = 200;

export interface AttemptOutcome {
  succeeded: boolean;
  statusCode: number | null;
  error: string | null;
  /** Milliseconds asked for by the partner's Retry-After, if any. */
  retryAfterMs: number | null;
  /** Retrying cannot help (the delivery became impossible): the delivery ends now. */
  permanent: boolean;
}

/** Attempts in total for a schedule of retry delays: the first, then one per step. */
export function maxAttempts(scheduleMs: readonly number[]): number {
  return scheduleMs.length + 1;
}

/**
 * Delay before the retry that follows failed attempt number `attempt` (1-based):
 * the schedule's step with ±20% jitter (spreads a recovering partner's load), never
 * less than the partner's Retry-After.
 */
export function retryDelayMs(scheduleMs: readonly number[], attempt: number, retryAfterMs: number | null, random: () => number = Math.random): number {
  const base = scheduleMs[Math.min(attempt, scheduleMs.length) - 1] ?? 0;
  const jittered = Math.round(base * (0.8 + 0.4 * random()));
  return Math.max(jittered, retryAfterMs ?? 0);
}

/** Retry-After as delay-seconds or an HTTP date (RFC 9110), in ms from `now`; null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | null {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return null;
  const trimmed = raw.trim();
  let ms: number;
  if (/^\d+$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return null;
    ms = at - now;
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

function describeFailure(res: OutboundResponse): string {
  const text = res.body.toString('utf8', 0, Math.min(res.body.length, ERROR_BODY_CHARS * 4)).replace(/\s+/g, ' ').trim().slice(0, ERROR_BODY_CHARS);
  const kind = res.status >= 300 && res.status < 400 ? 'redirect not followed' : 'not a 2xx answer';
  return `HTTP ${res.status} (${kind})${text ? `: ${text}` : ''}`;
}

/**
 * One attempt of one delivery, when it is due, unleased and first of its order (else
 * nothing happens: whoever makes it eligible enqueues it again). The partner is called
 * outside any transaction; the outcome, the next attempt or the end, and the job of
 * the next delivery of the same order are recorded in one transaction. A crash between
 * the call and that record leaves the lease to expire: the attempt is then made again
 * (at least once).
 */
export async function attemptDelivery(deps: AppDeps, deliveryId: string, signal?: AbortSignal): Promise<void> {
  const claimed = await claimDelivery(deps.db, deliveryId, LEASE_MS);
  if (!claimed) return;
  const target = await loadDeliveryTarget(deps.db, deliveryId);
  if (!target) return;

  const attempt = claimed.attempts + 1;
  const startedAt = new Date();
  const outcome = await send(deps, target, attempt, startedAt, signal);
  const latencyMs = Date.now() - startedAt.getTime();
  await settle(deps, claimed, attempt, startedAt, latencyMs, outcome);
  deps.log.info(
    { deliveryId, eventId: target.event_id, partner: target.partner_code, attempt, status: outcome.statusCode, succeeded: outcome.succeeded, latencyMs, error: outcome.error ?? undefined },
    'webhook attempt',
  );
}

type DeliveryTarget = NonNullable<Awaited<ReturnType<typeof loadDeliveryTarget>>>;

/** Signs and posts the stored envelope bytes; never throws. */
async function send(deps: AppDeps, target: DeliveryTarget, attempt: number, startedAt: Date, signal?: AbortSignal): Promise<AttemptOutcome> {
  const { config } = deps;
  const notSent = (why: string): AttemptOutcome => ({ succeeded: false, statusCode: null, error: `not sent: ${why}`, retryAfterMs: null, permanent: true });
  if (!target.enabled) return notSent('the partner is disabled');
  if (target.transport !== 'webhook') return notSent('the partner is in polling mode');
  if (!target.webhook_url) return notSent('the partner has no webhook URL');
  if (!target.webhook_secret_enc) return notSent('the partner has no webhook secret to sign with');
  let secret: string;
  try {
    secret = openSecret(config.secretKey, target.webhook_secret_enc);
  } catch (err) {
    return notSent((err as Error).message);
  }
  const body = Buffer.from(target.body, 'utf8');
  try {
    const res = await outboundRequest({
      url: target.webhook_url,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': `Lumen-Webhook/${VERSION}`,
        'x-lumen-signature': signWebhookBody(secret, body),
        'x-lumen-event-id': target.event_id,
        'x-lumen-event-type': target.event_type,
        'x-lumen-timestamp': startedAt.toISOString(),
        'x-lumen-delivery-attempt': String(attempt),
      },
      body,
      timeoutMs: config.webhookTimeoutMs,
      maxResponseBytes: MAX_RESPONSE_BYTES,
      allowLoopback: config.allowLoopback,
      maxRedirects: 0,
      signal,
    });
    if (res.status >= 200 && res.status < 300) return { succeeded: true, statusCode: res.status, error: null, retryAfterMs: null, permanent: false };
    return { succeeded: false, statusCode: res.status, error: describeFailure(res), retryAfterMs: parseRetryAfter(res.headers['retry-after']), permanent: false };
  } catch (err) {
    const kind = err instanceof OutboundError ? err.kind : 'network';
    return { succeeded: false, statusCode: null, error: `${kind}: ${(err as Error).message}`, retryAfterMs: null, permanent: false };
  }
}

async function settle(deps: AppDeps, delivery: DeliveryRow, attempt: number, startedAt: Date, latencyMs: number, outcome: AttemptOutcome): Promise<void> {
  const schedule = deps.config.webhookRetryScheduleMs;
  const dead = !outcome.succeeded && (outcome.permanent || attempt >= maxAttempts(schedule));
  const nextAt = outcome.succeeded || dead ? null : new Date(Date.now() + retryDelayMs(schedule, attempt, outcome.retryAfterMs));
  let wakeAt: Date | null = nextAt;
  await deps.db.transaction().execute(async (tx) => {
    await insertAttempt(tx, {
      delivery_id: delivery.id,
      attempt,
      started_at: startedAt,
      latency_ms: latencyMs,
      succeeded: outcome.succeeded,
      status_code: outcome.statusCode,
      error: outcome.error,
      next_attempt_at: nextAt,
    });
    await settleDelivery(tx, delivery.id, {
      status: outcome.succeeded ? 'succeeded' : dead ? 'dead' : 'failed',
      attempts: attempt,
      next_attempt_at: nextAt ?? undefined,
      last_attempt_at: startedAt,
      last_status_code: outcome.statusCode,
      last_error: outcome.error,
      finished: nextAt === null,
    });
    if (nextAt) {
      await enqueueDelivery(tx, delivery.id, nextAt);
    } else {
      // This one is done: the next delivery of the same order may go now.
      const next = await headOfKey(tx, delivery.external_system_id, delivery.ordering_key);
      if (next) {
        await enqueueDelivery(tx, next.id, next.next_attempt_at);
        wakeAt = next.next_attempt_at;
      }
    }
  });
  if (wakeAt) wakeDeliveryWorkersAt(deps.jobs, wakeAt);
}
