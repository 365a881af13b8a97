import * as Ajv2020Module from 'ajv/dist/2020.js';
import * as addFormatsModule from 'ajv-formats';
import { OpenAPIBackend, type Document, type Operation, type Request as OasRequest } from 'openapi-backend';
import type { ErrorObject } from 'ajv';
import { AppError, type FieldError } from './errors.js';
import { DECIMAL_INTEGER, DECIMAL_NUMBER, hasLoneSurrogate } from './json-strict.js';

// CJS default-export interop (ajv and ajv-formats ship CommonJS).
const Ajv2020 = Ajv2020Module.default.default ?? Ajv2020Module.default;
const addFormats = addFormatsModule.default.default ?? addFormatsModule.default;

/**
 * openapi-backend over an OpenAPI 3.1 document. The default draft-07 Ajv misreads
 * 3.1 schemas (type arrays with "null", dependentRequired, ...), so every validator
 * is an Ajv 2020 instance with formats. allErrors gives one errors[] entry per problem.
 */
export async function createOpenApi(definition: Record<string, unknown>): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend({
    definition: structuredClone(definition) as unknown as Document,
    quick: true,
    validate: true,
    strict: false,
    coerceTypes: true,
    customizeAjv: (_original, ajvOpts) => {
      const ajv = new Ajv2020({ ...ajvOpts, strict: false, allErrors: true, validateFormats: true });
      addFormats(ajv);
      return ajv as never;
    },
  });
  await api.init();
  // The document does not change after init: the router's flattened operations are
  // computed once, not on every call (openapi-backend rebuilds them, twice per match
  // and once per lookup by operationId, which cost a twentieth of an intake's CPU).
  const operations = api.router.getOperations();
  api.router.getOperations = () => operations;
  return api;
}

export interface MatchedOperation {
  operation: Operation;
}

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'] as const;

/**
 * The operations by path, for matching without walking the document per request:
 * openapi-backend's router flattens the document and compiles a regular expression per
 * operation on every match. The rules are its own (router.matchOperation, apiRoot '/',
 * trailing slashes ignored): an operation whose path is the request's path and method
 * wins; else, of the operations whose template matches the path, the most specific
 * (longest literal part, the document's order between equals) with the method; no
 * template matching: 404; templates matching but not the method: 405.
 */
interface RouteTable {
  exact: Map<string, Map<string, Operation>>;
  templates: { pattern: RegExp; method: string; operation: Operation }[];
}

const tables = new WeakMap<OpenAPIBackend, RouteTable>();

