import type { Language } from '../lib/i18n.js';
import { AppError, problemType } from '../lib/errors.js';
import { databaseUnavailable, isDatabaseUnavailable } from '../lib/unavailable.js';
import type { Logger } from '../lib/logger.js';

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  requestId: string;
  errors?: { pointer: string; message: string }[];
}

export interface HttpResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Defaults to application/json (application/problem+json for problems). */
  contentType?: string;
}

/**
 * The one mapper from errors to RFC 9457 problem+json. An AppError keeps its code;
 * anything else is logged with its stack and answered as an opaque 500.
 */
export function problemResult(err: unknown, ctx: { lang: Language; requestId: string; instance: string; log: Logger }): HttpResult {
  // The database away (stopped, restarting, out of connections) is an outage, not a bug: 503 with Retry-After.
  const appErr = err instanceof AppError ? err : isDatabaseUnavailable(err) ? databaseUnavailable() : null;
  if (!appErr) ctx.log.error({ err }, 'unhandled error');
  else if (!(err instanceof AppError)) ctx.log.warn({ err: (err as Error).message }, 'database unavailable: answered 503');
  const e = appErr ?? new AppError('internal-error');
  const body: ProblemBody = {
    type: problemType(e.code),
    title: e.title(ctx.lang),
    status: e.status,
    detail: e.detail(ctx.lang),
    instance: ctx.instance,
    requestId: ctx.requestId,
  };
  if (e.errors && e.errors.length > 0) body.errors = e.errors;
  if (e.extensions) Object.assign(body, e.extensions, { ...body });
  return { status: e.status, body, headers: e.headers, contentType: 'application/problem+json' };
}
