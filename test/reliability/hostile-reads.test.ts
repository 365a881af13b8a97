/**
 * Hostile query strings and headers against the partner reads: health, poles, service
 * orders and events. Values come from the parameters' schemas (valid), from real
 * cursors and positions (valid, then tampered with), and from lists of edge cases
 * (numbers that overflow, dates that do not exist, leap seconds, lowercase separators,
 * injection strings, unicode, repeated and unknown parameters). Oracle: a documented
 * 4xx problem+json or a 2xx that matches the document, never a 5xx; a refused request
 * changes no table (no walk remembered, no event confirmed).
 */
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeCityOrder, makeCityPole, makePartner, makeTenant } from '../support/factories.js';
import { recordReliability } from '../support/reliability.js';
import { serverLog } from './hostile-support.js';
import { emit, subjectFor } from '../events/support.js';
import { dateTimeArb, HostileClient, HOSTILE_STRINGS, operationsOf, snapshotDiff, tableSnapshotQuery, Tally, violation, type Answer, type OperationInfo } from './hostile-support.js';

const SECTION = 'Hostile and broken input';
const RUNS = { lists: 700, events: 400, health: 150, keys: 100 };

const ops = operationsOf('partner');

let t: TestApp;
let client: HostileClient;
let snapshot: () => Promise<Record<string, string>>;
let reader: string;
let noScope: string;
const tally = new Tally();
let refusals = 0;
let failures = 0;
const started = Date.now();
/** Cursors and positions Lumen handed out during the run, to send back (changed or not). */
const cursors: Record<string, string[]> = { '/api/external/poles': [], '/api/external/service-orders': [] };
const positions: string[] = [];

beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_RATE_LIMIT_PER_MINUTE: '10000000' } });
  client = new HostileClient(t.baseUrl);
  snapshot = await tableSnapshotQuery(t.rt.pool);
  const tenant = await makeTenant(t.rt);
  const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] });
  reader = partner.apiKey;
  noScope = (await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canCreateServiceOrders'] })).apiKey;
  for (let i = 0; i < 7; i++) {
    await makeCityPole(t.rt, { tenantId: tenant.id, device: i % 2 ? `TG-H${i}` : null });
    await makeCityOrder(t.rt, { tenantId: tenant.id, status: i % 3 ? 'OPEN' : 'COMPLETED', closedAt: i % 3 ? null : new Date() });
  }
  // Unconfirmed events: a refused poll that confirmed anything would change event_cursor.
  const p = { tenantId: tenant.id, partner: { id: partner.id } };
  for (let i = 0; i < 5; i++) await emit(t.rt, ['ServiceOrder.StatusChanged', await subjectFor(t.rt, p)], ['Alert.Cancelled', await subjectFor(t.rt, p, false)]);
});

let last: Record<string, string> | null = null;
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') failures++;
  last = null;
});

afterAll(async () => {
  client?.close();
  await t?.stop();
});

async function exchange(op: OperationInfo, query: string, headers: Record<string, string>, label: string): Promise<Answer> {
  const before = last ?? (await snapshot());
  last = null;
  const answer = await client.send({ method: 'GET', path: `${op.path}${query ? `?${query}` : ''}`, headers });
  tally.add(answer.status);
  const wrong = violation(op, answer);
  if (wrong) throw new Error(`${serverLog(t, answer)}\n`+`${op.operationId} ?${query} (${label}): ${wrong}`);
  const after = await snapshot();
  if (answer.status >= 400) {
    const changed = snapshotDiff(before, after);
    if (changed.length > 0) throw new Error(`${op.operationId} ?${query} (${label}): refused with ${answer.status} but tables changed: ${changed.join(', ')}`);
    refusals++;
  } else if (answer.body?.nextCursor) {
    cursors[op.path]?.push(answer.body.nextCursor);
  } else if (answer.body?.nextSince) {
    positions.push(answer.body.nextSince);
  }
  last = after;
  return answer;
}

