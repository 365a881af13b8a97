import type { IncomingHttpHeaders } from 'node:http';
import type { OpenAPIBackend } from 'openapi-backend';
import type { Language } from '../lib/i18n.js';
import type { Logger } from '../lib/logger.js';
import type { AppDeps } from '../app-deps.js';
import type { HttpResult } from './problem.js';

/** Where a request came from: the peer's address and whether it came over TLS. */
export interface ClientInfo {
  readonly address: string;
  readonly secure: boolean;
}

export interface HandlerRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string | string[]>;
  readonly headers: IncomingHttpHeaders;
  readonly params: Record<string, string>;
  /** Parsed JSON body (undefined for operations without one). */
  readonly body: unknown;
  readonly client: ClientInfo;
}

export interface HandlerContext<P> {
  readonly deps: AppDeps;
  readonly principal: P;
  readonly request: HandlerRequest;
  readonly lang: Language;
  readonly requestId: string;
  readonly log: Logger;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
}

export type Handler<P> = (ctx: HandlerContext<P>) => Promise<HttpResult>;

/**
 * One OpenAPI document served under a base path: the partner API (/api/external)
 * and the admin API (/api/admin). Handlers are keyed by operationId.
 */
export interface ApiSurface<P> {
  readonly name: string;
  readonly basePath: string;
  readonly api: OpenAPIBackend;
  readonly document: Record<string, unknown>;
  /**
   * The caller, or 401/403. A surface may also count the request against the
   * principal's quota here (429), in the same statement as the key lookup; it then has
   * no `rateLimit`.
   */
  authenticate(deps: AppDeps, headers: IncomingHttpHeaders, request: { readonly method: string; readonly operationId: string; readonly client: ClientInfo }): Promise<P>;
  /**
   * Operations anyone may call, without credentials (the console's sign-in): no
   * authentication, authorization, rate limit or admission; their handlers get a null
   * principal. Default: none.
   */
  isPublic?(operationId: string): boolean;
  /** Throws 403 when the principal may not call this operation. */
  authorize(principal: P, operationId: string): void;
  /** Throws 429 when the principal's quota is spent (after authentication). */
  rateLimit?(deps: AppDeps, principal: P, operationId: string): Promise<void>;
  /**
   * Admits the request before its body is read (429 when the principal has too many in
   * progress), and returns what to call when it is over; null when nothing is held.
   */
  admit?(deps: AppDeps, principal: P, operationId: string): (() => void) | null;
  readonly handlers: Readonly<Record<string, Handler<P>>>;
}
