import { createClient, type Client } from '../../generated/partner-client/client/index.js';
import * as sdk from '../../generated/partner-client/sdk.gen.js';
import type { Problem } from '../../generated/partner-client/types.gen.js';

export interface LumenClientOptions {
  /** Where Lumen runs, e.g. `https://lumen.example.city` (no trailing `/api/...`). */
  baseUrl: string;
  /** The partner key (`lmn_live_…` or `lmn_test_…`), sent as `X-Api-Key`. */
  apiKey: string;
  /** `pt-BR` (Lumen's default) or `en`, for the human-readable texts. Default `en`. */
  language?: 'pt-BR' | 'en';
  /** A fetch of your own (proxies, tracing). Default: the global fetch. */
  fetch?: typeof fetch;
}

/** A non-2xx answer, with its problem+json body (`code`, `title`, `detail`, `errors[]` pointers). */
export class LumenApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Partial<Problem> & Record<string, unknown>,
    /** Seconds to wait, from `Retry-After` (429 and 503), else null. */
    readonly retryAfterSeconds: number | null,
  ) {
    super(`Lumen answered ${status}${problem.code ? ` ${String(problem.code)}` : ''}: ${String(problem.detail ?? problem.title ?? 'no detail')}`);
    this.name = 'LumenApiError';
  }
}

type Sdk = typeof sdk;
type Operation = { [K in keyof Sdk]: Sdk[K] extends (...args: never[]) => unknown ? K : never }[keyof Sdk];
type Data<K extends Operation> = NonNullable<Parameters<Sdk[K]>[0]>;
type Ok<K extends Operation> = Awaited<ReturnType<Sdk[K]>> extends infer R ? (R extends { data: infer D } ? Exclude<D, undefined> : never) : never;

/**
 * The partner API as typed calls. Every method resolves with the response body of a
 * 2xx answer and rejects with a LumenApiError otherwise; `status` tells 200 from 201
 * where that matters (intake).
 */
export interface LumenClient {
  readonly raw: Client;
  call<K extends Operation>(operation: K, options?: Omit<Data<K>, 'client'>): Promise<{ status: number; body: Ok<K>; headers: Headers }>;
}

export function createLumenClient(opts: LumenClientOptions): LumenClient {
  const raw = createClient({
    baseUrl: opts.baseUrl.replace(/\/+$/, ''),
    auth: () => opts.apiKey,
    headers: { 'Accept-Language': opts.language ?? 'en' },
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  return {
    raw,
    async call(operation, options) {
      const fn = sdk[operation] as unknown as (o: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
      const result = await fn({ ...(options ?? {}), client: raw });
      const res = result.response;
      if (!res.ok) {
        const problem = (result.error && typeof result.error === 'object' ? result.error : { detail: String(result.error ?? '') }) as LumenApiError['problem'];
        const retry = res.headers.get('retry-after');
        throw new LumenApiError(res.status, problem, retry !== null && /^\d+$/.test(retry) ? Number(retry) : null);
      }
      return { status: res.status, body: result.data as never, headers: res.headers };
    },
  };
}
