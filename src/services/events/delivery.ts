import type { KeyObject } from 'node:crypto';
import type { RuntimeDeps } from '../deps.js';
import { keyringOf, openSecret, partnerSecretAad } from '../../lib/secret-box.js';
import { OutboundError, outboundRequest, type OutboundResponse } from '../../lib/outbound-http.js';
import { signLumenV2, signStandardWebhook, signWebhookBody, standardHmacKey } from '../../lib/webhook-signature.js';
import { outboundTraceparent } from '../../lib/trace-context.js';
import { VERSION } from '../../version.js';
import { settleAttempts, type ClaimedDelivery, type ReleasedDelivery, type SettledAttempt } from '../../db/repositories/webhook-delivery.repository.js';

/** An attempt's lease outlives its longest HTTP call (10 s) with room for the bookkeeping. */
export const LEASE_MS = 60_000;
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
  traceparent?: string;
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

/** An attempt made, with the outcome its delivery's log records. */
export interface Attempted {
  readonly delivery: ClaimedDelivery;
  readonly settled: SettledAttempt;
  /** The W3C traceparent the attempt was sent with (none when it was not sent). */
  readonly traceparent: string | null;
}

/** A partner's webhook secret, opened: its text, and its key for the Standard Webhooks scheme. */
interface OpenedSecret {
  readonly text: string;
  readonly standardKey: KeyObject;
}

/** Partners' webhook secrets, decrypted (and their keys made) once per partner and batch of leased deliveries. */
export type SecretCache = Map<string, OpenedSecret | Error>;

function secretOf(deps: RuntimeDeps, sealed: string, partnerId: string, cache: SecretCache, column: 'webhook_secret_enc' | 'webhook_previous_secret_enc' = 'webhook_secret_enc'): OpenedSecret | Error {
  let secret = cache.get(sealed);
  if (secret === undefined) {
    try {
      const text = openSecret(keyringOf(deps.config), sealed, partnerSecretAad(partnerId, column));
      secret = { text, standardKey: standardHmacKey(text) };
    } catch (err) {
      secret = err as Error;
    }
    cache.set(sealed, secret);
  }
  return secret;
}

/**
 * One attempt of a leased delivery: signs and posts the stored envelope bytes, outside
 * any transaction, and returns what the delivery log records (the next attempt, or the
 * end). Never throws.
 */
export async function attemptDelivery(deps: RuntimeDeps, delivery: ClaimedDelivery, secrets: SecretCache): Promise<Attempted> {
  const attempt = delivery.attempts + 1;
  const startedAt = new Date();
  const outcome = await send(deps, delivery, attempt, startedAt, secrets);
  const latencyMs = Date.now() - startedAt.getTime();
  const schedule = deps.config.webhookRetryScheduleMs;
  const dead = !outcome.succeeded && (outcome.permanent || attempt >= maxAttempts(schedule));
  const nextAttemptAt = outcome.succeeded || dead ? null : new Date(Date.now() + retryDelayMs(schedule, attempt, outcome.retryAfterMs));
  return {
    delivery,
    traceparent: outcome.traceparent ?? null,
    settled: {
      deliveryId: delivery.id,
      attempt,
      startedAt,
      latencyMs,
      succeeded: outcome.succeeded,
      statusCode: outcome.statusCode,
      error: outcome.error,
      status: outcome.succeeded ? 'succeeded' : dead ? 'dead' : 'failed',
      nextAttemptAt,
    },
  };
}

/**
 * The signature headers of the partner's scheme. Lumen's: X-Lumen-Signature with the
 * current secret (and X-Lumen-Signature-Previous with the replaced one during a
 * rotation's overlap). Standard Webhooks: webhook-id is the eventId (the same on every
 * retry, so receivers deduplicate on it), webhook-timestamp the Unix seconds of this
 * attempt, webhook-signature one `v1,` signature per secret still signing.
 */
