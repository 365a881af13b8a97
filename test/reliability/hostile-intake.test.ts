/**
 * Hostile and broken input against POST /api/external/service-orders: requests built
 * from the contract's IntakeRequest schema (valid by construction), then mutated (wrong
 * types, missing and extra fields, huge strings, deep nesting, unicode edge cases, SQL
 * and header injection), broken at the byte level (invalid UTF-8, truncation), sent
 * with bad Idempotency-Keys and content types, or sent too slowly, as raw HTTP a normal
 * client refuses to write. Oracle: a documented 4xx problem+json or a 2xx that matches
 * the document, never a 5xx; a rejected request changes no table and leaves no blob.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makePartner, makeTenant } from '../support/factories.js';
import { recordReliability } from '../support/reliability.js';
import { serverLog } from './hostile-support.js';
import { intakeBody, JPEG, listFiles, PNG, startIntakeApp, startStub, type IntakeTestApp, type StubServer } from '../intake/support.js';
import {
  HEADER_INJECTIONS,
  HostileClient,
  HOSTILE_STRINGS,
  INVALID_UTF8,
  mutationArb,
  operationsOf,
  rawExchange,
  requestSchema,
  serialise,
  snapshotDiff,
  tableSnapshotQuery,
  Tally,
  valueArb,
  violation,
  type Answer,
} from './hostile-support.js';

const SECTION = 'Hostile and broken input';
const RUNS = { mutated: 800, bytes: 300, keys: 150, replays: 40, contentTypes: 40 };
const BODY_LIMIT = 2 * 1024 * 1024;
const BODY_TIMEOUT_MS = 1500;

const op = operationsOf('partner').get('createServiceOrder')!;
const PATH = '/api/external/service-orders';

let t: IntakeTestApp;
let stub: StubServer;
let client: HostileClient;
let snapshot: () => Promise<Record<string, string>>;
let partners: { apiKey: string; tenantId: string }[];
const tally = new Tally();
let rejectedChecked = 0;
const started = Date.now();

beforeAll(async () => {
  t = await startIntakeApp({
    LUMEN_BODY_LIMIT: String(BODY_LIMIT),
    LUMEN_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
    LUMEN_RATE_LIMIT_PER_MINUTE: '10000000',
    // Keep background geocoding retries out of the run, so only requests write rows.
    LUMEN_GEOCODE_RETRY_DELAY_SECONDS: '3600',
    LUMEN_ATTACHMENT_RETRY_DELAY_MS: '0',
  });
  stub = await startStub((req, res) => {
    if (req.url === '/photo.jpg') res.writeHead(200, { 'content-type': 'image/jpeg' }).end(JPEG);
    else res.writeHead(404).end();
  });
  client = new HostileClient(t.baseUrl);
  snapshot = await tableSnapshotQuery(t.rt.pool);
  const automatic = await makeTenant(t.rt, { intakePolicy: 'automatic' });
  const manual = await makeTenant(t.rt, { intakePolicy: 'manual' });
  partners = [
    { apiKey: (await makePartner(t.rt, { tenantId: automatic.id, scopes: ['canCreateServiceOrders'] })).apiKey, tenantId: automatic.id },
    { apiKey: (await makePartner(t.rt, { tenantId: manual.id, scopes: ['canCreateAlerts'] })).apiKey, tenantId: manual.id },
  ];
});

let failures = 0;
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') failures++;
  // Raw exchanges and other tests write on their own: start the next one from a fresh snapshot.
  last = null;
});

afterAll(async () => {
  client?.close();
  await stub?.close();
  await t?.stop();
});

/** Valid IntakeRequest bodies; URLs only ever point at the loopback stub, protocol numbers often repeat (resends). */
const validBody = valueArb('partner', requestSchema(op), {
  byProperty: {
    protocolNumber: fc.oneof(fc.uuid(), fc.constantFrom('HOSTILE-1', 'HOSTILE-2', 'HOSTILE-3')),
    url: fc.constantFrom('/photo.jpg', '/missing.jpg').map((p) => `${stub.url}${p}`),
    contentBase64: fc.constantFrom(JPEG.toString('base64'), PNG.toString('base64'), 'not base64!', `data:image/png;base64,${PNG.toString('base64')}`),
  },
  maxItems: 3,
});

