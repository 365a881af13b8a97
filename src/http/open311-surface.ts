import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Operation } from 'openapi-backend';
import open311Document from '../../generated/openapi/open311.json' with { type: 'json' };
import type { Lease } from '../lib/budget.js';
import { AppError, type FieldError } from '../lib/errors.js';
import { DECIMAL_NUMBER } from '../lib/json-strict.js';
import { databaseUnavailable, isDatabaseUnavailable } from '../lib/unavailable.js';
import type { Language } from '../lib/i18n.js';
import { discovery, getOpen311Request, listOpen311Requests, listServices, MEDIA_PATH, mediaUrl, open311Media, serviceDefinition, submitOpen311Request, tokenAnswer, toXml, type MediaLink, type Open311Fields, type RequestQuery } from '../open311/index.js';
import { findTenant } from '../db/repositories/tenant.repository.js';
import { authenticatePartner, type PartnerPrincipal } from './auth.js';
import { parseJson, readBody } from './body.js';
import { parseMultipart } from './multipart.js';
import { InProgressLimit } from './in-progress.js';
import { createOpenApi, unstorableParts, validationProblem } from '../lib/openapi.js';
import type { HttpResult } from './problem.js';
import { enforceRateLimit, rateLimitHeaders } from './rate-limit.js';
import type { ApiSurface, OwnRequest } from './surface.js';

type Format = 'json' | 'xml';

/** One route: the operation, the document element of its XML answer, and its path parameter. */
interface Route {
  readonly operationId: string;
  readonly root: string;
  readonly param?: string;
}

/**
 * Paths relative to /open311/v2/, each ending in the format. openapi-backend matches
 * `{service_code}.{format}` but cuts the parameters wrongly (a value "LAMP.json" comes
 * back as "LAMP.jso" and an empty format), and its JSON-only body handling, problem+json
 * errors and header-only keys do not fit GeoReport v2 either: so this surface routes
 * itself, reads form and JSON bodies, takes the key from `api_key` too, and answers
 * errors as the specification's list, while still validating every request's query and
 * body (and, in tests and development, every answer) against openapi/open311.yaml.
 */
const ROUTES: readonly { pattern: RegExp; get?: Route; post?: Route }[] = [
  { pattern: /^discovery\.(json|xml)$/, get: { operationId: 'getDiscovery', root: 'discovery' } },
  { pattern: /^services\.(json|xml)$/, get: { operationId: 'listServices', root: 'services' } },
  { pattern: /^services\/([^/]+)\.(json|xml)$/, get: { operationId: 'getServiceDefinition', root: 'service_definition', param: 'service_code' } },
  { pattern: /^requests\.(json|xml)$/, get: { operationId: 'listServiceRequests', root: 'service_requests' }, post: { operationId: 'createServiceRequest', root: 'service_requests' } },
  { pattern: /^requests\/([^/]+)\.(json|xml)$/, get: { operationId: 'getServiceRequest', root: 'service_requests', param: 'service_request_id' } },
  { pattern: /^tokens\/([^/]+)\.(json|xml)$/, get: { operationId: 'getServiceRequestIdFromToken', root: 'service_requests', param: 'token' } },
];

const BASE = '/open311/v2';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Form fields that are numbers in the document (a form carries only text). */
const NUMERIC_FIELDS = ['lat', 'long'];
const ATTRIBUTE = /^attribute\[(.*)\]$/s;