function escapeRegExp(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function routeTable(api: OpenAPIBackend): RouteTable {
  let table = tables.get(api);
  if (table) return table;
  const operations = api.router.getOperations();
  const exact = new Map<string, Map<string, Operation>>();
  for (const op of operations) {
    let byMethod = exact.get(op.path);
    if (!byMethod) exact.set(op.path, (byMethod = new Map()));
    if (!byMethod.has(op.method)) byMethod.set(op.method, op);
  }
  const specificity = (op: Operation) => op.path.replace(/\{.*?\}/g, '').length;
  const templates = operations
    .map((operation, index) => ({ operation, index, rank: specificity(operation) }))
    .sort((a, b) => b.rank - a.rank || a.index - b.index)
    .map(({ operation }) => ({
      pattern: new RegExp(`^${operation.path.replace(/\{[^}]+\}/g, '\0').split('\0').map(escapeRegExp).join('[^/]+')}$`),
      method: operation.method,
      operation,
    }));
  table = { exact, templates };
  tables.set(api, table);
  return table;
}

/** The request's path as the router compares it: no query, leading slash, no trailing slashes. */
function routedPath(path: string): string {
  let p = path.trim();
  if (!p.startsWith('/')) p = `/${p}`;
  p = p.split('?')[0]!;
  while (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  return p;
}

function findOperation(table: RouteTable, method: string, path: string): Operation | 'no-path' | 'no-method' {
  const exact = table.exact.get(path)?.get(method);
  if (exact) return exact;
  let pathMatched = false;
  for (const t of table.templates) {
    if (!t.pattern.test(path)) continue;
    if (t.method === method) return t.operation;
    pathMatched = true;
  }
  return pathMatched ? 'no-method' : 'no-path';
}

/**
 * Route a request: 404 when no path matches, 405 when the path exists with other
 * methods, with the `Allow` header RFC 9110 asks for (the methods the document declares there).
 */
export function matchOperation(api: OpenAPIBackend, req: OasRequest): Operation {
  const table = routeTable(api);
  const method = req.method.trim().toLowerCase();
  const path = routedPath(req.path ?? '');
  const found = findOperation(table, method, path);
  if (typeof found !== 'string') return found;
  if (found === 'no-method') {
    const allow = METHODS.filter((m) => typeof findOperation(table, m, path) !== 'string').map((m) => m.toUpperCase());
    throw new AppError('method-not-allowed', { method: method.toUpperCase(), path: req.path }, undefined, { allow: allow.join(', ') });
  }
  throw new AppError('not-found', { resource: req.path });
}

/** Deepest JSON nesting Lumen reads (the contracts need 4); deeper bodies are refused with 422. */
export const MAX_JSON_DEPTH = 64;

interface WalkNode {
  readonly value: unknown;
  readonly key: string | null;
  readonly parent: WalkNode | null;
  readonly depth: number;
}

function walkPointer(node: WalkNode): string {
  const parts: string[] = [];
  for (let n: WalkNode | null = node; n && n.key !== null; n = n.parent) parts.push(n.key.replaceAll('~', '~0').replaceAll('/', '~1'));
  return parts.length ? `/${parts.reverse().join('/')}` : '';
}

/**
 * What no schema can make storable: the NUL character (U+0000), which PostgreSQL text
 * and jsonb cannot hold, in a string or a property name, and nesting deeper than
 * MAX_JSON_DEPTH. Checked before anything walks the body recursively, and iteratively
 * itself, since a body may nest far deeper than the call stack. Up to 20 findings.
 */
export function unstorableParts(value: unknown): FieldError[] {
  const found: FieldError[] = [];
  const stack: WalkNode[] = [{ value, key: null, parent: null, depth: 0 }];
  while (stack.length > 0 && found.length < 20) {
    const node = stack.pop()!;
    const v = node.value;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) found.push({ pointer: walkPointer(node), message: 'must not contain the NUL character (U+0000)' });
      else if (hasLoneSurrogate(v)) found.push({ pointer: walkPointer(node), message: 'must be Unicode text: it holds a UTF-16 surrogate without its pair (e.g. \\ud800 alone)' });
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (node.depth >= MAX_JSON_DEPTH) {
      found.push({ pointer: walkPointer(node), message: `nests deeper than ${MAX_JSON_DEPTH} levels` });
      continue;
    }
    const entries: [string, unknown][] = Array.isArray(v) ? v.map((item, i) => [String(i), item]) : Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, item] = entries[i]!;
      const child = { value: item, key, parent: node, depth: node.depth + 1 };
      if (!Array.isArray(v) && key.includes('\u0000')) found.push({ pointer: walkPointer(child), message: 'property names must not contain the NUL character (U+0000)' });
      else if (!Array.isArray(v) && hasLoneSurrogate(key)) found.push({ pointer: walkPointer(child), message: 'property names must be Unicode text (a UTF-16 surrogate without its pair)' });
      stack.push(child);
    }
  }
  return found;
}

interface ParameterSchema {
  readonly type?: string | readonly string[];
  readonly items?: ParameterSchema;
}

function typesOf(schema: ParameterSchema | undefined): readonly string[] {
  const t = schema?.type;
  return t === undefined ? [] : typeof t === 'string' ? [t] : t;
}

/**
 * Query and path values of integer and number parameters written other than in plain
 * decimal: Ajv's type coercion reads `0x10`, `1e3`, ` 1` and `+5` as numbers (it uses
 * JavaScript's Number), which the contracts do not allow. Integers are `^-?[0-9]+$`;
 * numbers also take a decimal fraction, never an exponent. Bounds stay the schemas' own.
 */
export function nonDecimalParameters(operation: Operation, query: Readonly<Record<string, string | string[]>>, path: Readonly<Record<string, string>>): FieldError[] {
  const found: FieldError[] = [];
  for (const p of (operation.parameters ?? []) as { in?: string; name?: string; schema?: ParameterSchema }[]) {
    if ((p.in !== 'query' && p.in !== 'path') || !p.name) continue;
    const schema = p.schema;
    const types = typesOf(schema);
    const itemTypes = types.includes('array') ? typesOf(schema?.items) : [];
    const want = [...types, ...itemTypes];
    const pattern = want.includes('integer') ? DECIMAL_INTEGER : want.includes('number') ? DECIMAL_NUMBER : null;
    if (!pattern) continue;
    const raw = p.in === 'query' ? query[p.name] : path[p.name];
    if (raw === undefined) continue;
    if ([raw].flat().some((v) => !pattern.test(v))) {
      found.push({ pointer: `/${p.in}/${p.name}`, message: pattern === DECIMAL_INTEGER ? 'must be an integer in decimal digits (an optional leading minus; no spaces, plus sign, exponent or hexadecimal)' : 'must be a decimal number (digits with an optional fraction; no spaces, plus sign, exponent or hexadecimal)' });
    }
  }
  return found;
}

