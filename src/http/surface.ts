import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
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
   * principal's quota here (429), in the same statement as the key lookup; its
   * `rateLimit` then only reports the decision.
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
  /**
   * Throws 429 when the principal's quota is spent (after authentication); otherwise the
   * headers that report the quota, added to the answer whatever it is.
   */
  rateLimit?(deps: AppDeps, principal: P, operationId: string): Promise<Record<string, string>>;
  /**
   * Admits the request before its body is read (429 when the principal has too many in
   * progress), and returns what to call when it is over; null when nothing is held.
   */
  admit?(deps: AppDeps, principal: P, operationId: string): (() => void) | null;
  readonly handlers: Readonly<Record<string, Handler<P>>>;
  /**
   * A surface whose protocol is not Lumen's own (Open311: a format extension on every
   * path, form bodies, keys in a query or form field, errors as its own list) answers
   * its requests itself; the server still owns the request id, language, throttling of
   * failed authentications, logging and metrics.
   */
  serve?(request: OwnRequest<P>): Promise<HttpResult>;
}

/** What the server gives a surface that answers its requests itself. */
export interface OwnRequest<P> {
  readonly deps: AppDeps;
  readonly req: IncomingMessage;
  readonly url: URL;
  readonly lang: Language;
  readonly requestId: string;
  readonly log: Logger;
  readonly signal: AbortSignal;
  /** Names the route for the metrics (its operationId once known). */
  route(name: string): void;
  /** The surface's authenticate for this operation, behind the server's throttle of failed attempts per address. */
  authenticate(headers: IncomingHttpHeaders, operationId: string): Promise<P>;
}