function one(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function queryOf(url: URL): Record<string, string | string[]> {
  const out = Object.create(null) as Record<string, string | string[]>;
  for (const [k, v] of url.searchParams) {
    const prev = Object.hasOwn(out, k) ? out[k] : undefined;
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

/** Gathers `attribute[code]` members into `attribute` (repeated ones as lists) and reads numeric text as numbers. */
function normalise(entries: Iterable<[string, unknown]>): Record<string, unknown> {
  const out = Object.create(null) as Record<string, unknown>;
  const attribute = Object.create(null) as Record<string, unknown>;
  const add = (target: Record<string, unknown>, key: string, value: unknown): void => {
    const prev = Object.hasOwn(target, key) ? target[key] : undefined;
    target[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  };
  for (const [key, value] of entries) {
    const m = ATTRIBUTE.exec(key);
    if (m) add(attribute, m[1]!, value);
    else if (key === 'attribute' && value !== null && typeof value === 'object' && !Array.isArray(value)) for (const [k, v] of Object.entries(value)) add(attribute, k, v);
    else add(out, key, value);
  }
  if (Object.keys(attribute).length > 0) out.attribute = attribute;
  for (const key of NUMERIC_FIELDS) {
    const v = out[key];
    if (typeof v === 'string') {
      if (v.trim() === '') delete out[key];
      // Decimal degrees only: JavaScript's Number would also read 0x10, 1e1 and ' 1'
      // (left as text, refused by notDecimal once the request is counted).
      else if (DECIMAL_NUMBER.test(v)) out[key] = Number(v);
    }
  }
  return out;
}

/** Number fields left as text by normalise: not written in decimal (the validator's coercion would read 0x10 as 16). */
function notDecimal(body: Record<string, unknown>): FieldError[] {
  return NUMERIC_FIELDS.filter((key) => typeof body[key] === 'string').map((key) => ({ pointer: `/${key}`, message: 'must be a decimal number (digits with an optional fraction; no spaces, plus sign, exponent or hexadecimal)' }));
}

/** What a POST requests body may be, for the 415 that names them. */
const OPEN311_BODIES = { accepted: { 'pt-BR': 'application/x-www-form-urlencoded, multipart/form-data (com a foto no campo media) ou application/json', en: 'application/x-www-form-urlencoded, multipart/form-data (with the photo in the media field) or application/json' } };

/**
 * A POST body: form fields (also without a Content-Type, as some clients send them), a
 * multipart form with the photo as the `media` file (GeoReport clients' upload), or a
 * JSON object.
 */
async function parseBody(raw: Buffer, contentType: string | undefined): Promise<Record<string, unknown>> {
  const type = (contentType ?? 'application/x-www-form-urlencoded').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json') {
    const parsed = parseJson(raw);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new AppError('validation-failed', { count: 1 }, [{ pointer: '', message: 'the body must be an object' }]);
    return normalise(Object.entries(parsed));
  }
  if (type === 'multipart/form-data') {
    const { fields, media } = await parseMultipart(raw, contentType!);
    const out = normalise(fields);
    if (media) out.media = media;
    return out;
  }
  if (type !== 'application/x-www-form-urlencoded') throw new AppError('unsupported-media-type', OPEN311_BODIES);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw new AppError('malformed-request', { reason: 'the body is not valid UTF-8' });
  }
  return normalise(new URLSearchParams(text));
}

/** The error list of GeoReport v2: one entry per field problem, else the problem's detail; the status as `code`. */
function errorList(err: AppError, status: number, lang: Language): { code: number; description: string }[] {
  if (err.errors && err.errors.length > 0) {
    return err.errors.map((e) => ({ code: status, description: `${e.pointer.replace(/^\/(query|header|path)\//, '').replace(/^\//, '') || 'body'}: ${e.message}` }));
  }
  return [{ code: status, description: err.detail(lang) }];
}

/**
 * Open311 statuses for Lumen's problems: the specification answers a refused key with
 * 403, and knows no 422 (a bad field is 400).
 */
function statusOf(err: AppError): number {
  if (err.status === 401) return 403;
  if (err.status === 422) return 400;
  return err.status;
}

function render(format: Format, root: string, status: number, value: unknown, headers?: Record<string, string>): HttpResult {
  return format === 'xml'
    ? { status, body: toXml(root, value), contentType: 'text/xml; charset=utf-8', ...(headers ? { headers } : {}) }
    : { status, body: JSON.stringify(value), contentType: 'application/json; charset=utf-8', ...(headers ? { headers } : {}) };
}

function dates(query: Record<string, string | string[]>, name: string): Date | undefined {
  const v = one(query[name]);
  return v === undefined ? undefined : new Date(v);
}

function list(v: string | string[] | undefined): string[] | undefined {
  const s = one(v);
  return s === undefined || s === '' ? undefined : s.split(',').map((x) => x.trim()).filter(Boolean);
}

/**
 * Where clients reach this endpoint, for discovery: LUMEN_PUBLIC_URL (required in
 * production); outside production without it, this instance on localhost. Never the
 * request's Host header, which any client can set (`Host: evil.example` would have been
 * advertised as the endpoint).
 */
function endpointUrl(config: { readonly publicOrigin: string | null; readonly port: number }): string {
  return `${config.publicOrigin ?? `http://localhost:${config.port}`}${BASE}`;
}

/**
 * The jurisdiction_id of a city: its IBGE municipality code when it has one (how
 * Brazilian systems name a city), else its tenant id.
 */
async function jurisdictionOf(deps: OwnRequest<PartnerPrincipal>['deps'], tenantId: string): Promise<string> {
  const tenant = await findTenant(deps.db, tenantId);
  return tenant?.ibge_code ?? tenantId;
}

/**
 * `jurisdiction_id`, when a client sends one (query or body), must name the key's own
 * city, by its IBGE code or its tenant id: the key decides the city, and a client that
 * believes it talks to another city is told so (400) rather than answered about this one.
 */
async function checkJurisdiction(deps: OwnRequest<PartnerPrincipal>['deps'], caller: PartnerPrincipal, inQuery: string | undefined, inBody: unknown): Promise<void> {
  for (const [value, pointer] of [
    [inQuery, '/query/jurisdiction_id'],
    [inBody, '/jurisdiction_id'],
  ] as const) {
    if (value === undefined || value === '') continue;
    const tenant = await findTenant(deps.db, caller.tenantId);
    if (typeof value === 'string' && (value === caller.tenantId || (tenant?.ibge_code && value === tenant.ibge_code))) continue;
    throw new AppError('invalid-parameter', {}, [{ pointer, message: `is not the jurisdiction of this key's city (${tenant?.ibge_code ?? caller.tenantId}; see discovery with the key)` }]);
  }
}

/** GeoReport v2 under /open311/v2 (openapi/open311.yaml). */
export async function createOpen311Surface(): Promise<ApiSurface<PartnerPrincipal>> {
  const document = open311Document as unknown as Record<string, unknown>;
  const api = await createOpenApi(document);
  const declared = new Set(api.getOperations().map((o) => o.operationId!));
  const routed = ROUTES.flatMap((r) => [r.get, r.post]).filter((r): r is Route => r !== undefined);
  const unrouted = [...declared].filter((id) => !routed.some((r) => r.operationId === id));
  if (unrouted.length > 0) throw new Error(`open311 operations without a route: ${unrouted.join(', ')}`);
  let intake: InProgressLimit | null = null;

  async function answer(o: OwnRequest<PartnerPrincipal>, route: Route, operation: Operation, format: Format, param: string | undefined): Promise<HttpResult> {
    const { deps, req, url, lang } = o;
    const query = queryOf(url);
    const method = (req.method ?? 'GET').toLowerCase();
    // Discovery needs no key; with one (header or query), it also names that key's jurisdiction_id.
    if (route.operationId === 'getDiscovery') {
      const discoveryKey = one(req.headers['x-api-key']) ?? one(query.api_key);
      // A key that does not authenticate (or an address throttled for failed ones) only leaves the jurisdiction out: discovery needs none.
      const caller = discoveryKey ? await o.authenticate({ 'x-api-key': discoveryKey }, route.operationId).catch((err: unknown) => (err instanceof AppError ? null : Promise.reject(err))) : null;
      return render(format, route.root, 200, discovery(endpointUrl(deps.config), caller ? await jurisdictionOf(deps, caller.tenantId) : undefined));
    }
    if (param !== undefined && param.includes('\u0000')) throw new AppError('invalid-parameter', {}, [{ pointer: `/path/${route.param}`, message: 'must not contain the NUL character (U+0000)' }]);
    if (route.param === 'service_request_id' && !/^[0-9]{1,18}$/.test(param!)) throw new AppError('invalid-parameter', {}, [{ pointer: '/path/service_request_id', message: 'must be the digits of a request number' }]);
    if (route.param === 'token' && !UUID.test(param!)) throw new AppError('invalid-parameter', {}, [{ pointer: '/path/token', message: 'must be a token this endpoint gave (a UUID)' }]);
    if (route.param === 'service_code' && param!.length > 100) throw new AppError('invalid-parameter', {}, [{ pointer: '/path/service_code', message: 'must be at most 100 characters' }]);
    const nul = Object.entries(query).filter(([, v]) => [v].flat().some((x) => x.includes('\u0000')));
    if (nul.length > 0) throw new AppError('invalid-parameter', {}, nul.map(([k]) => ({ pointer: `/query/${k}`, message: 'must not contain the NUL character (U+0000)' })));


    // The key: X-Api-Key, else api_key in the query, else (a POST) api_key in the form, read after the body.
    const headerKey = one(req.headers['x-api-key']) ?? one(query.api_key);
    let principal: PartnerPrincipal | null = headerKey ? await o.authenticate({ 'x-api-key': headerKey }, route.operationId) : null;
    let release: (() => void) | null = null;
    let held: Lease | null = null;
    // Counted requests report their quota on every answer, errors included, as the partner API does.
    let quota: Record<string, string> = {};
    try {
      let body: Record<string, unknown> | undefined;
      if (method === 'post') {
        if (principal) release = admit(deps, principal);
        held = await o.holdBodyMemory();
        body = await parseBody(await readBody(req, deps.config.bodyLimitBytes, deps.config.bodyTimeoutMs), one(req.headers['content-type']));
        const unstorable = unstorableParts(body);
        if (unstorable.length > 0) throw new AppError('validation-failed', { count: unstorable.length }, unstorable);
        if (!principal) {
          const formKey = typeof body.api_key === 'string' ? body.api_key : undefined;
          principal = await o.authenticate(formKey ? { 'x-api-key': formKey } : ({} as IncomingHttpHeaders), route.operationId);
          release = admit(deps, principal);
        }
      }
      if (!principal) principal = await o.authenticate({}, route.operationId);
      quota = rateLimitHeaders(await enforceRateLimit(deps.db, principal.externalSystemId, principal.rateLimitPerMinute ?? deps.config.rateLimitPerMinute));
      await checkJurisdiction(deps, principal, one(query.jurisdiction_id), body?.jurisdiction_id);
      const textNumbers = body ? notDecimal(body) : [];
      if (textNumbers.length > 0) throw new AppError('validation-failed', { count: textNumbers.length }, textNumbers);

      // Path parameters are checked above (the backend cannot cut them, see ROUTES); unknown
      // query parameters are tolerated, as Open311 clients send their own (api_key, jurisdiction_id, ...).
      const validation = api.validateRequest({ method, path: url.pathname, query, headers: req.headers as Record<string, string>, body }, operation);
      const errors = (validation.errors ?? []).filter((e) => !e.instancePath.startsWith('/path') && !(e.instancePath === '/query' && e.keyword === 'additionalProperties'));
      if (errors.length > 0) throw validationProblem(errors);

      const result = await run(o, principal, route, query, body, param!);
      if (deps.config.validateResponses) {
        const check = api.validateResponse(result.value, operation, result.status);
        if (check.errors && check.errors.length > 0) throw new Error(`response of ${route.operationId} (${result.status}) breaks the contract: ${JSON.stringify(check.errors)}`);
      }
      return render(format, route.root, result.status, result.value, quota);
    } catch (err) {
      throw err instanceof AppError ? err.withHeaders(quota) : err;
    } finally {
      // Held until the request ends: the parsed value lives that long (see the server's holdBodyMemory).
      held?.release();
      release?.();
    }
  }

  /** Requests in progress per key, as on the partner API's intake. */
  function admit(deps: OwnRequest<PartnerPrincipal>['deps'], principal: PartnerPrincipal): () => void {
    intake ??= new InProgressLimit(deps.config.intakeConcurrencyPerKey);
    return intake.enter(principal.externalSystemId);
  }

  /** media_url for a stored photo: a signed link on LUMEN_PUBLIC_URL; none without it (Lumen never names a host from the request). */
  function mediaLink(deps: OwnRequest<PartnerPrincipal>['deps']): MediaLink {
    const origin = deps.config.publicOrigin;
    return (id) => (origin ? mediaUrl(origin, deps.config.secretKey, id) : null);
  }

  async function run(o: OwnRequest<PartnerPrincipal>, caller: PartnerPrincipal, route: Route, query: Record<string, string | string[]>, body: Record<string, unknown> | undefined, param: string): Promise<{ status: number; value: unknown }> {
    const { deps, lang, signal } = o;
    switch (route.operationId) {
      case 'listServices':
        return { status: 200, value: await listServices(deps, caller, lang) };
      case 'getServiceDefinition':
        return { status: 200, value: await serviceDefinition(deps, caller, param) };
      case 'createServiceRequest': {
        const created = await submitOpen311Request(deps, caller, body as Open311Fields, { lang, signal });
        return { status: created.status, value: created.body };
      }
      case 'listServiceRequests': {
        const q: RequestQuery = {
          serviceRequestIds: list(query.service_request_id),
          serviceCodes: list(query.service_code),
          startDate: dates(query, 'start_date'),
          endDate: dates(query, 'end_date'),
          updatedAfter: dates(query, 'updated_after'),
          updatedBefore: dates(query, 'updated_before'),
          statuses: list(query.status) as RequestQuery['statuses'],
        };
        return { status: 200, value: await listOpen311Requests(deps, caller, q, lang, mediaLink(deps)) };
      }
      case 'getServiceRequest':
        return { status: 200, value: await getOpen311Request(deps, caller, param, lang, mediaLink(deps)) };
      case 'getServiceRequestIdFromToken':
        return { status: 200, value: await tokenAnswer(deps, caller, param) };
      default:
        throw new Error(`no handler for operation ${route.operationId}`);
    }
  }

  return {
    name: 'open311',
    basePath: BASE,
    api,
    document,
    authenticate: (deps, headers) => authenticatePartner(deps.db, headers),
    // Scopes are checked by the capability (POST requests needs a creating scope; reads any valid key).
    authorize: () => {},
    handlers: {},
    async serve(o) {
      const rel = o.url.pathname.slice(BASE.length + 1);
      const format: Format = /\.xml$/i.test(o.url.pathname) ? 'xml' : 'json';
      const media = MEDIA_PATH.exec(rel);
      if (media && (o.req.method === 'GET' || o.req.method === 'HEAD')) {
        o.route('getMedia');
        try {
          const got = await open311Media(o.deps, media[1]!, media[2]!);
          return { status: 200, body: got.bytes, contentType: got.contentType, headers: got.headers };
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          return render('json', 'errors', err.status, errorList(err, err.status, o.lang), err.headers);
        }
      }
      try {
        const matched = ROUTES.map((r) => ({ r, m: r.pattern.exec(rel) })).find((x) => x.m !== null);
        if (!matched) throw new AppError('not-found', { resource: o.url.pathname });
        const method = (o.req.method ?? 'GET').toUpperCase();
        const route = method === 'GET' || method === 'HEAD' ? matched.r.get : method === 'POST' ? matched.r.post : undefined;
        if (!route) throw new AppError('method-not-allowed', { method, path: o.url.pathname }, undefined, { allow: [matched.r.get ? 'GET' : null, matched.r.post ? 'POST' : null].filter(Boolean).join(', ') });
        o.route(route.operationId);
        const m = matched.m!;
        let param: string | undefined;
        if (route.param) {
          try {
            param = decodeURIComponent(m[1]!);
          } catch {
            throw new AppError('invalid-parameter', {}, [{ pointer: `/path/${route.param}`, message: 'is not valid percent-encoded UTF-8' }]);
          }
        }
        return await answer(o, route, api.getOperation(route.operationId)!, m[m.length - 1] as Format, param);
      } catch (caught) {
        const err = !(caught instanceof AppError) && isDatabaseUnavailable(caught) ? databaseUnavailable() : caught;
        if (!(err instanceof AppError)) {
          if (err instanceof Error && (err.name === 'AbortError' || o.signal.aborted)) throw err;
          o.log.error({ err }, 'unhandled error');
          return render(format, 'errors', 500, [{ code: 500, description: `An unexpected error occurred. Quote the request id ${o.requestId} to support.` }]);
        }
        const status = statusOf(err);
        return render(format, 'errors', status, errorList(err, status, o.lang), err.headers);
      }
    },
  };
}
