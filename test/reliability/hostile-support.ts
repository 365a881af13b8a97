/**
 * The hostile-input suite's tools: the published documents as the oracle, requests
 * generated from their JSON schemas (valid by construction, then mutated), a
 * keep-alive HTTP client and a raw-socket client for bytes no well-behaved client
 * sends, and a snapshot of every application table to prove that a rejected request
 * leaves nothing behind.
 */
import http from 'node:http';
import net from 'node:net';
import * as Ajv2020Module from 'ajv/dist/2020.js';
import * as addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import type pg from 'pg';
import adminDocument from '../../generated/openapi/admin.json' with { type: 'json' };
import partnerDocument from '../../generated/openapi/partner.json' with { type: 'json' };
import telemetryDocument from '../../generated/openapi/telemetry.json' with { type: 'json' };
import sandboxDocument from '../../generated/openapi/sandbox.json' with { type: 'json' };
import open311Document from '../../generated/openapi/open311.json' with { type: 'json' };

// The same cases on every run, so CI is deterministic; LUMEN_FUZZ_SEED=random explores
// new ones, and any other number replays a seed fast-check printed for a failure.
const fuzzSeed = process.env.LUMEN_FUZZ_SEED;
if (fuzzSeed !== 'random') fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: fuzzSeed ? Number(fuzzSeed) : 20_261_121 });

const Ajv2020 = Ajv2020Module.default.default ?? Ajv2020Module.default;
const addFormats = addFormatsModule.default.default ?? addFormatsModule.default;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Schema = Record<string, any>;
export type DocumentName = 'partner' | 'admin' | 'telemetry' | 'sandbox' | 'open311';

const DOCUMENTS: Record<DocumentName, Schema> = { partner: partnerDocument, admin: adminDocument, telemetry: telemetryDocument, sandbox: sandboxDocument, open311: open311Document };

// ---------------------------------------------------------------------------
// The documents as the oracle
// ---------------------------------------------------------------------------

export interface OperationInfo {
  readonly document: DocumentName;
  readonly operationId: string;
  readonly method: string;
  readonly path: string;
  /** Statuses the document lists for the operation. */
  readonly statuses: ReadonlySet<number>;
  /** JSON pointer (in the document) of the request body schema, when the operation takes one. */
  readonly bodyPointer: string | null;
  readonly parameters: readonly Schema[];
}

function escapePointer(s: string): string {
  return s.replaceAll('~', '~0').replaceAll('/', '~1');
}

export function resolvePointer(doc: Schema, pointer: string): any {
  return pointer
    .replace(/^#/, '')
    .split('/')
    .slice(1)
    .reduce((node, part) => node?.[part.replaceAll('~1', '/').replaceAll('~0', '~')], doc as any);
}

/** Follows `$ref`s (document-local) until a real schema or object. */
export function deref(doc: Schema, node: any): any {
  let current = node;
  for (let i = 0; current && typeof current === 'object' && typeof current.$ref === 'string' && i < 20; i++) current = resolvePointer(doc, current.$ref);
  return current;
}

export function operationsOf(name: DocumentName): Map<string, OperationInfo> {
  const doc = DOCUMENTS[name];
  const out = new Map<string, OperationInfo>();
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!op?.operationId) continue;
      const body = op.requestBody ? deref(doc, op.requestBody) : null;
      out.set(op.operationId, {
        document: name,
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        statuses: new Set(Object.keys(op.responses).map(Number)),
        bodyPointer: body?.content?.['application/json'] ? `#/paths/${escapePointer(path)}/${method}/requestBody` : null,
        parameters: (op.parameters ?? []).map((p: any) => deref(doc, p)),
      });
    }
  }
  return out;
}

/** The request body schema of an operation (dereferenced one level). */
export function requestSchema(op: OperationInfo): Schema {
  const doc = DOCUMENTS[op.document];
  const body = deref(doc, resolvePointer(doc, op.bodyPointer!));
  return deref(doc, body.content['application/json'].schema);
}

export function documentOf(name: DocumentName): Schema {
  return DOCUMENTS[name];
}

const validators = new Map<DocumentName, InstanceType<typeof Ajv2020>>();

function ajvFor(name: DocumentName): InstanceType<typeof Ajv2020> {
  let ajv = validators.get(name);
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(ajv);
    // The whole document is one schema resource: every "#/components/..." $ref inside
    // resolves against it, exactly as in the published bundle.
    ajv.addSchema({ ...DOCUMENTS[name], $id: `urn:lumen:document:${name}` });
    validators.set(name, ajv);
  }
  return ajv;
}

