import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { AppError } from '../lib/errors.js';
import { negotiateLanguage, type Language } from '../lib/i18n.js';
import type { AppDeps } from '../app-deps.js';
import { migrationsApplied } from '../db/migrator.js';
import { readBody, parseJson, requireJson } from './body.js';
import { matchOperation, validationProblem } from './openapi.js';
import { problemResult, type HttpResult } from './problem.js';
import type { ApiSurface } from './surface.js';
import { docsPage, docsAsset } from './docs.js';

export interface HttpServer {
  readonly server: http.Server;
  listen(): Promise<AddressInfo>;
  /** Stop accepting, let in-flight requests finish (up to the grace period), then close. */
  close(): Promise<void>;
  /** True while draining; /readyz answers 503. */
  readonly draining: boolean;
  /** Requests being handled right now. */
  readonly inFlight: number;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

function send(res: ServerResponse, result: HttpResult, lang: Language, requestId: string): void {
  if (res.headersSent) return;
  const headers: Record<string, string> = { 'x-request-id': requestId, 'content-language': lang, ...result.headers };
  if (result.body === undefined) {
    res.writeHead(result.status, headers).end();
    return;
  }
  const payload = typeof result.body === 'string' || Buffer.isBuffer(result.body) ? result.body : JSON.stringify(result.body);
  headers['content-type'] = result.contentType ?? 'application/json; charset=utf-8';
  if (headers['content-type'] === 'application/problem+json') headers['content-type'] = 'application/problem+json; charset=utf-8';
  res.writeHead(result.status, headers).end(payload);
}

function splitQuery(url: URL): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of url.searchParams) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

export function createHttpServer(deps: AppDeps, surfaces: readonly ApiSurface<unknown>[]): HttpServer {
  const { config, log } = deps;
  let draining = false;
  let inFlight = 0;

  async function dispatch(surface: ApiSurface<unknown>, req: IncomingMessage, url: URL, ctx: { lang: Language; requestId: string; log: typeof log; signal: AbortSignal }): Promise<HttpResult> {
    const method = (req.method ?? 'GET').toLowerCase();
    const query = splitQuery(url);
    const oasReq = { method, path: url.pathname, query, headers: req.headers as Record<string, string | string[]> };
    const operation = matchOperation(surface.api, oasReq);
    const operationId = operation.operationId!;

    const principal = await surface.authenticate(deps, req.headers);
    surface.authorize(principal, operationId);
    await surface.rateLimit?.(deps, principal, operationId);

    let body: unknown;
    if (operation.requestBody) {
      const raw = await readBody(req, config.bodyLimitBytes);
      requireJson(req.headers['content-type']);
      body = parseJson(raw);
    }

    const validation = surface.api.validateRequest({ ...oasReq, body }, operation);
    if (!validation.valid) throw validationProblem(validation.errors ?? []);

    const handler = surface.handlers[operationId];
    if (!handler) throw new Error(`no handler for operation ${operationId}`);
    const params = surface.api.router.parseRequest(oasReq, operation).params as Record<string, string>;
    const result = await handler({ deps, principal, request: { method, path: url.pathname, query, headers: req.headers, params, body }, ...ctx });

    if (config.validateResponses) {
      const check = surface.api.validateResponse(result.body, operation, result.status);
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
    const reqLog = log.child({ requestId });
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
    try {
      result = await handleRoute(req, url, { lang, requestId, log: reqLog, signal: abort.signal });
    } catch (err) {
      result = problemResult(err, { lang, requestId, instance: url.pathname, log: reqLog });
    }
    send(res, result, lang, requestId);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    reqLog.info({ method: req.method, path: url.pathname, status: result.status, ms: Math.round(ms * 10) / 10 }, 'request');
  }

  async function handleRoute(req: IncomingMessage, url: URL, ctx: { lang: Language; requestId: string; log: typeof log; signal: AbortSignal }): Promise<HttpResult> {
    const p = url.pathname;
    if (p === '/livez') return { status: 200, body: { status: 'ok' } };
    if (p === '/readyz') return readiness();
    if (req.method === 'GET' || req.method === 'HEAD') {
      const doc = surfaces.find((s) => p === `${s.basePath}/openapi.json`);
      if (doc) return { status: 200, body: doc.document, headers: { 'cache-control': 'no-cache' } };
      if (p === '/docs' || p === '/docs/') return docsPage('/api/external/openapi.json', 'Lumen partner API');
      if (p === '/docs/admin') return docsPage('/api/admin/openapi.json', 'Lumen admin API');
      const asset = await docsAsset(p);
      if (asset) return asset;
    }
    const surface = surfaces.find((s) => p === s.basePath || p.startsWith(`${s.basePath}/`));
    if (!surface) throw new AppError('not-found', { resource: p });
    return dispatch(surface, req, url, ctx);
  }

  async function readiness(): Promise<HttpResult> {
    if (draining) return { status: 503, body: { status: 'draining' } };
    try {
      await deps.pool.query('SELECT 1');
    } catch {
      return { status: 503, body: { status: 'unavailable', database: 'unreachable' } };
    }
    if (!(await migrationsApplied(deps.pool))) return { status: 503, body: { status: 'unavailable', database: 'migrations pending' } };
    return { status: 200, body: { status: 'ok' } };
  }

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    inFlight++;
    res.on('close', () => {
      inFlight--;
      if (draining) server.closeIdleConnections();
    });
    void route(req, res);
  };

  const server: http.Server = config.tls
    ? (https.createServer({ cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile), minVersion: 'TLSv1.2' }, listener) as unknown as http.Server)
    : http.createServer(listener);
  // Slow or stalled clients cannot hold a connection open forever.
  server.requestTimeout = 60_000;
  server.headersTimeout = 20_000;
  server.keepAliveTimeout = 5_000;

  return {
    server,
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