const NUMBER_EDGES = ['0', '-1', '1.5', '1e3', '1e400', '-1e400', 'abc', '', '9999999999999999999999', '2147483648', '9223372036854775808', '9007199254740993', ' 1', '1 ', '+1', '0x10', '1_000', '١', 'NaN', 'Infinity', '-0', '00001', '1,2', '1.0', '1e-7', '%00'];
const DATE_EDGES = [
  '2026-02-30T00:00:00Z',
  '2026-06-30T23:59:60Z',
  '2026-12-31T23:59:60.999Z',
  '2026-03-14t12:00:00z',
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00.000Z',
  '9999-12-31T23:59:59.999Z',
  '+275760-09-13T00:00:00Z',
  '2026-03-14T12:00:00.123456789Z',
  '2026-03-14T12:00:00+24:00',
  '2026-03-14T12:00:00-23:59',
  '2026-03-14 12:00:00Z',
  '2026-03-14',
  '1970-01-01T00:00:00Z',
  '2026-13-01T00:00:00Z',
  '2026-03-14T25:00:00Z',
  '2026-03-14T12:00:00',
];

/** Tampered cursors: cut, extended, one character changed, re-encoded JSON, the other list's, oversized. */
function tamperedCursor(path: string): fc.Arbitrary<string> {
  const other = path === '/api/external/poles' ? '/api/external/service-orders' : '/api/external/poles';
  const pick = (list: string[], i: number) => list[i % Math.max(1, list.length)] ?? 'eyJ1IjoieCJ9';
  return fc.tuple(fc.nat(), fc.nat(), fc.constantFrom('cut', 'extend', 'flip', 'json', 'other', 'huge', 'random', 'same')).map(([i, j, how]) => {
    const c = pick(cursors[path]!, i);
    switch (how) {
      case 'cut':
        return c.slice(0, j % Math.max(1, c.length));
      case 'extend':
        return `${c}${'A'.repeat((j % 8) + 1)}`;
      case 'flip': {
        const k = j % c.length;
        return `${c.slice(0, k)}${c[k] === 'A' ? 'B' : 'A'}${c.slice(k + 1)}`;
      }
      case 'json':
        return Buffer.from(JSON.stringify({ u: "2026-01-01T00:00:00Z' OR 1=1 --", i: '00000000-0000-0000-0000-000000000000', p: -1, s: 1e309 })).toString('base64url');
      case 'other':
        return pick(cursors[other]!, i);
      case 'huge':
        return 'A'.repeat(513 + (j % 5000));
      case 'random':
        return Buffer.from(String(j)).toString('base64url');
      default:
        return c;
    }
  });
}

const anyValue = fc.oneof(fc.constantFrom(...NUMBER_EDGES, ...DATE_EDGES, ...HOSTILE_STRINGS), fc.string({ unit: 'binary', maxLength: 30 }));

/** One query parameter value: valid from its schema, or an edge case. */
function paramValue(name: string, path: string): fc.Arbitrary<string> {
  switch (name) {
    case 'page':
      return fc.oneof({ weight: 2, arbitrary: fc.integer({ min: 1, max: 30 }).map(String) }, { weight: 2, arbitrary: fc.constantFrom(...NUMBER_EDGES) }, { weight: 1, arbitrary: anyValue });
    case 'pageSize':
    case 'limit':
      return fc.oneof({ weight: 2, arbitrary: fc.integer({ min: 1, max: 5000 }).map(String) }, { weight: 2, arbitrary: fc.constantFrom(...NUMBER_EDGES) }, { weight: 1, arbitrary: anyValue });
    case 'updatedSince':
      return fc.oneof({ weight: 2, arbitrary: dateTimeArb }, { weight: 2, arbitrary: fc.constantFrom(...DATE_EDGES) }, { weight: 1, arbitrary: anyValue });
    case 'since':
      return fc.oneof(
        { weight: 2, arbitrary: fc.nat().map((i) => positions[i % Math.max(1, positions.length)] ?? '1970-01-01T00:00:00.000Z') },
        { weight: 1, arbitrary: dateTimeArb },
        { weight: 2, arbitrary: fc.constantFrom(...DATE_EDGES) },
        { weight: 1, arbitrary: anyValue },
      );
    case 'cursor':
      return fc.oneof({ weight: 3, arbitrary: tamperedCursor(path) }, { weight: 1, arbitrary: anyValue });
    default:
      return anyValue;
  }
}