function signatureHeaders(target: ClaimedDelivery, secret: OpenedSecret, previous: OpenedSecret | null, startedAt: Date, body: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  const timestamp = Math.floor(startedAt.getTime() / 1000);
  if (target.webhook_signature !== 'standard') {
    // Deprecated (body only, no replay window; sunset in openapi/CHANGELOG.md): kept for receivers not yet on V2.
    out['x-lumen-signature'] = signWebhookBody(secret.text, body);
    if (previous !== null) out['x-lumen-signature-previous'] = signWebhookBody(previous.text, body);
    out['x-lumen-signature-v2'] = signLumenV2(previous === null ? [secret.text] : [secret.text, previous.text], timestamp, body);
  }
  if (target.webhook_signature !== 'lumen') {
    out['webhook-id'] = target.event_id;
    out['webhook-timestamp'] = String(timestamp);
    out['webhook-signature'] = signStandardWebhook(previous === null ? [secret.standardKey] : [secret.standardKey, previous.standardKey], target.event_id, timestamp, body);
  }
  return out;
}

async function send(deps: RuntimeDeps, target: ClaimedDelivery, attempt: number, startedAt: Date, secrets: SecretCache): Promise<AttemptOutcome> {
  const { config } = deps;
  const notSent = (why: string): AttemptOutcome => ({ succeeded: false, statusCode: null, error: `not sent: ${why}`, retryAfterMs: null, permanent: true });
  if (!target.enabled) return notSent('the partner is disabled');
  if (target.transport !== 'webhook') return notSent('the partner is in polling mode');
  if (!target.webhook_url) return notSent('the partner has no webhook URL');
  if (!target.webhook_secret_enc) return notSent('the partner has no webhook secret to sign with');
  const secret = secretOf(deps, target.webhook_secret_enc, target.external_system_id, secrets);
  if (secret instanceof Error) return notSent(secret.message);
  // The replaced secret signs as well while its overlap lasts; one that no longer opens
  // only loses its extra signature, the delivery still goes out.
  const previous = target.webhook_previous_secret_enc ? secretOf(deps, target.webhook_previous_secret_enc, target.external_system_id, secrets, 'webhook_previous_secret_enc') : null;
  const body = Buffer.from(target.body, 'utf8');
  const traceparent = outboundTraceparent();
  try {
    const res = await outboundRequest({
      url: target.webhook_url,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': `Lumen-Webhook/${VERSION}`,
        ...signatureHeaders(target, secret, previous instanceof Error ? null : previous, startedAt, body),
        'x-lumen-event-id': target.event_id,
        'x-lumen-event-type': target.event_type,
        'x-lumen-timestamp': startedAt.toISOString(),
        'x-lumen-delivery-attempt': String(attempt),
        traceparent,
      },
      body,
      timeoutMs: config.webhookTimeoutMs,
      maxResponseBytes: MAX_RESPONSE_BYTES,
      allowLoopback: config.allowLoopback,
      maxRedirects: 0,
    });
    if (res.status >= 200 && res.status < 300) return { succeeded: true, statusCode: res.status, error: null, retryAfterMs: null, permanent: false, traceparent };
    return { succeeded: false, statusCode: res.status, error: describeFailure(res), retryAfterMs: parseRetryAfter(res.headers['retry-after']), permanent: false, traceparent };
  } catch (err) {
    const kind = err instanceof OutboundError ? err.kind : 'network';
    return { succeeded: false, statusCode: null, error: `${kind}: ${(err as Error).message}`, retryAfterMs: null, permanent: false, traceparent };
  }
}

/**
 * Records attempts that came back together, in one statement (settleAttempts): their
 * outcomes, and the next delivery of each order that ended, unblocked. Returns those
 * next deliveries. A crash before this commits leaves the leases to run out: the
 * attempts are then made again (at least once).
 */
export async function recordAttempts(deps: RuntimeDeps, group: readonly Attempted[]): Promise<ReleasedDelivery[]> {
  const released = await settleAttempts(deps.db, group.map((a) => a.settled));
  for (const { delivery, settled } of group) deps.metrics?.webhookAttempt(delivery.partner_code, settled.succeeded ? 'succeeded' : settled.nextAttemptAt ? 'retrying' : 'failed');
  // One line per attempt; not even built when info lines are off (thousands a second in a fan-out).
  if (!deps.log.isLevelEnabled('info')) return released;
  for (const { delivery, settled, traceparent } of group) {
    deps.log.info(
      {
        deliveryId: delivery.id,
        eventId: delivery.event_id,
        partner: delivery.partner_code,
        attempt: settled.attempt,
        status: settled.statusCode,
        succeeded: settled.succeeded,
        latencyMs: settled.latencyMs,
        error: settled.error ?? undefined,
        traceparent: traceparent ?? undefined,
      },
      'webhook attempt',
    );
  }
  return released;
}