type Validate = ((value: unknown) => boolean) & { errors?: unknown };
const compiled = new Map<string, Validate>();

/** Validates a value against the schema at `pointer` of a document; returns the Ajv errors or null. */
export function schemaErrors(name: DocumentName, pointer: string, value: unknown): string | null {
  const key = `${name}${pointer}`;
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajvFor(name).compile({ $ref: `urn:lumen:document:${name}${pointer}` }) as Validate;
    compiled.set(key, validate);
  }
  return validate(value) ? null : JSON.stringify(validate.errors).slice(0, 2000);
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** Parsed JSON body, when it is JSON. */
  body: any;
}

/**
 * The oracle: a documented 4xx problem+json, or a 2xx that validates against the
 * document; never a 5xx, never an undocumented status. Returns a description of what is
 * wrong, or null.
 */
export function violation(op: OperationInfo, answer: Answer): string | null {
  const { status } = answer;
  if (status >= 500) return `server error ${status}: ${answer.text.slice(0, 500)}`;
  if (!op.statuses.has(status)) return `status ${status} is not documented for ${op.operationId} (${[...op.statuses].join(', ')}): ${answer.text.slice(0, 300)}`;
  const doc = DOCUMENTS[op.document];
  const declared = doc.paths[op.path][op.method.toLowerCase()].responses[String(status)];
  // The response object, inline or a $ref to components/responses: its schema's pointer.
  const responsePointer = typeof declared.$ref === 'string' ? declared.$ref : `#/paths/${escapePointer(op.path)}/${op.method.toLowerCase()}/responses/${status}`;
  const response = deref(doc, declared);
  if (status >= 400) {
    if (!/^application\/problem\+json/.test(String(answer.headers['content-type']))) return `${status} without problem+json: ${answer.headers['content-type']}`;
    const problemErrors = schemaErrors(op.document, '#/components/schemas/Problem', answer.body);
    if (problemErrors) return `problem body breaks Problem: ${problemErrors}`;
    if (answer.body.status !== status) return `problem status ${answer.body.status} differs from ${status}`;
    if (!String(answer.body.type).startsWith('urn:lumen:problem:')) return `problem type ${answer.body.type}`;
    if (answer.headers['x-request-id'] !== answer.body.requestId) return 'requestId differs from X-Request-Id';
    return null;
  }
  // A body of another declared type (a CSV export): its content type must be the declared one.
  const type = String(answer.headers['content-type'] ?? '').split(';')[0]!.trim();
  if (!response?.content?.['application/json'] && type !== '' && response?.content?.[type]) return null;
  if (!response?.content?.['application/json']) return answer.text === '' ? null : `${status} has a body but the document declares none`;
  return schemaErrors(op.document, `${responsePointer}/content/application~1json/schema`, answer.body);
}

// ---------------------------------------------------------------------------
// Clients
// ---------------------------------------------------------------------------

export interface Exchange {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

/** Keep-alive client for well-formed HTTP (the hostility is in the content). */
export class HostileClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  sent = 0;

  constructor(private readonly baseUrl: string) {}