function pointerFor(e: ErrorObject): string {
  let pointer = e.instancePath;
  if (e.keyword === 'required') pointer += `/${(e.params as { missingProperty: string }).missingProperty}`;
  if (e.keyword === 'dependentRequired') pointer += `/${(e.params as { missingProperty: string }).missingProperty}`;
  if (e.keyword === 'additionalProperties') pointer += `/${(e.params as { additionalProperty: string }).additionalProperty}`;
  return pointer;
}

function messageFor(e: ErrorObject): string {
  if (e.keyword === 'required') return `is required`;
  if (e.keyword === 'additionalProperties') return 'is not a property of this object (unknown properties are refused, not ignored)';
  if (e.keyword === 'oneOf') return 'must match exactly one of the allowed forms (for an attachment: exactly one of url or contentBase64)';
  if (e.keyword === 'enum') return `must be one of: ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).join(', ')}`;
  return e.message ?? 'is invalid';
}

/**
 * Ajv errors -> Lumen problems. Body errors are 422 with JSON pointers into the body;
 * parameter and header errors are 400 with pointers /query/<name>, /header/<name>.
 */
/** Most errors[] entries one answer carries (a body with thousands of unknown properties gets the first ones). */
export const MAX_FIELD_ERRORS = 100;

/**
 * Errors that only say which branch of a union did not fit: a property one branch
 * requires or refuses at the union's own level (an attachment with both `url` and
 * `contentBase64`, or neither). Such an error that not every branch shares says less
 * than the union's own message, which replaces it; one every branch shares (`type`
 * missing) is a real problem and stays.
 */
function branchChoiceErrors(errors: ErrorObject[]): Set<ErrorObject> {
  const out = new Set<ErrorObject>();
  for (const union of errors.filter((e) => e.keyword === 'oneOf' || e.keyword === 'anyOf')) {
    const prefix = `${union.schemaPath}/`;
    const choice = errors.filter((e) => e.schemaPath.startsWith(prefix) && e.instancePath === union.instancePath && (e.keyword === 'required' || e.keyword === 'additionalProperties'));
    const branchOf = (e: ErrorObject) => e.schemaPath.slice(prefix.length).split('/')[0];
    const branches = new Set(errors.filter((e) => e.schemaPath.startsWith(prefix)).map(branchOf)).size;
    const key = (e: ErrorObject) => `${pointerFor(e)} ${e.keyword}`;
    for (const e of choice) {
      const inBranches = new Set(choice.filter((x) => key(x) === key(e)).map(branchOf)).size;
      if (inBranches < branches) out.add(e);
    }
  }
  return out;
}

export function validationProblem(errors: ErrorObject[]): AppError {
  const body: FieldError[] = [];
  const params: FieldError[] = [];
  const seen = new Set<string>();
  const choice = branchChoiceErrors(errors);
  const explained = errors.filter((e) => !['oneOf', 'anyOf', 'if'].includes(e.keyword) && !choice.has(e)).map((e) => e.instancePath);
  for (const e of errors) {
    // oneOf/anyOf wrappers repeat their branches' errors, which say more; a wrapper
    // is kept only when no branch explains it (e.g. both url and contentBase64 sent).
    if (e.keyword === 'if' || choice.has(e)) continue;
    if ((e.keyword === 'oneOf' || e.keyword === 'anyOf') && explained.some((p) => p === e.instancePath || p.startsWith(`${e.instancePath}/`))) continue;
    const raw = pointerFor(e);
    let target: FieldError[];
    let pointer: string;
    if (raw === '/requestBody' || raw.startsWith('/requestBody/')) {
      target = body;
      pointer = raw.slice('/requestBody'.length);
    } else if (raw.startsWith('/headers/') || raw.startsWith('/header/')) {
      target = params;
      pointer = `/header/${raw.slice(raw.indexOf('/', 1) + 1)}`;
    } else if (raw.startsWith('/query/') || raw.startsWith('/path/') || raw.startsWith('/params/')) {
      target = params;
      pointer = raw.replace(/^\/params\//, '/path/');
    } else {
      target = body;
      pointer = raw === '' ? '' : raw;
    }
    const message = messageFor(e);
    const key = `${pointer} ${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    target.push({ pointer, message });
  }
  // The Idempotency-Key keeps the problem code its own check has always answered.
  if (params.length > 0 && params.every((p) => p.pointer === '/header/idempotency-key')) {
    return new AppError('invalid-idempotency-key', {}, [{ pointer: '/header/Idempotency-Key', message: 'must be a UUID, bare or in double quotes' }]);
  }
  if (params.length > 0) return new AppError('invalid-parameter', {}, params.slice(0, MAX_FIELD_ERRORS));
  return new AppError('validation-failed', { count: body.length }, body.slice(0, MAX_FIELD_ERRORS));
}
