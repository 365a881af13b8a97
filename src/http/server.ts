import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { AppError, problemType } from '../lib/errors.js';
import { negotiateLanguage, type Language } from '../lib/i18n.js';
import { JsonText } from '../lib/json-text.js';
import { StreamBody } from '../lib/stream-body.js';
import { pipeline } from 'node:stream/promises';
import type { AppDeps } from '../app-deps.js';
import { migrationsApplied } from '../db/migrator.js';
import { readJson } from './body.js';
import { Budget, type Lease } from '../lib/budget.js';
import { matchOperation, nonDecimalParameters, unstorableParts, validationProblem } from '../lib/openapi.js';
import { problemResult, type HttpResult } from './problem.js';
import { clientErrorBody, refusedPath } from './client-error.js';
import type { ApiSurface, ClientInfo } from './surface.js';
import { docsRoute } from './docs.js';
import { consolePage, isConsolePath } from './console.js';
import { AuthFailureThrottle } from './auth-failures.js';
import { compress, compressible, COMPRESS_MIN_BYTES, negotiateEncoding } from './compress.js';
import { formatTraceparent, parseTraceparent, withTrace } from '../lib/trace-context.js';
import { TrustedProxies } from '../lib/trusted-proxies.js';
import { setPasswordHashConcurrency } from '../services/operators/index.js';
import { ConnectionGuard, connectionLimits, healthOnly, raiseOpenFilesLimit } from './connection-guard.js';

export interface HttpServer {
  readonly server: http.Server;
  listen(): Promise<AddressInfo>;
  /** Stop accepting, let in-flight requests finish (up to the grace period), then close. */
  close(): Promise<void>;
  /** True while draining; /readyz answers 503. */
  readonly draining: boolean;
  /** Requests being handled right now. */
  readonly inFlight: number;
  /** `/livez` or `/readyz` as this server answers them (also served on LUMEN_METRICS_PORT, outside the connection caps); null for another path. */
  health(path: string): Promise<HttpResult> | null;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

interface RouteContext {
  lang: Language;
  requestId: string;
  log: AppDeps['log'];
  signal: AbortSignal;
  /** Filled in as the route is found: the metrics label. */
  route: { name: string };
}

async function send(res: ServerResponse, result: HttpResult, lang: Language, requestId: string, acceptEncoding: string | undefined): Promise<void> {
  if (res.headersSent) return;
  const headers: Record<string, string> = { 'x-request-id': requestId, 'content-language': lang, ...result.headers };
  if (result.body === undefined) {
    res.writeHead(result.status, headers).end();
    return;
  }
  if (result.body instanceof StreamBody) {
    // Written as produced, with back-pressure; no Content-Length and no compression (a
    // CSV of a million rows is streamed, not held). A client that goes away ends the
    // pipeline, which destroys the source (and so releases what produces it).
    headers['content-type'] = result.contentType ?? 'application/octet-stream';
    res.writeHead(result.status, headers);
    await pipeline(result.body.open(), res).catch(() => res.destroy());
    return;
  }
  headers['content-type'] = result.contentType ?? 'application/json; charset=utf-8';
  if (headers['content-type'] === 'application/problem+json') headers['content-type'] = 'application/problem+json; charset=utf-8';
  const canCompress = compressible(headers['content-type']);
  // gzip or br when the client asks (a page of 1000 poles shrinks about tenfold).
  if (canCompress) headers.vary = headers.vary ? `${headers.vary}, Accept-Encoding` : 'Accept-Encoding';
  const encoding = canCompress ? negotiateEncoding(acceptEncoding) : null;
  const body = result.body;
  if (body instanceof JsonText) {
    const length = body.byteLength();
    if (encoding === null || length < COMPRESS_MIN_BYTES) {
      // Piece by piece, in one write (corked): the text is encoded once, by the socket.
      if (res.headersSent || res.destroyed) return;
      res.writeHead(result.status, { ...headers, 'content-length': String(length) });
      res.cork();
      for (const part of body.parts) res.write(part, 'utf8');
      res.end();
      return;
    }
  }
  const text = typeof body === 'string' || Buffer.isBuffer(body) ? body : body instanceof JsonText ? body.text : JSON.stringify(body);
  let payload = Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8');
  if (encoding !== null && payload.length >= COMPRESS_MIN_BYTES) {
    payload = await compress(payload, encoding);
    headers['content-encoding'] = encoding;
  }
  if (res.headersSent || res.destroyed) return;
  res.writeHead(result.status, headers).end(payload);
}

function splitQuery(url: URL): Record<string, string | string[]> {
  // No prototype: a parameter named __proto__ or constructor is just an (unknown) parameter.
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [k, v] of url.searchParams) {
    const prev = Object.hasOwn(out, k) ? out[k] : undefined;
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

/**
 * A request Node could not even parse (bad request line, invalid header characters,
 * broken chunked framing, headers too large or too slow) never reaches routing; it
 * still gets an RFC 9457 body, in the default language, and the connection is closed.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex, requestTimeoutMs: number, log: AppDeps['log']): void {
  const current = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || current?.headersSent) {
    socket.destroy();
    return;
  }
  const problem =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new AppError('request-timeout', { seconds: Math.round(requestTimeoutMs / 1000) })
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? new AppError('headers-too-large')
        : new AppError('malformed-request', { reason: (err.code ?? 'unreadable').replace(/^HPE_/, '').toLowerCase().replaceAll('_', ' ') });
  const requestId = randomUUID();
  const lang: Language = 'pt-BR';
  const { contentType, body } = clientErrorBody(problem, refusedPath((err as { rawPacket?: unknown }).rawPacket), requestId, lang);
  log.info({ requestId, status: problem.status, reason: err.code }, 'unreadable request refused');
  // Destroyed once written, not merely ended: an ended socket keeps its descriptor until
  // the client closes too (FIN-WAIT-2), and a client that never does would hold it.
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${problem.status} ${http.STATUS_CODES[problem.status]}\r\nConnection: close\r\nContent-Type: ${contentType}\r\n` +
      `Content-Language: ${lang}\r\nX-Request-Id: ${requestId}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** How long, and for how many bytes, a refused upload is still read and discarded. */
const LINGER_MS = 2_000;
const LINGER_BYTES = 16 * 1024 * 1024;

/**
 * A refusal sent before the client finished its body (413, 408) closes the connection.
 * Closing a socket that still has unread bytes makes the kernel answer with a reset,
 * which can wipe the refusal out before the client reads it. So, as web servers do
 * (a "lingering close"), Lumen sends its answer, shuts its side, and keeps reading and
 * discarding what the client still sends for a moment (at most LINGER_MS and
 * LINGER_BYTES) before it closes.
 */
function lingerAfterRefusal(req: IncomingMessage): void {
  const socket = req.socket as Duplex & { destroySoon?: () => void };
  req.resume();
  // Node calls destroySoon() once the answer is written (the response said close).
  socket.destroySoon = () => {
    socket.end();
    let read = 0;
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > LINGER_BYTES) socket.destroy();
    });
    socket.once('close', () => clearTimeout(timer));
    socket.once('end', () => socket.destroy());
  };
}

