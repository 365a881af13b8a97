/**
 * Hostile input against every operation of openapi/open311.yaml: schema-generated
 * requests (valid and mutated, as form fields and as JSON), hostile path segments,
 * query values and formats, and no, wrong or form-only keys. Oracle: a status the
 * document lists for the operation, never a 5xx; an error answer is the GeoReport v2
 * error list in the format asked for, its `code` the status; a 2xx matches the document;
 * a refused POST changes no table.
 */
import fc from 'fast-check';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReason } from '../../src/services/operations/index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { recordReliability } from '../support/reliability.js';
import {
  HOSTILE_STRINGS,
  HostileClient,
  mutationArb,
  operationsOf,
  requestSchema,
  schemaErrors,
  serialise,
  serverLog,
  snapshotDiff,
  tableSnapshotQuery,
  Tally,
  valueArb,
  type Answer,
  type OperationInfo,
} from './hostile-support.js';

const SECTION = 'Hostile and broken input';
const RUNS = 150;
const ops = operationsOf('open311');
const create = ops.get('createServiceRequest')!;
const xml = new XMLParser({ parseTagValue: false, isArray: (name) => ['error'].includes(name) });

let t: TestApp;
let client: HostileClient;
let snapshot: () => Promise<Record<string, string>>;
let key: string;
let reader: string;
const ids: string[] = [];

beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_RATE_LIMIT_PER_MINUTE: '10000000', LUMEN_AUTH_FAILURES_PER_MINUTE: '10000000' } });
  client = new HostileClient(t.baseUrl);
  snapshot = await tableSnapshotQuery(t.rt.pool, ['rate_limit_window']);
  const tenant = await makeTenant(t.rt);
  await createReason(t.rt, { tenantId: tenant.id, code: 'LAMP_OUT', namePt: 'Lâmpada apagada', nameEn: 'Lamp out', priority: 'High', slaHours: 24 });
  key = (await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canCreateServiceOrders'], transport: 'polling' })).apiKey;
  reader = (await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'], transport: 'polling' })).apiKey;
  for (let i = 0; i < 3; i++) {
    const res = await client.send({ method: 'POST', path: '/open311/v2/requests.json', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': key }, body: `service_code=LAMP_OUT&lat=-23.55&long=-46.66&attribute[external_id]=seed-${i}` });
    expect(res.status, res.text).toBe(201);
    ids.push((res.body as { service_request_id: string }[])[0]!.service_request_id);
  }
});
afterAll(async () => {
  client?.close();
  await t?.stop();
});

/** What is wrong with an answer of `op` in `format` (null when nothing). */
function open311Violation(op: OperationInfo, format: string, answer: Answer): string | null {
  const { status } = answer;
  if (status >= 500) return `server error ${status}: ${answer.text.slice(0, 500)}`;
  // An unknown format or path is the surface's 404, documented for every operation.
  if (!op.statuses.has(status)) return `status ${status} is not documented for ${op.operationId}: ${answer.text.slice(0, 300)}`;
  const type = String(answer.headers['content-type']);
  const isXml = format === 'xml';
  if (isXml ? type !== 'text/xml; charset=utf-8' : !/^application\/json/.test(type)) return `${status} answered ${type} for .${format}`;
  if (isXml) {
    const valid = XMLValidator.validate(answer.text);
    if (valid !== true) return `not well-formed XML: ${JSON.stringify(valid)}`;
  }
  if (status >= 400) {
    const list = isXml ? (xml.parse(answer.text).errors?.error as { code: string }[] | undefined) : (answer.body as { code: number }[] | undefined);
    if (!Array.isArray(list) || list.length === 0) return `${status} without an error list: ${answer.text.slice(0, 300)}`;
    if (list.some((e) => Number(e.code) !== status)) return `error codes ${JSON.stringify(list)} differ from ${status}`;
    return null;
  }
  if (isXml) return null;
  const declared = `#/paths/${op.path.replaceAll('~', '~0').replaceAll('/', '~1')}/${op.method.toLowerCase()}/responses/${status}/content/application~1json/schema`;
  return schemaErrors('open311', declared, answer.body);
}

/** A JSON value as form fields: nested `attribute` members as attribute[code], lists repeated, other objects as JSON text. */
function asForm(value: unknown): string {
  const out = new URLSearchParams();
  if (!value || typeof value !== 'object' || Array.isArray(value)) return String(value);
  for (const [k, v] of Object.entries(value)) {
    if (k === 'attribute' && v && typeof v === 'object' && !Array.isArray(v)) {
      for (const [a, x] of Object.entries(v)) for (const item of [x].flat()) out.append(`attribute[${a}]`, String(item));
    } else for (const item of [v].flat()) out.append(k, typeof item === 'object' && item !== null ? JSON.stringify(item) : String(item));
  }
  return out.toString();
}

/** A path segment of any string; a lone surrogate, which no URL can carry, as its raw UTF-8 bytes. */
function encodeSegment(v: string): string {
  try {
    return encodeURIComponent(v);
  } catch {
    return '%ED%A0%80';
  }
}

const formatArb = fc.constantFrom('json', 'xml', 'json', 'xml', 'html', '', 'JSON');
type KeyCase = { label: string; headers: Record<string, string>; query: string };
const keyArb = (): fc.Arbitrary<KeyCase> =>
  fc.constantFrom<KeyCase>(
    { label: 'header key', headers: { 'x-api-key': key }, query: '' },
    { label: 'query key', headers: {}, query: `api_key=${key}` },
    { label: 'no key', headers: {}, query: '' },
    { label: 'wrong key', headers: { 'x-api-key': 'lmn_test_0000000000000000000000000000000000000000' }, query: '' },
    { label: 'reader key', headers: {}, query: `api_key=${reader}` },
  );
const hostile = fc.oneof(fc.constantFrom(...HOSTILE_STRINGS), fc.string({ maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 20 }));

describe('Open311 GeoReport v2 under hostile input', { timeout: 180_000 }, () => {
  it('POST requests: schema-generated bodies, valid and mutated, as form and JSON, answer documented statuses; refusals change nothing', async () => {
    const started = Date.now();
    const tally = new Tally();
    let refusals = 0;
    const body = valueArb('open311', requestSchema(create), {
      byProperty: {
        service_code: fc.constantFrom('LAMP_OUT', 'EXTERNAL_OTHER', 'NOPE', ...HOSTILE_STRINGS.slice(0, 8)),
        media_url: fc.constantFrom('http://127.0.0.1:9/none.jpg', 'http://169.254.169.254/x.png', 'https://127.0.0.1/a.webp'),
        api_key: fc.constantFrom(key, 'nonsense'),
        attribute: fc.dictionary(fc.constantFrom('external_id', 'fixmystreet_id', 'lamp_type', 'reference', 'title', '__proto__', 'a]b'), fc.oneof(hostile, fc.array(hostile, { maxLength: 3 })), { maxKeys: 4 }),
      },
    });
    await fc.assert(
      fc.asyncProperty(body, fc.option(mutationArb(), { freq: 3 }), fc.boolean(), formatArb, keyArb(), async (value, mutate, asJson, format, k) => {
        const m = mutate ? mutate(value as never) : { value, description: 'unmutated' };
        const before = await snapshot();
        const answer = await client.send({
          method: 'POST',
          path: `/open311/v2/requests${format ? `.${format}` : ''}${k.query ? `?${k.query}` : ''}`,
          headers: { 'content-type': asJson ? 'application/json' : 'application/x-www-form-urlencoded', ...k.headers },
          body: asJson ? serialise(m.value) : asForm(m.value),
        });
        tally.add(answer.status);
        const wrong = open311Violation(create, format.toLowerCase() === 'xml' ? 'xml' : 'json', answer);
        if (wrong) throw new Error(`${serverLog(t, answer)}\n${k.label}, ${asJson ? 'JSON' : 'form'}, ${m.description}: ${wrong}`);
        if (answer.status >= 400) {
          refusals++;
          const changed = snapshotDiff(before, await snapshot());
          if (changed.length > 0) throw new Error(`${m.description}: answered ${answer.status} but tables changed: ${changed.join(', ')}`);
        }
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
    expect(tally.serverErrors).toBe(0);
    recordReliability(SECTION, {
      item: 'Open311 POST requests: hostile bodies',
      figure: `${RUNS} requests (schema-generated, valid and mutated, form and JSON, five kinds of key): ${tally.summary()}, 0 5xx, ${refusals} refusals that changed nothing`,
      detail: `${((Date.now() - started) / 1000).toFixed(0)} s.`,
    });
  });

  it('POST requests: lat and long in decimal only, email an e-mail address; the refusals name the field and change nothing', async () => {
    const send = async (fields: Record<string, string>, asJson = false) => {
      const before = await snapshot();
      const answer = await client.send({
        method: 'POST',
        path: '/open311/v2/requests.json',
        headers: { 'content-type': asJson ? 'application/json' : 'application/x-www-form-urlencoded', 'x-api-key': key },
        body: asJson ? JSON.stringify(fields) : new URLSearchParams(fields).toString(),
      });
      if (answer.status >= 400) expect(snapshotDiff(before, await snapshot())).toEqual([]);
      return answer;
    };
    const base = { service_code: 'LAMP_OUT', description: 'Poste apagado', attribute: '' };
    delete (base as Record<string, string>).attribute;
    for (const [field, value] of [
      ['lat', '0x10'],
      ['lat', '1e1'],
      ['lat', ' -23.5'],
      ['lat', '+23.5'],
      ['long', '0b1'],
      ['long', 'Infinity'],
    ] as const) {
      const fields = { ...base, lat: '-23.5505', long: '-46.6333', [field]: value };
      for (const asJson of [false, true]) {
        const answer = await send(fields, asJson);
        expect(answer.status, `${field}=${value} (${asJson ? 'JSON' : 'form'}): ${answer.text}`).toBe(400);
        expect(JSON.parse(answer.text)).toEqual([{ code: 400, description: expect.stringMatching(new RegExp(`^${field}: `)) }]);
      }
    }
    for (const email of ['notanemail', 'a@', '@b.example', 'a b@c.example']) {
      const answer = await send({ ...base, lat: '-23.5505', long: '-46.6333', email });
      expect(answer.status, `email=${email}: ${answer.text}`).toBe(400);
      expect(answer.text).toContain('email');
    }
    const fine = await send({ ...base, lat: '-23.5505', long: '-46.6333', email: 'maria.da.silva@example.com.br' });
    expect(fine.status, fine.text).toBeLessThan(300);
  });

  it('every GET operation: hostile path values, query values and formats answer documented statuses in the format asked for', async () => {
    const started = Date.now();
    const tally = new Tally();
    const gets = [...ops.values()].filter((o) => o.method === 'GET');
    const queryNames = ['service_request_id', 'service_code', 'start_date', 'end_date', 'updated_after', 'updated_before', 'status', 'jurisdiction_id', 'api_key', '__proto__'];
    const queryArb = fc.array(fc.tuple(fc.constantFrom(...queryNames), fc.oneof(hostile, fc.constantFrom('open', 'closed,open', '2026-01-01T00:00:00Z', ...ids, ids.join(',')))), { maxLength: 4 });
    const segmentArb = fc.oneof(fc.constantFrom(...ids, 'LAMP_OUT', '2d7f9c1a-6e4b-4f8d-9c3a-7b5e1f2a8d64', '%E0%A4%A', '..', '%2F', '%00', '99999999999999999999'), hostile.map(encodeSegment));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...gets), segmentArb, queryArb, formatArb, keyArb(), async (op, segment, query, format, k) => {
        const path = op.path.replace(/\{(service_code|service_request_id|token)\}/, segment).replace('{format}', format).replace(/\.$/, '');
        const qs = new URLSearchParams(query);
        if (k.query) qs.append('api_key', k.query.slice('api_key='.length));
        const answer = await client.send({ method: 'GET', path: `${path}${qs.size ? `?${qs}` : ''}`, headers: k.headers });
        tally.add(answer.status);
        const wrong = open311Violation(op, /\.xml$/i.test(path) ? 'xml' : 'json', answer);
        if (wrong) throw new Error(`${serverLog(t, answer)}\n${op.operationId} ${path}?${qs} (${k.label}): ${wrong}`);
      }),
      { numRuns: RUNS * 2, endOnFailure: true },
    );
    expect(tally.serverErrors).toBe(0);
    recordReliability(SECTION, {
      item: `Open311 reads (${gets.length} operations): hostile paths, queries and formats`,
      figure: `${RUNS * 2} requests: ${tally.summary()}, 0 5xx`,
      detail: `${((Date.now() - started) / 1000).toFixed(0)} s.`,
    });
  });
});