function blobsOf(tenantId: string): string[] {
  return listFiles(`${t.blobDir}/tenants/${tenantId}`).sort();
}

/**
 * Sends one request and applies the oracle; for a rejected request, also proves that no
 * table changed and no blob was written.
 */
let last: Record<string, string> | null = null;

async function exchange(partner: { apiKey: string; tenantId: string }, body: Buffer | string, headers: Record<string, string>, label: string): Promise<Answer> {
  // The state after the previous request is the state before this one (nothing else writes).
  const before = last ?? (await snapshot());
  last = null;
  const blobsBefore = blobsOf(partner.tenantId);
  const answer = await client.send({ method: 'POST', path: PATH, headers: { 'content-type': 'application/json', 'x-api-key': partner.apiKey, ...headers }, body });
  tally.add(answer.status);
  const wrong = violation(op, answer);
  if (wrong) throw new Error(`${serverLog(t, answer)}\n`+`${label}: ${wrong}\nbody sent (start): ${String(body).slice(0, 400)}`);
  const after = await snapshot();
  if (answer.status >= 400) {
    const changed = snapshotDiff(before, after);
    if (changed.length > 0) throw new Error(`${label}: rejected with ${answer.status} but tables changed: ${changed.join(', ')}`);
    expect(blobsOf(partner.tenantId), `${label}: blobs of a rejected request`).toEqual(blobsBefore);
    rejectedChecked++;
  }
  last = after;
  return answer;
}