/** A request past authentication, authorization and the rate limits, before its body is read. */
interface AdmittedRequest {
  method: string;
  query: Record<string, string | string[]>;
  oasReq: { method: string; path: string; query: Record<string, string | string[]>; headers: Record<string, string | string[]> };
  operation: ReturnType<typeof matchOperation>;
  operationId: string;
  principal: unknown;
  client: ClientInfo;
}

export function createHttpServer(deps: AppDeps, surfaces: readonly ApiSurface<unknown>[]): HttpServer {
  const { config, log } = deps;
  let draining = false;
  let inFlight = 0;
  const authFailures = new AuthFailureThrottle(config.authFailuresPerMinute);
  const proxies = new TrustedProxies(config.trustedProxies);
  setPasswordHashConcurrency(config.passwordHashes);
  const guard = new ConnectionGuard(connectionLimits(raiseOpenFilesLimit((msg, fields) => log.info(fields, msg)), { total: config.maxConnections, perAddress: config.maxConnectionsPerAddress }), proxies);
  /** Who sent the request: the TCP peer, or the client a trusted proxy names (LUMEN_TRUSTED_PROXIES). */
  const clientOf = (req: IncomingMessage): ClientInfo => ({
    address: proxies.clientOf(req.socket.remoteAddress ?? 'unknown', req.headers),
    secure: (req.socket as { encrypted?: boolean }).encrypted === true,
  });
  // Request bodies held in memory at once by this server (LUMEN_BODY_MEMORY).
  const bodies = new Budget(config.bodyMemoryBytes);

  /** The surface's authentication, refused at once (429) for an address with too many recent failures. */
  async function authenticate(surface: ApiSurface<unknown>, headers: IncomingMessage['headers'], request: { method: string; operationId: string; client: ClientInfo }): Promise<unknown> {
    const wait = authFailures.retryAfter(request.client.address);
    if (wait !== null) throw new AppError('rate-limited', { retryAfter: wait }, undefined, { 'retry-after': String(wait) });
    try {
      return await surface.authenticate(deps, headers, request);
    } catch (err) {
      if (err instanceof AppError && err.status === 401) authFailures.fail(request.client.address);
      throw err;
    }
  }

  async function dispatch(surface: ApiSurface<unknown>, req: IncomingMessage, url: URL, ctx: RouteContext): Promise<HttpResult> {
    const method = (req.method ?? 'GET').toLowerCase();
    const query = splitQuery(url);
    const oasReq = { method, path: url.pathname, query, headers: req.headers as Record<string, string | string[]> };
    const operation = matchOperation(surface.api, oasReq);
    const operationId = operation.operationId!;
    ctx.route.name = operationId;

    const client = clientOf(req);
    if (surface.isPublic?.(operationId)) return admitted(surface, req, url, ctx, { method, query, oasReq, operation, operationId, principal: null, client });
    const principal = await authenticate(surface, req.headers, { method, operationId, client });
    surface.authorize(principal, operationId);
    // Counted requests report their quota on every answer, errors included.
    const quota = (await surface.rateLimit?.(deps, principal, operationId)) ?? {};
    try {
      const release = surface.admit?.(deps, principal, operationId) ?? null;
      try {
        const result = await admitted(surface, req, url, ctx, { method, query, oasReq, operation, operationId, principal, client });
        return { ...result, headers: { ...quota, ...result.headers } };
      } finally {
        release?.();
      }
    } catch (err) {
      throw err instanceof AppError ? err.withHeaders(quota) : err;
    }
  }

  async function admitted(
    surface: ApiSurface<unknown>,
    req: IncomingMessage,
    url: URL,
    ctx: RouteContext,
    r: AdmittedRequest,
  ): Promise<HttpResult> {
    let body: unknown;
    // A body the operation may go without (`required: false`), not sent at all: nothing to read.
    const expectsBody = !!r.operation.requestBody && !(optionalBody(r.operation.requestBody) && bodyAbsent(req));
    const held = expectsBody ? await holdBodyMemory(req, ctx.signal) : null;
    try {
      if (expectsBody) {
        // Held whole until the request ends: the parsed value lives that long, and the
        // bytes and text it was parsed from are garbage that the collector frees only later.
        body = await readJson(req, config.bodyLimitBytes, config.bodyTimeoutMs);
      }
      return await handle(surface, req, url, ctx, { ...r, body });
    } finally {
      held?.release();
    }
  }

  /**
   * Room in LUMEN_BODY_MEMORY for a body about to be read: three times its Content-Length
   * (three times the body limit when it declares none), as measured: its bytes, its text
   * and the parsed value are all in memory until the collector frees the first two, some
   * time after they are dropped. Waits, never fails, unless the client leaves; a body
   * that declares more than the limit does not wait (readBody refuses it at once).
   */
  async function holdBodyMemory(req: IncomingMessage, signal: AbortSignal): Promise<Lease | null> {
    const declared = Number(req.headers['content-length']);
    const size = Number.isSafeInteger(declared) && declared >= 0 ? declared : config.bodyLimitBytes;
    if (size > config.bodyLimitBytes) return null;
    return bodies.acquire(3 * size, signal);
  }

  async function handle(
    surface: ApiSurface<unknown>,
    req: IncomingMessage,
    url: URL,
    ctx: RouteContext,
    r: AdmittedRequest & { body: unknown },
  ): Promise<HttpResult> {
    const { method, query, oasReq, operation, operationId, principal, client, body } = r;

    let params: Record<string, string>;
    try {
      params = surface.api.router.parseRequest(oasReq, operation).params as Record<string, string>;
    } catch (err) {
      // A path value with a broken percent-escape (`%E0%A4%A`) cannot be decoded.
      if (!(err instanceof URIError)) throw err;
      throw new AppError('invalid-parameter', {}, [{ pointer: '/path', message: 'is not valid percent-encoded UTF-8' }]);
    }
    const nulParameters = [
      ...Object.entries(query).filter(([, v]) => [v].flat().some((x) => x.includes('\u0000'))).map(([k]) => `/query/${k}`),
      ...Object.entries(params).filter(([, v]) => typeof v === 'string' && v.includes('\u0000')).map(([k]) => `/path/${k}`),
    ];
    if (nulParameters.length > 0) throw new AppError('invalid-parameter', {}, nulParameters.map((pointer) => ({ pointer, message: 'must not contain the NUL character (U+0000)' })));
    const nonDecimal = nonDecimalParameters(operation, query, params);
    if (nonDecimal.length > 0) throw new AppError('invalid-parameter', {}, nonDecimal);
    const unstorable = body === undefined ? [] : unstorableParts(body);
    if (unstorable.length > 0) throw new AppError('validation-failed', { count: unstorable.length }, unstorable);
    const validation = surface.api.validateRequest({ ...oasReq, body }, operation);
    if (!validation.valid) throw validationProblem(validation.errors ?? []);

    const handler = surface.handlers[operationId];
    if (!handler) throw new Error(`no handler for operation ${operationId}`);
    const result = await handler({ deps, principal, request: { method, path: url.pathname, query, headers: req.headers, params, body, client }, lang: ctx.lang, requestId: ctx.requestId, log: ctx.log, signal: ctx.signal });

    // A binary body (an attachment's image) has no JSON to check: its content type is set by the handler from the stored row.
    if (config.validateResponses && !Buffer.isBuffer(result.body) && !(result.body instanceof StreamBody)) {
      // No body (a 204) is checked as null, which is how the validator reads "no content".
      const check = surface.api.validateResponse(result.body instanceof JsonText ? result.body.parse() : (result.body ?? null), operation, result.status);
      if (check.errors && check.errors.length > 0) {
        ctx.log.error({ operationId, status: result.status, errors: check.errors }, 'response does not match the OpenAPI document');
        throw new Error(`response of ${operationId} (${result.status}) breaks the contract: ${JSON.stringify(check.errors)}`);
      }
    }
    return result;
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const incomingId = req.headers['x-request-id'];
    const requestId = typeof incomingId === 'string' && REQUEST_ID.test(incomingId) ? incomingId : randomUUID();
    const lang = negotiateLanguage(req.headers['accept-language']);
    // W3C Trace Context: a valid traceparent is logged with the request id, and outbound
    // calls made while serving the request continue its trace.
    const trace = parseTraceparent(req.headers.traceparent);
    const reqLog = log.child(trace ? { requestId, traceparent: formatTraceparent(trace) } : { requestId });
    const started = process.hrtime.bigint();
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://lumen.local');
    } catch {
      url = new URL('http://lumen.local/');
    }
    let result: HttpResult;
    // The metrics label: the operationId once matched, else the kind of route.
    const routeName = { name: 'unmatched' };
    try {
      result = await withTrace(trace, () => handleRoute(req, url, { lang, requestId, log: reqLog, signal: abort.signal, route: routeName }));
    } catch (err) {
      if (abort.signal.aborted && cutShortByAbort(err, abort.signal)) {
        // The client went away before its answer (its own timeout, a cancelled load
        // test): the work was cut short by the signal (a download or geocoding call
        // aborted) before anything was written; nobody is left to answer and it is not
        // a server error. What cut it short is kept in the line.
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        const cause = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
        reqLog.info({ method: req.method, path: url.pathname, ms: Math.round(ms * 10) / 10, cause }, 'request abandoned by the client');
        return;
      }
      result = problemResult(err, { lang, requestId, instance: url.pathname, log: reqLog });
    }
    if (result.headers?.connection === 'close' && !req.complete) lingerAfterRefusal(req);
    await send(res, result, lang, requestId, req.headers['accept-encoding']);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    deps.metrics.observeRequest(routeName.name, result.status, ms / 1000);
    reqLog.info({ method: req.method, path: url.pathname, status: result.status, ms: Math.round(ms * 10) / 10 }, 'request');
  }

  async function handleRoute(req: IncomingMessage, url: URL, ctx: RouteContext): Promise<HttpResult> {
    const p = url.pathname;
    const found = (name: string, result: HttpResult | Promise<HttpResult>) => {
      ctx.route.name = name;
      return result;
    };
    if (p === '/livez') return found('livez', liveness());
    if (p === '/readyz') return found('readyz', readiness());
    if (req.method === 'GET' || req.method === 'HEAD') {
      if (p === '/metrics' && config.metricsPort === null) return found('metrics', scrapeMetrics());
      const doc = surfaces.find((s) => p === `${s.basePath}/openapi.json`);
      if (doc) return found('openapi', { status: 200, body: doc.document, headers: { 'cache-control': 'no-cache' } });
      const docs = await docsRoute(p);
      if (docs) return found('docs', docs);
      if (isConsolePath(p)) return found('console', consolePage(p, config));
    }
    const surface = surfaces.find((s) => p === s.basePath || p.startsWith(`${s.basePath}/`));
    if (!surface) throw new AppError('not-found', { resource: p });
    if (surface.serve) {
      const client = clientOf(req);
      const method = (req.method ?? 'GET').toLowerCase();
      return surface.serve({
        deps,
        req,
        url,
        lang: ctx.lang,
        requestId: ctx.requestId,
        log: ctx.log,
        signal: ctx.signal,
        route: (name) => (ctx.route.name = name),
        authenticate: (headers, operationId) => authenticate(surface, headers, { method, operationId, client }),
        holdBodyMemory: () => holdBodyMemory(req, ctx.signal),
      });
    }
    return dispatch(surface, req, url, ctx);
  }

  /** Prometheus exposition (src/metrics); on its own port instead when LUMEN_METRICS_PORT is set. */
  async function scrapeMetrics(): Promise<HttpResult> {
    const scraped = await deps.metrics.scrape();
    return { status: 200, body: scraped.body, contentType: scraped.contentType, headers: { 'cache-control': 'no-store' } };
  }

  function liveness(): HttpResult {
    const failure = deps.failure?.() ?? null;
    return failure ? { status: 503, body: { status: 'failing', reason: failure } } : { status: 200, body: { status: 'ok' } };
  }

  async function readiness(): Promise<HttpResult> {
    if (draining) return { status: 503, body: { status: 'draining' } };
    try {
      await deps.pool.query('SELECT 1');
    } catch {
      return { status: 503, body: { status: 'unavailable', database: 'unreachable' } };
    }
    if (!(await migrationsApplied(deps.pool))) return { status: 503, body: { status: 'unavailable', database: 'migrations pending' } };
    const secrets = deps.secretsProblem?.() ?? null;
    if (secrets) return { status: 503, body: { status: 'unavailable', secrets } };
    // A read replica that is behind or gone does not make the instance unready: its reads go to the primary.
    if (deps.reads.configured) {
      const r = deps.reads.status();
      return { status: 200, body: { status: 'ok', reads: { on: r.state === 'in-use' ? 'replica' : 'primary', replica: r.state, lagSeconds: r.lagSeconds, checkedAt: r.checkedAt } } };
    }
    return { status: 200, body: { status: 'ok' } };
  }

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    // A connection admitted past the cap carries health checks only (src/http/connection-guard.ts).
    if (healthOnly(req.socket) && !/^\/(livez|readyz)(\?|$)/.test(req.url ?? '')) {
      res.writeHead(503, { 'content-type': 'application/problem+json; charset=utf-8', 'retry-after': '1', connection: 'close' });
      res.end(JSON.stringify({ type: problemType('unavailable'), title: 'Service unavailable', status: 503, detail: 'Too many connections are open; retry in a moment.', instance: '/' }));
      return;
    }
    inFlight++;
    res.on('close', () => {
      inFlight--;
      if (draining) server.closeIdleConnections();
    });
    void route(req, res);
  };

  // Timeouts are checked every second (Node's default is 30 s), so a stalled connection is
  // closed within a second of its deadline rather than up to half a minute later.
  const checking = { connectionsCheckingInterval: 1000 };
  const server: http.Server = config.tls
    ? (https.createServer({ cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile), minVersion: 'TLSv1.2', ...checking }, listener) as unknown as http.Server)
    : http.createServer(checking, listener);
  server.on('connection', (socket) => guard.admit(socket));
  // Slow or stalled clients cannot hold a connection open forever: headers within 20 s,
  // the body within LUMEN_BODY_TIMEOUT_MS (readBody answers 408 itself); Node's own
  // whole-request limit stays behind both as a backstop.
  server.headersTimeout = 20_000;
  server.requestTimeout = server.headersTimeout + config.bodyTimeoutMs + 5_000;
  server.keepAliveTimeout = 5_000;
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => answerClientError(err, socket, server.requestTimeout, log));

  return {
    server,
    health: (path) => (path === '/livez' ? Promise.resolve(liveness()) : path === '/readyz' ? readiness() : null),
    get draining() {
      return draining;
    },
    get inFlight() {
      return inFlight;
    },
    listen: () =>
      new Promise<AddressInfo>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        draining = true;
        const force = setTimeout(() => server.closeAllConnections(), config.shutdownGraceSeconds * 1000);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
        if (inFlight === 0) server.closeAllConnections();
      }),
  };
}

/**
 * The error is what the client's disconnect caused (the signal's own reason, an
 * AbortError, or an outbound call aborted by it), not a fault that happened to coincide.
 */
function cutShortByAbort(err: unknown, signal: AbortSignal): boolean {
  if (err === signal.reason) return true;
  if (!(err instanceof Error)) return false;
  return err.name === 'AbortError' || (err as { kind?: unknown }).kind === 'aborted';
}

function optionalBody(requestBody: unknown): boolean {
  return !(requestBody as { required?: boolean }).required;
}

/** No body on the wire: no Content-Length (or 0) and no Transfer-Encoding. */
function bodyAbsent(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] === undefined && (length === undefined || length.trim() === '0');
}
