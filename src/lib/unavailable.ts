import { AppError } from './errors.js';

/** PostgreSQL SQLSTATEs and socket errors that mean "the database cannot be reached now", not a fault of the request. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', '57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08004', '08006']);
const UNREACHABLE_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|the database system is (starting up|shutting down|in recovery mode)|Connection ended unexpectedly/i;

/** Seconds a client should wait before trying again when the database is away. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** True when an error (or its cause) says the database could not be reached or went away mid-request. */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true;
    if (e instanceof Error && UNREACHABLE_MESSAGES.test(e.message)) return true;
    if (e instanceof AggregateError && e.errors.some((x) => isDatabaseUnavailable(x))) return true;
  }
  return false;
}

/** The answer to such an error: 503 service-unavailable with Retry-After, on every surface. */
export function databaseUnavailable(): AppError {
  return new AppError('service-unavailable', { retryAfter: DATABASE_RETRY_AFTER_SECONDS }, undefined, { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) });
}