  send(x: Exchange, timeoutMs = 30_000): Promise<Answer> {
    this.sent++;
    const url = new URL(x.path, this.baseUrl);
    return new Promise<Answer>((resolve, reject) => {
      const req = http.request(url, { method: x.method, headers: x.headers, agent: this.agent, timeout: timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: any;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms: ${x.method} ${x.path}`)));
      req.on('error', reject);
      req.end(x.body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

export interface RawAnswer {
  /** 0 when the server closed without answering. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection. */
  closed: boolean;
  elapsedMs: number;
}

/**
 * Writes raw bytes to the server (in pieces, with pauses, when `pieces` is given) and
 * reads one answer: for requests a normal client refuses to send.
 */
export function rawExchange(port: number, data: Buffer | string | { pieces: (Buffer | string)[]; everyMs: number; endAfter?: boolean }, timeoutMs = 10_000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    let closed = false;
    const deadline = setTimeout(() => done(), timeoutMs);
    const done = (): void => {
      clearTimeout(deadline);
      clearInterval(timer);
      socket.destroy();
      const raw = Buffer.concat(chunks).toString('latin1');
      const head = raw.indexOf('\r\n\r\n');
      const lines = (head >= 0 ? raw.slice(0, head) : raw).split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      const rest = head >= 0 ? raw.slice(head + 4) : '';
      const body = Buffer.from(/chunked/i.test(headers['transfer-encoding'] ?? '') ? dechunk(rest) : rest, 'latin1').toString('utf8');
      resolve({ status, headers, body, closed, elapsedMs: Date.now() - started });
    };
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      const raw = Buffer.concat(chunks).toString('latin1');
      const head = raw.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(raw.slice(0, head))?.[1];
      const whole = length !== undefined ? Buffer.byteLength(raw.slice(head + 4), 'latin1') >= Number(length) : raw.endsWith('\r\n0\r\n\r\n');
      if (head >= 0 && whole) {
        // A whole answer: wait briefly for the server's close only when it announced one.
        if (!/\r\nconnection: *close/i.test(raw.slice(0, head))) done();
      }
    });
    socket.on('close', () => {
      closed = true;
      done();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') return;
      clearTimeout(deadline);
      reject(err);
    });
    socket.on('connect', () => {
      if (typeof data === 'string' || Buffer.isBuffer(data)) {
        socket.write(data);
        return;
      }
      const pieces = [...data.pieces];
      const next = (): void => {
        const piece = pieces.shift();
        if (piece === undefined) {
          clearInterval(timer);
          if (data.endAfter) socket.end();
          return;
        }
        if (!socket.destroyed) socket.write(piece);
      };
      next();
      timer = setInterval(next, data.everyMs);
    });
  });
}

/** The payload of a chunked body (latin1 text in, latin1 text out); stops at the last chunk or at what arrived. */
function dechunk(text: string): string {
  let out = '';
  let i = 0;
  for (;;) {
    const eol = text.indexOf('\r\n', i);
    if (eol < 0) return out;
    const size = parseInt(text.slice(i, eol), 16);
    if (!size) return out;
    out += text.slice(eol + 2, eol + 2 + size);
    i = eol + 2 + size + 2;
  }
}

// ---------------------------------------------------------------------------
// "Nothing left behind"
// ---------------------------------------------------------------------------

/**
 * Tables whose rows change by design whatever the requests do: the per-key rate-limit
 * windows, and the visibility horizon's clock ticks (written every 100 ms, 0016).
 */
const VOLATILE_TABLES = new Set(['rate_limit_window', 'lumen_xid_clock']);

/**
 * A fingerprint of every application table (row count and an order-independent hash of
 * the rows): equal fingerprints before and after a request mean it wrote nothing.
 */
/**
 * Columns a background job clears on its own schedule, left out of a table's snapshot: the
 * minute sweep forgets a replaced webhook secret whose overlap is over (a rotation with a
 * short overlap made by an earlier case), whatever request is in flight at that moment.
 */
const SWEPT_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  external_system: ['webhook_previous_secret_enc', 'webhook_previous_secret_until'],
};

export async function tableSnapshotQuery(pool: pg.Pool, exclude: readonly string[] = []): Promise<() => Promise<Record<string, string>>> {
  const { rows } = await pool.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const tables = rows.map((r) => r.table_name).filter((t) => !VOLATILE_TABLES.has(t) && !exclude.includes(t));
  const row = (t: string) => (SWEPT_COLUMNS[t] ? `(to_jsonb(x) ${SWEPT_COLUMNS[t]!.map((c) => `- '${c}'`).join(' ')})::text` : 'x::text');
  const sql = `SELECT ${tables.map((t) => `(SELECT count(*) || ':' || coalesce(sum(hashtext(${row(t)})::bigint), 0) FROM public."${t}" x) AS "${t}"`).join(', ')}`;
  return async () => (await pool.query<Record<string, string>>(sql)).rows[0]!;
}

export function snapshotDiff(before: Record<string, string>, after: Record<string, string>): string[] {
  return Object.keys(after).filter((t) => before[t] !== after[t]);
}

// ---------------------------------------------------------------------------
// Values: valid by construction, from the schemas
// ---------------------------------------------------------------------------

export interface GenerationHooks {
  /** Replaces the arbitrary of a property by name (for example loopback-only URLs). */
  readonly byProperty?: Record<string, fc.Arbitrary<unknown>>;
  /** Replaces the arbitrary of a string format. */
  readonly byFormat?: Record<string, fc.Arbitrary<unknown>>;
  /** Most items generated for an array (default 3). */
  readonly maxItems?: number;
}

const DATE_MIN = new Date('2000-01-01T00:00:00.000Z');
// Not in the future: a requestedAt more than five minutes ahead is refused, by contract.
const DATE_MAX = new Date();

/** RFC 3339 date-times with various offsets and precisions, all valid. */
export const dateTimeArb: fc.Arbitrary<string> = fc
  .tuple(fc.date({ min: DATE_MIN, max: DATE_MAX, noInvalidDate: true }), fc.constantFrom('Z', '+00:00', '-03:00', '+05:30', '+14:00'), fc.constantFrom(0, 1, 3, 6))
  .map(([d, offset, digits]) => {
    const shift = offset === 'Z' ? 0 : (offset.startsWith('-') ? -1 : 1) * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6)));
    const local = new Date(d.getTime() + shift * 60_000).toISOString();
    const fraction = digits === 0 ? '' : `.${local.slice(20, 23).padEnd(digits, '0')}`;
    return `${local.slice(0, 19)}${fraction}${offset}`;
  });

/** A valid value for a schema of a document, honouring the subset of JSON Schema the documents use. */
export function valueArb(name: DocumentName, schema: Schema, hooks: GenerationHooks = {}, depth = 0): fc.Arbitrary<unknown> {
  const doc = DOCUMENTS[name];
  const s = deref(doc, schema) as Schema;
  if (depth > 8) return fc.constant(null);
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  if (Array.isArray(s.allOf)) return valueArb(name, Object.assign({}, ...s.allOf.map((x: Schema) => deref(doc, x))), hooks, depth);
  if (Array.isArray(s.anyOf) && !s.type) return fc.oneof(...s.anyOf.map((x: Schema) => valueArb(name, x, hooks, depth + 1)));
  if (Array.isArray(s.oneOf) && !s.type && !s.properties) return fc.oneof(...s.oneOf.map((x: Schema) => valueArb(name, x, hooks, depth + 1)));
  const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : s.properties ? ['object'] : ['string'];
  if (types.length > 1) return fc.oneof(...types.map((t) => valueArb(name, { ...s, type: t }, hooks, depth)));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer': {
      const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : -1000);
      const max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : Math.max(min + 1000, 1000));
      return fc.integer({ min, max });
    }
    case 'number':
      return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? 0 : n));
    case 'string':
      return stringArb(s, hooks);
    case 'array': {
      const min = s.minItems ?? 0;
      const max = Math.max(min, Math.min(s.maxItems ?? 3, hooks.maxItems ?? 3));
      return fc.array(valueArb(name, s.items ?? {}, hooks, depth + 1), { minLength: min, maxLength: max });
    }
    default:
      return objectArb(name, s, hooks, depth);
  }
}

function stringArb(s: Schema, hooks: GenerationHooks): fc.Arbitrary<unknown> {
  if (s.format && hooks.byFormat?.[s.format]) return hooks.byFormat[s.format]!;
  if (s.format === 'date-time') return dateTimeArb;
  if (s.format === 'uuid') return fc.uuid();
  if (s.format === 'uri') return fc.constant('https://127.0.0.1/unused');
  if (s.pattern) return fc.stringMatching(new RegExp(s.pattern));
  const minLength = s.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(s.maxLength ?? 40, 40));
  return fc
    .oneof(fc.string({ minLength, maxLength }), fc.string({ unit: 'grapheme', minLength, maxLength }))
    .filter((v) => !/^\s*$/.test(v) || minLength === 0);
}

function objectArb(name: DocumentName, s: Schema, hooks: GenerationHooks, depth: number): fc.Arbitrary<unknown> {
  const doc = DOCUMENTS[name];
  // oneOf made of `required` alternatives (an attachment: url or contentBase64): pick one
  // branch, require its properties and leave out the other branches' ones.
  const branches: string[][] = Array.isArray(s.oneOf) ? s.oneOf.map((b: Schema) => deref(doc, b).required ?? []) : [[]];
  return fc.constantFrom(...branches).chain((branch) => {
    const excluded = new Set(branches.flat().filter((p) => !branch.includes(p)));
    const required = new Set<string>([...(s.required ?? []), ...branch]);
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [prop, sub] of Object.entries<Schema>(s.properties ?? {})) {
      if (excluded.has(prop)) continue;
      model[prop] = hooks.byProperty?.[prop] ?? valueArb(name, sub, hooks, depth + 1);
    }
    const dependent: Record<string, string[]> = s.dependentRequired ?? {};
    return fc.record(model, { requiredKeys: [...required].filter((k) => k in model) }).map((value) => {
      const out = value as Record<string, unknown>;
      // dependentRequired (latitude needs longitude and back): drop a lone half.
      for (const [prop, needs] of Object.entries(dependent)) {
        if (prop in out && needs.some((n) => !(n in out))) delete out[prop];
      }
      return out;
    });
  });
}

// ---------------------------------------------------------------------------
// Mutations
// ---------------------------------------------------------------------------

export const SQL_INJECTIONS = [
  "' OR '1'='1",
  "'; DROP TABLE alert; --",
  '" OR ""="',
  "1; SELECT pg_sleep(10)--",
  "$$; DELETE FROM service_order; $$",
  "\\'; TRUNCATE tenant CASCADE; --",
  "%' AND 1=1 --",
  "admin'--",
  "1' UNION SELECT key_hash FROM api_key--",
  "E'\\\\x00'",
];

export const HEADER_INJECTIONS = ['a\r\nX-Injected: yes', 'a\nSet-Cookie: lumen=evil', '\r\n\r\n<html>', 'a\u0000b', 'é\u2028x'];

export const UNICODE_EDGES = [
  '\u0000',
  'Rua\u0000Augusta',
  '\ud800',
  'x\udfffy',
  '\ud83d',
  '\u202Eetsuguа\u202C',
  'شارع الحرية ١٢',
  '💡🏙️👨‍👩‍👧‍👦',
  'Z̴̡̢̛͓̳̲̹̈́̈́̇̾a̵͎̓l̷̰̈́g̶̩͝o̸̹̓',
  'Conceição',
  'Conceic\u0327a\u0303o',
  '\uFEFFRua',
  '\u200B\u200C\u200D',
  '\uFFFE\uFFFF',
  '\u{10FFFF}',
  '\u0007\u001b[31m',
  ' ',
  '',
];

export const OTHER_HOSTILE_STRINGS = ['../../../../etc/passwd', '%00', '${jndi:ldap://127.0.0.1/a}', '{{7*7}}', '<script>alert(1)</script>', '__proto__', 'constructor', '1e999', 'NaN', 'null', 'true', '-0'];

export const HOSTILE_STRINGS = [...SQL_INJECTIONS, ...HEADER_INJECTIONS, ...UNICODE_EDGES, ...OTHER_HOSTILE_STRINGS];

export const WRONG_TYPED: Json[] = [0, -1, 1.5, 1e308, -1e308, 5e-324, 9007199254740993, true, false, null, [], {}, [null], { a: 1 }, 'string', [[[]]]];

/** Marker replaced, after serialisation, by deeply nested arrays (built as text: a JS value that deep would not even serialise). */
export const DEEP_MARKER = '\u0001lumen-deep-nesting\u0001';

export interface Mutation {
  readonly description: string;
  apply(value: Json): Json;
}

type PathStep = string | number;

function allPaths(value: Json, prefix: PathStep[] = [], out: PathStep[][] = []): PathStep[][] {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((v, i) => allPaths(v, [...prefix, i], out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) allPaths(v, [...prefix, k], out);
  return out;
}

function setAt(root: Json, path: PathStep[], fn: (parent: any, key: PathStep) => void): Json {
  const copy = structuredClone(root);
  if (path.length === 0) {
    const holder = { root: copy } as any;
    fn(holder, 'root');
    return holder.root as Json;
  }
  let node: any = copy;
  for (const step of path.slice(0, -1)) node = node[step];
  fn(node, path[path.length - 1]!);
  return copy;
}

const hugeString = fc.oneof(
  fc.integer({ min: 5_000, max: 70_000 }).map((n) => 'x'.repeat(n)),
  fc.constantFrom('💡'.repeat(20_000), 'ç'.repeat(300_001), 'A'.repeat(1_000_000)),
);

const replacement: fc.Arbitrary<{ label: string; value: Json }> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...WRONG_TYPED).map((v) => ({ label: `wrong type ${JSON.stringify(v)}`, value: v })) },
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS).map((v) => ({ label: `hostile string ${JSON.stringify(v)}`, value: v })) },
  { weight: 1, arbitrary: hugeString.map((v) => ({ label: `huge string (${v.length} chars)`, value: v })) },
  { weight: 1, arbitrary: fc.integer({ min: 10, max: 200_000 }).map((d) => ({ label: `nesting ${d} deep`, value: `${DEEP_MARKER}${d}${DEEP_MARKER}` })) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => ({ label: `random JSON ${JSON.stringify(v).slice(0, 60)}`, value: v as Json })) },
  {
    weight: 1,
    arbitrary: fc.string({ unit: 'binary', maxLength: 60 }).map((v) => ({ label: `random code points ${JSON.stringify(v).slice(0, 60)}`, value: v })),
  },
);

/** One mutation of a JSON value, at a random place in it: replace, remove, add, duplicate. */
export function mutationArb(): fc.Arbitrary<(value: Json) => { value: Json; description: string }> {
  return fc
    .tuple(fc.constantFrom('replace', 'replace', 'replace', 'remove', 'extra', 'duplicate'), fc.nat(), replacement, fc.constantFrom(...HOSTILE_STRINGS, 'extraField', 'attachments'))
    .map(([kind, pick, repl, key]) => (value: Json) => {
      const paths = allPaths(value);
      const path = paths[pick % paths.length]!;
      const where = `/${path.join('/')}`;
      switch (kind) {
        case 'remove':
          if (path.length === 0) return { value: repl.value, description: `whole body replaced by ${repl.label}` };
          return {
            value: setAt(value, path, (parent, k) => (Array.isArray(parent) ? parent.splice(k as number, 1) : delete parent[k])),
            description: `removed ${where}`,
          };
        case 'extra': {
          const target = paths.filter((p) => {
            const node = p.reduce((n: any, s) => n[s], value);
            return node && typeof node === 'object' && !Array.isArray(node);
          });
          const at = target[pick % Math.max(1, target.length)] ?? [];
          return {
            value: setAt(value, at, (parent, k) => {
              const obj = parent[k];
              if (obj && typeof obj === 'object' && !Array.isArray(obj)) Object.defineProperty(obj, key, { value: repl.value, enumerable: true, writable: true, configurable: true });
            }),
            description: `extra property ${JSON.stringify(key)} = ${repl.label} at /${at.join('/')}`,
          };
        }
        case 'duplicate':
          return {
            value: setAt(value, path, (parent, k) => {
              const node = parent[k];
              if (Array.isArray(node)) parent[k] = [...node, ...node, ...node, ...node, ...node, ...node, ...node, ...node, ...node, ...node, ...node];
              else parent[k] = [node, node];
            }),
            description: `duplicated ${where}`,
          };
        default:
          return { value: setAt(value, path, (parent, k) => (parent[k] = repl.value)), description: `${where} replaced by ${repl.label}` };
      }
    });
}

/** JSON text of a value, with the deep-nesting markers expanded. */
export function serialise(value: unknown): string {
  return JSON.stringify(value).replace(new RegExp(`"${DEEP_MARKER}(\\d+)${DEEP_MARKER}"`.replaceAll('\u0001', '\\u0001'), 'g'), (_m, d: string) => '['.repeat(Number(d)) + ']'.repeat(Number(d)));
}

/** Byte sequences that are not UTF-8: a lone continuation, an overlong '/', an encoded surrogate, a truncated sequence, 0xFF. */
export const INVALID_UTF8: readonly Buffer[] = [
  Buffer.from([0x80]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xe2, 0x82]),
  Buffer.from([0xff]),
  Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
  Buffer.from([0xc3, 0x28]),
];

/** Polls `check` until it returns true or the deadline passes. */
export async function until(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The service's log lines about one answer (by its request id), to explain a failure. */
export function serverLog(app: { logs: { lines: string[] } }, answer: Answer): string {
  const id = answer.headers['x-request-id'];
  if (typeof id !== 'string') return '';
  return app.logs.lines
    .filter((l) => l.includes(id))
    .map((l) => l.slice(0, 3000))
    .join('\n');
}

/** Counts answers by status, for the report. */
export class Tally {
  readonly byStatus = new Map<number, number>();
  cases = 0;
  add(status: number): void {
    this.cases++;
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
  }
  get serverErrors(): number {
    return [...this.byStatus].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);
  }
  summary(): string {
    return [...this.byStatus]
      .sort(([a], [b]) => a - b)
      .map(([s, c]) => `${s}×${c}`)
      .join(', ');
  }
}
