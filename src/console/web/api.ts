/**
 * The console's only way to the server: the client generated from openapi/admin.yaml
 * (generated/admin-client), so every request and answer has the contract's types.
 * Reads go through SWR (cache, revalidation on focus, retries with backoff);
 * changes go through `call`, which throws an ApiError carrying the problem+json.
 */
import { useEffect, useRef } from 'preact/hooks';
import useSWR, { type SWRConfiguration, type SWRResponse } from 'swr';
import { createClient } from '../../../generated/admin-client/client/index.js';
import * as sdk from '../../../generated/admin-client/sdk.gen.js';

export * as types from '../../../generated/admin-client/types.gen.js';

/** A non-2xx answer: the problem+json's title and detail, in the operator's language. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly code: string,
    /** Where the request was wrong (`/reasonCode`) and why, for 400 and 422. */
    readonly errors: { pointer: string; message: string }[] = [],
    /** The whole problem document, for the members an operation adds (a bulk action's `results`). */
    readonly problem: Record<string, unknown> = {},
  ) {
    super(`${title}: ${detail}`);
    this.name = 'ApiError';
  }
}

interface Credentials {
  /** The session's CSRF token, sent with every change (the cookie itself is HttpOnly). */
  csrfToken: string | null;
  language: string;
}

const credentials: Credentials = { csrfToken: null, language: 'pt-BR' };

export function setCsrfToken(token: string | null): void {
  credentials.csrfToken = token;
}

export function setApiLanguage(lang: string): void {
  credentials.language = lang;
}

// The session cookie travels by itself (HttpOnly: the page never sees it, and no
// token is ever kept where a script could read it).
export const client = createClient({ baseUrl: '', credentials: 'same-origin' });

client.interceptors.request.use((request) => {
  request.headers.set('Accept-Language', credentials.language);
  if (request.method !== 'GET' && request.method !== 'HEAD' && credentials.csrfToken) request.headers.set('X-CSRF-Token', credentials.csrfToken);
  // Every triage action and an order's cancellation can be undone for a few seconds:
  // the server holds the partner's events meanwhile (openapi: Prefer: undo).
  if (request.method === 'POST' && UNDOABLE.test(new URL(request.url, window.location.href).pathname)) request.headers.set('Prefer', 'undo');
  return request;
});

const UNDOABLE = /^\/api\/admin\/(alerts\/bulk|alerts\/[^/]+\/(create-order|link|discard|reclassify)|service-orders\/[^/]+\/cancel)$/;

/** An action that can still be undone: its id, the end of its window (ms, this clock), and the console path it was made on. */
export interface UndoTicket {
  actionId: string;
  until: number;
  returnTo: string;
}

let onUndoable: ((ticket: UndoTicket) => void) | null = null;

/** Who shows the undo offer after an undoable action (the feedback bar). */
export function whenUndoable(handler: ((ticket: UndoTicket) => void) | null): void {
  onUndoable = handler;
}

client.interceptors.response.use((response) => {
  const actionId = response.headers.get('lumen-undo-action');
  const until = Date.parse(response.headers.get('lumen-undo-until') ?? '');
  if (response.ok && actionId && Number.isFinite(until)) {
    // The server's clock may differ from this one: the window is counted from its Date
    // header (whole seconds, hence a second less), on this clock.
    const served = Date.parse(response.headers.get('date') ?? '');
    const left = Number.isFinite(served) ? until - served - 1000 : 9000;
    onUndoable?.({ actionId, until: Date.now() + Math.min(Math.max(left, 0), 120_000), returnTo: window.location.pathname + window.location.search });
  }
  return response;
});

type Sdk = typeof sdk;
export type Operation = { [K in keyof Sdk]: Sdk[K] extends (...args: never[]) => unknown ? K : never }[keyof Sdk];
export type Input<K extends Operation> = Omit<NonNullable<Parameters<Sdk[K]>[0]>, 'client'>;
export type Output<K extends Operation> = Awaited<ReturnType<Sdk[K]>> extends infer R ? (R extends { data: infer D } ? Exclude<D, undefined> : never) : never;

function problemOf(status: number, body: unknown, statusText: string): ApiError {
  const p = (body && typeof body === 'object' ? body : {}) as { title?: unknown; detail?: unknown; type?: unknown; errors?: unknown };
  const code = typeof p.type === 'string' ? p.type.replace(/^urn:lumen:problem:/, '') : String(status);
  const errors = Array.isArray(p.errors)
    ? p.errors.filter((e): e is { pointer: string; message: string } => !!e && typeof e === 'object' && typeof e.pointer === 'string' && typeof e.message === 'string')
    : [];
  return new ApiError(status, typeof p.title === 'string' ? p.title : statusText || `HTTP ${status}`, typeof p.detail === 'string' ? p.detail : '', code, errors, p as Record<string, unknown>);
}

/** One operation of the admin API: its 2xx body, or an ApiError. */
export async function call<K extends Operation>(operation: K, input?: Input<K>): Promise<Output<K>> {
  const fn = sdk[operation] as unknown as (o: object) => Promise<{ data?: unknown; error?: unknown; response?: Response }>;
  let result: { data?: unknown; error?: unknown; response?: Response };
  try {
    result = await fn({ ...(input ?? {}), client });
  } catch (err) {
    throw new ApiError(0, 'Network', err instanceof Error ? err.message : String(err), 'network');
  }
  const res = result.response;
  if (!res) throw new ApiError(0, 'Network', String(result.error ?? ''), 'network');
  if (!res.ok) {
    if (res.status === 401) onUnauthorized?.();
    throw problemOf(res.status, result.error, res.statusText);
  }
  return result.data as Output<K>;
}

let onUnauthorized: (() => void) | null = null;

/** What to do when the session ends under the console (expired, signed out elsewhere). */
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

/** A read, cached by operation and input; `null` input waits (a dependent read). */
export function useApi<K extends Operation>(operation: K, input: Input<K> | null, config?: SWRConfiguration<Output<K>, ApiError>): SWRResponse<Output<K>, ApiError> {
  return useSWR<Output<K>, ApiError>(input === null ? null : [operation, JSON.stringify(input)], () => call(operation, input as Input<K>), {
    // 4xx answers will not change by asking again; network faults and 5xx are retried.
    shouldRetryOnError: (err: ApiError) => err.status === 0 || err.status >= 500,
    errorRetryCount: 4,
    ...config,
  });
}

/**
 * Reads again when `version` changes (an entity's updatedAt after a change made on the
 * page), not when the component mounts: the first read is the hook's own.
 */
export function useRefreshOn(version: string, read: { mutate: () => unknown }): void {
  const seen = useRef(version);
  useEffect(() => {
    if (seen.current === version) return;
    seen.current = version;
    void read.mutate();
  }, [version, read]);
}

/** The same read for each of several inputs (a list's per-item detail), as one cached answer in the inputs' order. */
export function useApiEach<K extends Operation>(operation: K, inputs: Input<K>[] | null, config?: SWRConfiguration<Output<K>[], ApiError>): SWRResponse<Output<K>[], ApiError> {
  return useSWR<Output<K>[], ApiError>(inputs === null ? null : [`${operation}[]`, JSON.stringify(inputs)], () => Promise.all(inputs!.map((input) => call(operation, input))), {
    shouldRetryOnError: (err: ApiError) => err.status === 0 || err.status >= 500,
    errorRetryCount: 4,
    ...config,
  });
}