describe('POST /api/external/service-orders under hostile input', { timeout: 240_000 }, () => {
  it('answers schema-generated bodies, valid and mutated, with a documented status and leaves nothing behind when it refuses them', async () => {
    let unmutatedAccepted = 0;
    await fc.assert(
      fc.asyncProperty(validBody, fc.option(mutationArb(), { freq: 6 }), fc.nat({ max: 1 }), fc.option(fc.uuid(), { freq: 3 }), async (body, mutate, who, key) => {
        const m = mutate ? mutate(body as never) : { value: body, description: 'unmutated' };
        const answer = await exchange(partners[who]!, serialise(m.value), key ? { 'idempotency-key': key } : {}, m.description);
        if (!mutate) {
          expect(answer.status, `a valid body was refused: ${answer.text}`).toBeLessThan(300);
          unmutatedAccepted++;
        }
      }),
      { numRuns: RUNS.mutated, endOnFailure: true },
    );
    expect(unmutatedAccepted).toBeGreaterThan(RUNS.mutated / 10);
  });

  it('refuses invalid UTF-8 and truncated JSON with 400 malformed-json', async () => {
    await fc.assert(
      fc.asyncProperty(validBody, fc.constantFrom(...INVALID_UTF8), fc.nat(), fc.boolean(), async (body, bad, at, truncate) => {
        const text = Buffer.from(serialise(body));
        let bytes: Buffer;
        if (truncate) {
          bytes = text.subarray(0, at % text.length);
        } else {
          // Inside a string value: right after an opening quote.
          const quotes = [...text.toString('latin1').matchAll(/"/g)].map((x) => x.index);
          const i = quotes[at % quotes.length]! + 1;
          bytes = Buffer.concat([text.subarray(0, i), bad, text.subarray(i)]);
        }
        const answer = await exchange(partners[0]!, bytes, {}, truncate ? `truncated at ${at % text.length}` : `invalid UTF-8 ${bad.toString('hex')}`);
        expect(answer.status).toBe(400);
        expect(answer.body.type).toBe('urn:lumen:problem:malformed-json');
      }),
      { numRuns: RUNS.bytes, endOnFailure: true },
    );
  });

  it('takes only UUID Idempotency-Keys (bare or quoted, any case) and stores nothing for the others', async () => {
    const uuidForms = fc.uuid().chain((u) => fc.constantFrom(u, `"${u}"`, u.toUpperCase(), `"${u.toUpperCase()}"`));
    const badKeys = fc.oneof(
      fc.constantFrom(...HOSTILE_STRINGS.filter((s) => !/[\r\n\u0000]/.test(s) && /^[\x20-\x7e\x80-\xff]*$/.test(s))),
      fc.uuid().map((u) => u.replaceAll('-', '')),
      fc.uuid().map((u) => `{${u}}`),
      fc.uuid().map((u) => `${u}0`),
      fc.uuid().map((u) => `"${u}`),
      fc.uuid().map((u) => ` ${u}, ${u}`),
      fc.string({ unit: 'binary-ascii', maxLength: 80 }).filter((s) => /^[\x20-\x7e]*$/.test(s) && s.trim() !== ''),
    );
    await fc.assert(
      fc.asyncProperty(validBody, fc.oneof(uuidForms.map((k) => ({ k, valid: true })), badKeys.map((k) => ({ k, valid: false }))), async (body, { k, valid }) => {
        const answer = await exchange(partners[0]!, serialise(body), { 'idempotency-key': k }, `Idempotency-Key ${JSON.stringify(k)}`);
        if (valid) expect(answer.status, answer.text).toBeLessThan(300);
        else expect(answer.body?.type, answer.text).toBe('urn:lumen:problem:invalid-idempotency-key');
      }),
      { numRuns: RUNS.keys, endOnFailure: true },
    );
  });

  it('replays a key with its original answer and refuses it with any other body, changing nothing', async () => {
    await fc.assert(
      fc.asyncProperty(validBody, mutationArb(), async (body, mutate) => {
        const key = randomUUID();
        const body1 = { ...(body as object), protocolNumber: randomUUID() };
        const first = await exchange(partners[0]!, serialise(body1), { 'idempotency-key': key }, 'first use of a key');
        expect(first.status).toBe(201);
        const replay = await exchange(partners[0]!, serialise(body1), { 'idempotency-key': key }, 'replay');
        expect(replay.status).toBe(200);
        expect(replay.text).toBe(first.text);
        const m = mutate(body1 as never);
        const other = await exchange(partners[0]!, serialise(m.value), { 'idempotency-key': key }, `same key, ${m.description}`);
        if (other.status < 300) expect(other.text, 'a mutated body answered as the original').toBe(first.text);
        else expect(other.status).toBeGreaterThanOrEqual(400);
      }),
      { numRuns: RUNS.replays, endOnFailure: true },
    );
  });

  it('refuses bodies that are not JSON with 415, whatever their content type claims', async () => {
    const types = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/jsonx', 'json', '', 'application/json-patch', 'text/json', 'application/*', '*/*', 'application/merge-patch+json', 'application/problem+json', 'application/json; charset=utf-16', 'application/json; charset=latin1', 'application/json; profile=x'];
    await fc.assert(
      fc.asyncProperty(validBody, fc.constantFrom(...types), async (body, contentType) => {
        const answer = await exchange(partners[0]!, serialise(body), { 'content-type': contentType }, `content-type ${JSON.stringify(contentType)}`);
        expect(answer.status).toBe(415);
      }),
      { numRuns: RUNS.contentTypes, endOnFailure: true },
    );
  });

  it('holds to the strict input the contract promises: one value per property, Unicode text, application/json in UTF-8, requestedAt within bounds', async () => {
    const base = (): Record<string, unknown> => intakeBody(randomUUID()) as unknown as Record<string, unknown>;
    const json = serialise(base());
    // A property named twice: JSON.parse would keep the last one silently.
    const twice = await exchange(partners[0]!, json.replace('{', '{"assetType":"POLE",'), {}, 'duplicate top-level key');
    expect(twice.status).toBe(400);
    expect(JSON.parse(twice.text).errors).toEqual([expect.objectContaining({ pointer: '/assetType' })]);
    const nested = await exchange(partners[0]!, json.replace('"problem":{', '"problem":{"description":"first",'), {}, 'duplicate nested key');
    expect(nested.status).toBe(400);
    expect(JSON.parse(nested.text).errors[0].pointer).toBe('/problem/description');
    const escaped = await exchange(partners[0]!, json.replace('{', '{"asset\\u0054ype":"POLE",'), {}, 'duplicate key written with an escape');
    expect(escaped.status).toBe(400);
    // The same characters in a string value are not a key.
    const inValue = base();
    (inValue.problem as Record<string, unknown>).description = '{"a":1,"a":2}';
    expect((await exchange(partners[0]!, serialise(inValue), {}, 'braces inside a string')).status).toBe(201);

    // A lone surrogate is not Unicode text: refused with its pointer, never stored as U+FFFD.
    const lone = await exchange(partners[0]!, json.replace('"description":"', '"description":"a\\ud800b'), {}, 'lone surrogate');
    expect(lone.status, lone.text).toBe(422);
    expect(JSON.parse(lone.text).errors[0].pointer).toBe('/problem/description');
    const pair = base();
    (pair.problem as Record<string, unknown>).description = 'poste apagado \u{1F4A1}';
    expect((await exchange(partners[0]!, serialise(pair), {}, 'a surrogate pair')).status).toBe(201);

    // JSON in UTF-8 only, with or without the charset parameter.
    expect((await exchange(partners[0]!, serialise(base()), { 'content-type': 'application/json; charset=utf-8' }, 'charset=utf-8')).status).toBe(201);
    expect((await exchange(partners[0]!, serialise(base()), { 'content-type': 'Application/JSON; Charset="UTF-8"' }, 'charset="UTF-8"')).status).toBe(201);
    expect((await exchange(partners[0]!, serialise(base()), { 'content-type': 'application/merge-patch+json' }, 'merge-patch')).status).toBe(415);

    // requestedAt between 2000-01-01 and five minutes ahead.
    for (const [requestedAt, status] of [
      ['0000-01-01T00:00:00Z', 422],
      ['1999-12-31T23:59:59Z', 422],
      ['2999-01-01T00:00:00Z', 422],
      [new Date(Date.now() + 10 * 60_000).toISOString(), 422],
      ['2000-01-01T00:00:00Z', 201],
      [new Date(Date.now() + 60_000).toISOString(), 201],
    ] as const) {
      const answer = await exchange(partners[0]!, serialise({ ...base(), requestedAt }), {}, `requestedAt ${requestedAt}`);
      expect(answer.status, `requestedAt ${requestedAt}: ${answer.text}`).toBe(status);
      if (status === 422) expect(JSON.parse(answer.text).errors[0].pointer).toBe('/requestedAt');
    }
  });

  it('refuses bodies over the limit with 413, by Content-Length or while streaming, and closes the connection', async () => {
    const big = serialise(intakeBody(randomUUID(), { problem: { description: 'x'.repeat(BODY_LIMIT) } }));
    const declared = await exchange(partners[0]!, big, {}, 'oversized body');
    expect(declared.status).toBe(413);
    expect(declared.headers.connection).toBe('close');

    // Chunked, so the size is only known while reading.
    const before = await snapshot();
    const head = `POST ${PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${partners[0]!.apiKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const chunk = 'x'.repeat(256 * 1024);
    const pieces = [head, ...Array.from({ length: 12 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`)];
    const streamed = await rawExchange(t.app.address.port, { pieces, everyMs: 1 });
    tally.add(streamed.status);
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body)).toMatchObject({ type: 'urn:lumen:problem:payload-too-large', status: 413 });
    expect(snapshotDiff(before, await snapshot())).toEqual([]);
  });

  it('times out a body sent one byte a second with 408, closes the connection and stores nothing', async () => {
    const before = await snapshot();
    const body = serialise(intakeBody(randomUUID()));
    const head = `POST ${PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${partners[0]!.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    const slow = await rawExchange(t.app.address.port, { pieces: [head, ...body.split('')], everyMs: 1000 }, BODY_TIMEOUT_MS + 10_000);
    tally.add(slow.status);
    expect(slow.status).toBe(408);
    expect(slow.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(slow.body)).toMatchObject({ type: 'urn:lumen:problem:request-timeout', status: 408 });
    expect(slow.closed).toBe(true);
    // Answered at the deadline, not when the client finally stops.
    expect(slow.elapsedMs).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 50);
    expect(slow.elapsedMs).toBeLessThan(BODY_TIMEOUT_MS + 1500);

    // A body that stalls after a few bytes is cut the same way.
    const stalled = await rawExchange(t.app.address.port, `${head}${body.slice(0, 10)}`, BODY_TIMEOUT_MS + 10_000);
    tally.add(stalled.status);
    expect(stalled.status).toBe(408);
    expect(snapshotDiff(before, await snapshot())).toEqual([]);
  });

  it('survives truncated, lying and unparseable HTTP, answering problem+json where anyone is left to read it', async () => {
    const port = t.app.address.port;
    const key = partners[0]!.apiKey;
    const body = serialise(intakeBody(randomUUID()));
    const head = (extra: string) => `POST ${PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${key}\r\nContent-Type: application/json\r\n${extra}\r\n`;
    const before = await snapshot();
    const cases: { label: string; bytes: string | { pieces: string[]; everyMs: number; endAfter?: boolean }; expect: (a: Awaited<ReturnType<typeof rawExchange>>) => void }[] = [
      {
        label: 'Content-Length longer than the body, then the client hangs up',
        bytes: { pieces: [head(`Content-Length: ${Buffer.byteLength(body) + 100}\r\n`), body], everyMs: 20, endAfter: true },
        expect: (a) => expect(a.closed).toBe(true),
      },
      {
        label: 'Content-Length shorter than the body: JSON cut, the rest is not HTTP',
        bytes: head(`Content-Length: ${Math.floor(body.length / 2)}\r\n`) + body,
        expect: (a) => {
          // Whichever Lumen notices first: the cut JSON, or the unparseable rest.
          expect(a.status).toBe(400);
          expect(['urn:lumen:problem:malformed-json', 'urn:lumen:problem:malformed-request']).toContain(JSON.parse(a.body).type);
        },
      },
      {
        label: 'broken chunked framing',
        bytes: `${head('Transfer-Encoding: chunked\r\n')}zz\r\n${body}\r\n0\r\n\r\n`,
        expect: (a) => {
          expect(a.status).toBe(400);
          expect(a.headers['content-type']).toMatch(/^application\/problem\+json/);
          expect(JSON.parse(a.body).type).toBe('urn:lumen:problem:malformed-request');
        },
      },
      {
        label: 'Content-Length and Transfer-Encoding together (request smuggling)',
        bytes: `${head('Content-Length: 4\r\nTransfer-Encoding: chunked\r\n')}0\r\n\r\nGET /api/external/health HTTP/1.1\r\nHost: x\r\n\r\n`,
        expect: (a) => {
          expect(a.status).toBe(400);
          expect(JSON.parse(a.body).type).toBe('urn:lumen:problem:malformed-request');
        },
      },
      {
        label: 'a bare CR inside a header value',
        bytes: `${head(`X-Request-Id: abc\rSet-Cookie: lumen=evil\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`)}${body}`,
        expect: (a) => {
          expect(a.status).toBe(400);
          expect(JSON.parse(a.body).type).toBe('urn:lumen:problem:malformed-request');
        },
      },
      {
        label: 'NUL in a header value',
        bytes: `${head(`Idempotency-Key: ${randomUUID()}\u0000x\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`)}${body}`,
        expect: (a) => expect(a.status).toBe(400),
      },
      {
        label: 'headers over 16 KiB',
        bytes: `${head(`X-Padding: ${'a'.repeat(20_000)}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`)}${body}`,
        expect: (a) => {
          expect(a.status).toBe(431);
          expect(JSON.parse(a.body).type).toBe('urn:lumen:problem:headers-too-large');
        },
      },
      {
        label: 'a request line that is not HTTP',
        bytes: `POST /api/external/service-orders HTTP/9.9 extra\r\n\r\n`,
        expect: (a) => expect(a.status).toBe(400),
      },
    ];
    for (const c of cases) {
      const answer = await rawExchange(port, c.bytes as never);
      tally.add(answer.status);
      if (answer.status >= 500) throw new Error(`${c.label}: ${answer.status} ${answer.body}`);
      if (answer.status >= 400) expect(answer.headers['content-type'], c.label).toMatch(/^application\/problem\+json/);
      c.expect(answer);
    }
    expect(snapshotDiff(before, await snapshot())).toEqual([]);
    // The service is whole afterwards.
    expect((await exchange(partners[0]!, serialise(intakeBody(randomUUID())), {}, 'after the raw cases')).status).toBe(201);
  });

  it('never reflects injected header text, and never fails on hostile Accept-Language or X-Request-Id', async () => {
    const values = [...HEADER_INJECTIONS, ...HOSTILE_STRINGS].filter((s) => /^[\x20-\x7e\x80-\xff]*$/.test(s) && s !== '');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...values), fc.constantFrom('accept-language', 'x-request-id'), async (value, header) => {
        const answer = await exchange(partners[0]!, serialise(intakeBody(randomUUID())), { [header]: value }, `${header}: ${JSON.stringify(value)}`);
        expect(answer.status).toBe(201);
        expect(['pt-BR', 'en']).toContain(answer.headers['content-language']);
        expect(answer.headers['set-cookie']).toBeUndefined();
        if (header === 'x-request-id') expect(answer.headers['x-request-id'] === value).toBe(/^[A-Za-z0-9._:-]{1,64}$/.test(value));
      }),
      { numRuns: 80, endOnFailure: true },
    );
    // Raw: CRLF in a value splits it into two request headers, and neither comes back.
    const body = serialise(intakeBody(randomUUID()));
    const raw = await rawExchange(
      t.app.address.port,
      `POST ${PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${partners[0]!.apiKey}\r\nContent-Type: application/json\r\nX-Request-Id: abc\r\nSet-Cookie: lumen=evil\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    tally.add(raw.status);
    expect(raw.status).toBe(201);
    expect(raw.headers['set-cookie']).toBeUndefined();
    expect(raw.headers['x-request-id']).toBe('abc');
  });

  it('refuses NUL characters and nesting deeper than 64 levels with 422 and a pointer; 63 levels get past the depth check to the closed schema', async () => {
    const base = intakeBody(randomUUID());
    const cases: [string, number, string | null][] = [
      [serialise({ ...base, requester: { name: 'Maria\u0000Souza' } }), 422, '/requester/name'],
      [serialise({ ...base, ['x\u0000y']: 1 }), 422, '/x\u0000y'],
      [`{"nested":${'['.repeat(64)}${']'.repeat(64)},${serialise({ ...base, protocolNumber: randomUUID() }).slice(1)}`, 422, `/nested${'/0'.repeat(63)}`],
      // Within the depth limit: the only problem left is that the body is closed.
      [`{"nested":${'['.repeat(63)}${']'.repeat(63)},${serialise({ ...base, protocolNumber: randomUUID() }).slice(1)}`, 422, '/nested'],
    ];
    for (const [body, status, pointer] of cases) {
      const answer = await exchange(partners[0]!, body, {}, `${status} ${pointer}`);
      expect(answer.status, answer.text).toBe(status);
      if (pointer !== null) expect(answer.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    }
    const within = await exchange(partners[0]!, `{"nested":${'['.repeat(63)}${']'.repeat(63)},${serialise({ ...base, protocolNumber: randomUUID() }).slice(1)}`, {}, 'depth 63');
    expect(within.body.errors).toEqual([{ pointer: '/nested', message: expect.stringContaining('unknown properties are refused') }]);
  });

  it('keeps every stored blob tied to an attachment row, and records the figures', async () => {
    const rows = await t.rt.db.selectFrom('alert_attachment').select('blob_path').where('blob_path', 'is not', null).execute();
    const files = listFiles(t.blobDir).sort();
    expect(files).toEqual(rows.map((r) => r.blob_path!).sort());
    expect(tally.serverErrors).toBe(0);
    expect(failures, 'figures are recorded only when every case above held').toBe(0);
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    recordReliability(SECTION, {
      item: 'POST /api/external/service-orders: schema-generated bodies, mutated',
      figure: `${tally.cases} requests, 0 answered 5xx, ${rejectedChecked} refusals left 0 rows and 0 blobs`,
      detail: `fast-check over the IntakeRequest schema: wrong types, missing/extra fields, huge strings (to 1 MB), nesting to 200 000 levels, NUL, lone surrogates, RTL, emoji, combining marks, SQL and header injection, invalid UTF-8, truncation, bad Idempotency-Keys and content types, 413, a one-byte-a-second body (408 after ${BODY_TIMEOUT_MS} ms), raw HTTP (lying Content-Length, broken chunking, smuggling, bare CR, NUL, 20 KiB headers). Statuses: ${tally.summary()}. ${seconds} s.`,
    });
  });
});