/** A query string: some of the operation's parameters, sometimes repeated, sometimes unknown ones. */
function queryArb(op: OperationInfo): fc.Arbitrary<string> {
  const names = op.parameters.filter((p) => p.in === 'query').map((p) => p.name as string);
  const one = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: fc.constantFrom('foo', '__proto__', 'constructor', 'page[]', 'limit[0]', 'x'.repeat(300)) });
  return fc
    .array(one.chain((name) => paramValue(name, op.path).map((value) => [name, value] as const)), { maxLength: 5 })
    .map((pairs) => pairs.map(([k, v]) => `${encodeQuery(k)}=${encodeQuery(v)}`).join('&'));
}

/** Percent-encoding that also writes lone surrogates, as the (invalid UTF-8) bytes a careless client would send. */
function encodeQuery(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    const next = value.charCodeAt(i + 1);
    if (code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(value.slice(i, i + 2));
      i++;
    } else if (code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(value[i]!);
    }
  }
  return out;
}

const headerValue = fc.oneof(fc.constantFrom(...HOSTILE_STRINGS, 'en', 'pt-BR', 'en-US,en;q=0.9', '*', 'zz', 'en;q=abc', `${'a'.repeat(5000)}`), fc.string({ maxLength: 40 })).filter((v) => /^[\x20-\x7e\x80-\xff]*$/.test(v));

function headersArb(apiKey: fc.Arbitrary<string>): fc.Arbitrary<Record<string, string>> {
  return fc.record({ 'x-api-key': apiKey, 'accept-language': headerValue, 'x-request-id': headerValue }, { requiredKeys: ['x-api-key'] });
}

