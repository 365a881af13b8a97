import { OutboundError, outboundRequest } from '../../lib/outbound-http.js';
import { VERSION } from '../../version.js';
import { MAX_ATTACHMENT_BYTES } from './content.js';
import type { AttachmentErrorCode, DownloadCause } from './messages.js';

/** Downloads are tried this many times at most (interface 2.7). */
export const DOWNLOAD_ATTEMPTS = 3;

/** HTTP statuses below 500 that are tried again (every 5xx is). */
const RETRIED_STATUSES = new Set([404, 408, 429]);

export interface DownloadLimits {
  attemptTimeoutMs: number;
  totalTimeoutMs: number;
  retryDelayMs: number;
  allowLoopback: boolean;
  /** Whose share of the process's outbound requests the download takes (the city's id). */
  shareKey?: string;
}

export type DownloadResult =
  | { ok: true; bytes: Buffer; attempts: number }
  | { ok: false; code: AttachmentErrorCode; params: Record<string, string | number>; detail: string; attempts: number };

/**
 * GET of an attachment URL through the outbound guard (HTTPS, public addresses only,
 * 5 MiB cut while streaming). Transient failures (timeouts, connection and TLS errors,
 * 404 (a signed URL can answer 404 for a moment after it is issued), 408, 429, 5xx) are
 * tried again after retryDelayMs, then twice that, three attempts in all (interface 2.7);
 * a refusal (non-HTTPS, a non-public address written in the URL, too large) or another
 * HTTP status is final at once. A name that resolves to a non-public address counts as
 * a connection failure, like a name that does not resolve.
 * Every attempt, and the whole download with its pauses, is time-bounded.
 */
export async function downloadAttachment(url: string, limits: DownloadLimits, signal?: AbortSignal): Promise<DownloadResult> {
  const deadline = Date.now() + limits.totalTimeoutMs;
  let last: { cause: DownloadCause; status?: number; detail: string } = { cause: 'timeout', detail: 'no attempt fitted in the time bound' };
  let attempts = 0;
  while (attempts < DOWNLOAD_ATTEMPTS) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    attempts++;
    try {
      const res = await outboundRequest({
        url,
        headers: { 'user-agent': `Lumen/${VERSION}`, accept: 'image/jpeg, image/png, image/webp;q=0.9, */*;q=0.1' },
        timeoutMs: Math.min(limits.attemptTimeoutMs, remaining),
        maxResponseBytes: MAX_ATTACHMENT_BYTES,
        allowLoopback: limits.allowLoopback,
        shareKey: limits.shareKey,
        maxRedirects: 3,
        signal,
      });
      if (res.status >= 200 && res.status < 300) return { ok: true, bytes: res.body, attempts };
      last = { cause: 'http', status: res.status, detail: `HTTP ${res.status}` };
      if (!RETRIED_STATUSES.has(res.status) && res.status < 500) break;
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err;
      switch (err.kind) {
        case 'invalid-url':
          return { ok: false, code: 'invalid-url', params: {}, detail: err.message, attempts };
        case 'insecure-scheme':
          return { ok: false, code: 'insecure-url', params: {}, detail: err.message, attempts };
        case 'blocked-address':
          // An address written in the URL is refused as such. A name that resolves to a
          // non-public address fails exactly like a name that does not resolve (retried,
          // "connection failed"): the answer must not tell a partner which internal names
          // exist. Operators still see why in the failure's detail.
          if (!err.viaName) return { ok: false, code: 'blocked-address', params: {}, detail: err.message, attempts };
          last = { cause: 'network', detail: err.message };
          break;
        case 'too-large':
          return { ok: false, code: 'too-large', params: {}, detail: err.message, attempts };
        case 'aborted':
          throw err;
        case 'too-many-redirects':
          last = { cause: 'redirects', detail: err.message };
          return failed(last, attempts);
        default:
          last = { cause: err.kind, detail: err.message };
      }
    }
    if (attempts < DOWNLOAD_ATTEMPTS) {
      const pause = limits.retryDelayMs * 2 ** (attempts - 1);
      if (Date.now() + pause >= deadline) break;
      await sleep(pause, signal);
    }
  }
  return failed(last, attempts);
}

function failed(last: { cause: DownloadCause; status?: number; detail: string }, attempts: number): DownloadResult {
  const params: Record<string, string | number> = { attempts, cause: last.cause };
  if (last.status !== undefined) params.status = last.status;
  return { ok: false, code: 'download-failed', params, detail: last.detail, attempts };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new OutboundError('aborted', 'aborted'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new OutboundError('aborted', 'aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
