import { OutboundError, outboundRequest } from '../../lib/outbound-http.js';
import type { PollErrorKind } from '../../db/tables/polling.js';
import { VERSION } from '../../version.js';
import { EnvelopeError, parseBatch, type PartnerBatch } from './envelope.js';
import { outboundTraceparent } from '../../lib/trace-context.js';

/** Items Lumen asks for per call (interface 4.5 and 8: at most 200). */
export const POLL_LIMIT = 200;

/** A poll that failed for a reason that lies with the partner or its settings; the cursor stays. */
export class PollError extends Error {
  constructor(
    readonly kind: PollErrorKind,
    message: string,
    /** Seconds the partner asked Lumen to wait (Retry-After), when it did. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
    this.name = 'PollError';
  }
}

/** Shutdown or a lost job claim: stop at once, record nothing. */
export class PollAborted extends Error {
  constructor() {
    super('poll aborted');
    this.name = 'PollAborted';
  }
}

export interface FetchBatchInput {
  readonly url: string;
  readonly apiKey: string;
  readonly since: Date | null;
  readonly limit?: number;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  readonly allowLoopback: boolean;
  readonly signal?: AbortSignal;
}

/** `GET {url}?since=<cursor>&limit=200`; query parameters already in the URL are kept. */
export function pollUrl(base: string, since: Date | null, limit: number): string {
  const url = new URL(base);
  url.searchParams.delete('since');
  if (since) url.searchParams.set('since', since.toISOString());
  url.searchParams.set('limit', String(limit));
  return url.toString();
}

/** Retry-After as seconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined || raw.trim() === '') return null;
  if (/^\s*\d+\s*$/.test(raw)) return Number(raw);
  const at = Date.parse(raw);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/** The start of a partner's answer for an error message: one line, printable, short. */
function snippet(body: Buffer): string {
  const text = body.subarray(0, 400).toString('utf8').replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

const OUTBOUND_KINDS: Record<string, PollErrorKind> = {
  timeout: 'timeout',
  'too-large': 'too-large',
  network: 'network',
  tls: 'tls',
  'blocked-address': 'blocked-address',
  'invalid-url': 'configuration',
  'insecure-scheme': 'configuration',
  'too-many-redirects': 'redirect',
};

/**
 * One call to a partner's polling endpoint, through the shared outbound client
 * (TLS 1.2+, public addresses only, bounded time and size, redirects not followed).
 * Resolves with the batch; anything else is a PollError (or PollAborted).
 */
export async function fetchPartnerBatch(input: FetchBatchInput): Promise<PartnerBatch> {
  try {
    return await fetchOnce(input);
  } catch (err) {
    // Error texts quote the partner's answer (kept in the poll state, logged, shown to
    // operators); an answer that echoes the key Lumen sent must not spread it.
    if (err instanceof PollError && input.apiKey && err.message.includes(input.apiKey)) {
      throw new PollError(err.kind, err.message.split(input.apiKey).join('[redacted]'), err.retryAfterSeconds);
    }
    throw err;
  }
}

async function fetchOnce(input: FetchBatchInput): Promise<PartnerBatch> {
  let res;
  try {
    res = await outboundRequest({
      url: pollUrl(input.url, input.since, input.limit ?? POLL_LIMIT),
      method: 'GET',
      // A new trace per call (or the current request's, for a poll an operator asked for).
      headers: { 'x-api-key': input.apiKey, accept: 'application/json', 'user-agent': `Lumen/${VERSION} (partner polling)`, traceparent: outboundTraceparent() },
      timeoutMs: input.timeoutMs,
      maxResponseBytes: input.maxResponseBytes,
      allowLoopback: input.allowLoopback,
      maxRedirects: 0,
      signal: input.signal,
    });
  } catch (err) {
    if (err instanceof OutboundError) {
      if (err.kind === 'aborted') throw new PollAborted();
      throw new PollError(OUTBOUND_KINDS[err.kind] ?? 'network', err.message);
    }
    throw err;
  }

  if (res.status >= 300 && res.status <= 399) {
    throw new PollError('redirect', `the partner answered ${res.status} (redirects are not followed; register the final URL)`);
  }
  if (res.status < 200 || res.status > 299) {
    const text = snippet(res.body);
    throw new PollError('http-status', `the partner answered ${res.status}${text ? `: ${text}` : ''}`, parseRetryAfter(res.headers['retry-after']));
  }
  const text = res.body.toString('utf8').replace(/^\uFEFF/, '');
  if (text.trim() === '') throw new PollError('invalid-json', `the partner answered ${res.status} with an empty body`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new PollError('invalid-json', `the answer is not valid JSON: ${(err as Error).message}`);
  }
  try {
    return parseBatch(json);
  } catch (err) {
    if (err instanceof EnvelopeError) throw new PollError('invalid-envelope', err.message);
    throw err;
  }
}