describe('partner reads under hostile query strings and headers', { timeout: 180_000 }, () => {
  for (const operationId of ['listPoles', 'listServiceOrders'] as const) {
    it(`${operationId}: any page, pageSize, updatedSince and cursor gets a documented answer; refusals change nothing`, async () => {
      const op = ops.get(operationId)!;
      // Real cursors to tamper with.
      for (let i = 0; i < 3; i++) await exchange(op, `pageSize=2${i ? `&cursor=${encodeURIComponent(cursors[op.path]!.at(-1)!)}` : ''}`, { 'x-api-key': reader }, 'walk');
      await fc.assert(
        fc.asyncProperty(queryArb(op), headersArb(fc.constantFrom(reader, reader, reader, noScope)), async (query, headers) => {
          const answer = await exchange(op, query, headers, JSON.stringify(headers).slice(0, 120));
          if (headers['x-api-key'] === noScope) expect([400, 403]).toContain(answer.status);
        }),
        { numRuns: RUNS.lists, endOnFailure: true },
      );
    });
  }

  it('listEvents: any since and limit gets a documented answer; a refused call confirms nothing', async () => {
    const op = ops.get('listEvents')!;
    await exchange(op, 'limit=3', { 'x-api-key': reader }, 'first read');
    await fc.assert(
      fc.asyncProperty(queryArb(op), headersArb(fc.constantFrom(reader)), async (query, headers) => {
        await exchange(op, query, headers, 'events');
      }),
      { numRuns: RUNS.events, endOnFailure: true },
    );
  });

  it('getHealth: any query and header values get a documented answer', async () => {
    const op = ops.get('getHealth')!;
    await fc.assert(
      fc.asyncProperty(queryArb({ ...op, parameters: [{ in: 'query', name: 'x' }] }), headersArb(fc.constantFrom(reader, noScope)), async (query, headers) => {
        const answer = await exchange(op, query, headers, 'health');
        // It takes no query parameter, and unknown ones are refused rather than ignored.
        expect(answer.status).toBe(query === '' ? 200 : 400);
      }),
      { numRuns: RUNS.health, endOnFailure: true },
    );
  });

  it('answers 401 to hostile API keys on every read, without echoing them', async () => {
    const keys = fc.oneof(fc.constantFrom(...HOSTILE_STRINGS, `lmn_test_${'0'.repeat(40)}`, reader.slice(0, -1), `${reader} `, reader.toUpperCase(), `${reader}${reader}`), fc.string({ maxLength: 80 })).filter((k) => /^[\x20-\x7e\x80-\xff]*$/.test(k) && k.trim() !== reader);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('getHealth', 'listPoles', 'listServiceOrders', 'listEvents'), keys, async (operationId, key) => {
        const headers: Record<string, string> = key === '' ? {} : { 'x-api-key': key };
        const answer = await exchange(ops.get(operationId)!, '', headers, `key ${JSON.stringify(key)}`);
        expect(answer.status).toBe(401);
        if (key.trim().length >= 4) expect(answer.text.includes(key.trim())).toBe(false);
      }),
      { numRuns: RUNS.keys, endOnFailure: true },
    );
  });

  it('answers the edge cases this suite once found failing with a documented status', async () => {
    const poles = ops.get('listPoles')!;
    const reads: [OperationInfo, string, number][] = [
      // A parameter named like an object's prototype once replaced it (500).
      [poles, '__proto__=x', 400],
      [poles, 'constructor=1&__proto__=y', 400],
      // Read as integers by the validator, but not numbers a page can echo (page: null).
      [poles, 'page=Infinity', 400],
      [poles, 'page=1e400', 400],
      [poles, 'page=9007199254740993', 400],
      // Valid RFC 3339 that PostgreSQL or Date could not take (500 or a wrong 400).
      [poles, 'updatedSince=0000-01-01T00%3A00%3A00Z', 200],
      [poles, 'updatedSince=9999-12-31T23%3A59%3A59.999Z', 200],
      [poles, 'updatedSince=2016-12-31T23%3A59%3A60Z', 200],
      [poles, 'updatedSince=2026-03-14t12%3A00%3A00z', 200],
      [ops.get('listEvents')!, 'since=2016-12-31T23%3A59%3A60Z', 200],
      // Integers in plain decimal only: JavaScript's Number (Ajv's coercion) read these as 16, 1000, 1 and 5.
      [poles, 'pageSize=0x10', 400],
      [poles, 'pageSize=1e3', 400],
      [poles, 'pageSize=%201', 400],
      [poles, 'pageSize=%2B5', 400],
      [poles, 'pageSize=5.0', 400],
      [poles, 'page=0b1', 400],
      [ops.get('listEvents')!, 'limit=0x10', 400],
      [poles, 'pageSize=16', 200],
    ];
    for (const [op, query, status] of reads) {
      const answer = await exchange(op, query, { 'x-api-key': reader }, 'edge case');
      expect(answer.status, `${op.operationId}?${query}: ${answer.text}`).toBe(status);
      // A refused integer names its parameter.
      if (status === 400 && /^(pageSize|page|limit)=/.test(query)) expect(JSON.parse(answer.text).errors[0].pointer).toBe(`/query/${query.split('=')[0]}`);
    }
  });

  it('records the figures', () => {
    expect(tally.serverErrors).toBe(0);
    expect(failures, 'figures are recorded only when every case above held').toBe(0);
    recordReliability(SECTION, {
      item: 'GET health, poles, service-orders, events: hostile query strings and headers',
      figure: `${tally.cases} requests, 0 answered 5xx, ${refusals} refusals changed 0 rows`,
      detail: `fast-check over the parameters' schemas and edge cases: overflowing and non-decimal numbers, impossible dates, leap seconds, lowercase t/z, years 0 and 275760, tampered and foreign cursors, repeated and unknown parameters, injection and unicode strings, hostile API keys, Accept-Language and X-Request-Id. Statuses: ${tally.summary()}. ${((Date.now() - started) / 1000).toFixed(0)} s.`,
    });
  });
});
