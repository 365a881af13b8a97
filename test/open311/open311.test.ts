/**
 * Open311 GeoReport v2 as its clients use it: FixMyStreet-shaped form posts (api_key and
 * jurisdiction_id in the form, attribute[...] fields, XML answers), JSON clients, the
 * specification's own examples of shapes, tokens under manual triage, and the operator's
 * note coming back as status_notes once the order is completed.
 */
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/audit/index.js';
import { updatePartner } from '../../src/services/partners/index.js';
import { connect } from 'node:net';
import { assignServiceOrder, cancelServiceOrder, completeServiceOrder, createOrderFromAlert, createReason, discardAlert, startServiceOrder } from '../../src/services/operations/index.js';
import { makeCityTeam, makePartner, makeTenant } from '../support/factories.js';
import { JPEG, startIntakeApp, startStub, type IntakeTestApp, type StubServer } from '../intake/support.js';

const PUBLIC_URL = 'https://lumen.curitiba.example';
/** The tenants' IBGE code (the factory's default): their jurisdiction_id. */
const JURISDICTION = '3550308';

let t: IntakeTestApp;
let photos: StubServer;
let city: { tenantId: string; key: string };
let manual: { tenantId: string; key: string };
let reader: string;
let stranger: string;

const xml = new XMLParser({ parseTagValue: false, isArray: (name) => ['request', 'service', 'error', 'endpoint', 'format'].includes(name) });

beforeAll(async () => {
  t = await startIntakeApp({ LUMEN_RATE_LIMIT_PER_MINUTE: '100000', LUMEN_PUBLIC_URL: PUBLIC_URL });
  photos = await startStub((_req, res) => {
    res.writeHead(200, { 'content-type': 'image/jpeg' }).end(JPEG);
  });
  const tenant = await makeTenant(t.rt);
  await createReason(t.rt, { tenantId: tenant.id, code: 'LAMP_OUT', namePt: 'Lâmpada apagada', nameEn: 'Lamp out', priority: 'High', slaHours: 24 });
  city = { tenantId: tenant.id, key: (await makePartner(t.rt, { tenantId: tenant.id, code: 'fixmystreet', scopes: ['canCreateServiceOrders'], transport: 'polling' })).apiKey };
  reader = (await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'], transport: 'polling' })).apiKey;
  const triaged = await makeTenant(t.rt, { intakePolicy: 'manual' });
  await createReason(t.rt, { tenantId: triaged.id, code: 'LAMP_OUT', namePt: 'Lâmpada apagada', nameEn: 'Lamp out', priority: 'Medium', slaHours: 48 });
  manual = { tenantId: triaged.id, key: (await makePartner(t.rt, { tenantId: triaged.id, scopes: ['canCreateServiceOrders'], transport: 'polling' })).apiKey };
  stranger = (await makePartner(t.rt, { scopes: ['canCreateServiceOrders'], transport: 'polling' })).apiKey;
});
afterAll(async () => {
  await photos?.close();
  await t?.stop();
});

/** One request written as raw bytes (a URL no client library would send): status, content type and body of the answer. */
function rawRequest(head: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(t.app.address.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [headers, ...rest] = text.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers!)?.[1]), type: /\r\ncontent-type: ([^\r]+)/i.exec(headers!)?.[1] ?? '', body: rest.join('\r\n\r\n') });
    });
    // Written without closing our side: the answers here all close the connection themselves.
    socket.write(head);
  });
}

const form = (fields: [string, string][]) => new URLSearchParams(fields).toString();
const postForm = (path: string, fields: [string, string][]) =>
  fetch(`${t.baseUrl}/open311/v2/${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form(fields) });
const get = (path: string, headers: Record<string, string> = {}) => fetch(`${t.baseUrl}/open311/v2/${path}`, { headers });

/** A request as FixMyStreet's Open311 client posts it. */
function fixMyStreet(id: string, over: [string, string][] = []): [string, string][] {
  return [
    ['jurisdiction_id', JURISDICTION],
    ['api_key', city.key],
    ['lat', '-23.5573'],
    ['long', '-46.6602'],
    ['email', 'maria@example.com'],
    ['description', 'title: Lâmpada apagada\n\ndetail: Poste em frente ao 1500 apagado há três noites.\n\nurl: https://fixmystreet.example/report/42'],
    ['service_code', 'LAMP_OUT'],
    ['first_name', 'Maria'],
    ['last_name', 'dos Santos'],
    ['phone', '+55 11 98765-4321'],
    ['media_url', `${photos.url}/photo/${id}.jpeg`],
    ['attribute[fixmystreet_id]', id],
    ['attribute[title]', 'Lâmpada apagada'],
    ['attribute[report_url]', `https://fixmystreet.example/report/${id}`],
    ...over,
  ];
}

async function orderOf(tenantId: string, alertNumber: string) {
  return t.rt.db.selectFrom('alert').select(['id', 'service_order_id', 'requester_phone', 'requester_name', 'additional_notes', 'protocol_number']).where('tenant_id', '=', tenantId).where('alert_number', '=', Number(alertNumber)).executeTakeFirstOrThrow();
}

describe('Open311 GeoReport v2', () => {
  it('discovery needs no key and lists both formats; services are the city’s reasons, in XML and JSON', async () => {
    const d = await get('discovery.xml');
    expect(d.status).toBe(200);
    expect(d.headers.get('content-type')).toBe('text/xml; charset=utf-8');
    const doc = xml.parse(await d.text());
    expect(doc.discovery.endpoints.endpoint[0].formats.format).toEqual(['text/xml', 'application/json']);
    expect(doc.discovery.endpoints.endpoint[0].url).toBe('https://lumen.curitiba.example/open311/v2');
    // Never from the Host header a client sends.
    const spoofed = (await (await get('discovery.json', { host: 'evil.example' })).json()) as { endpoints: { url: string }[] };
    expect(spoofed.endpoints[0]!.url).toBe('https://lumen.curitiba.example/open311/v2');

    // Its contract is served and rendered like the others.
    const served = (await (await get('openapi.json')).json()) as { info: { title: string }; paths: Record<string, unknown> };
    expect(served.info.title).toBe('Lumen Open311 GeoReport v2');
    expect(Object.keys(served.paths)).toContain('/open311/v2/requests.{format}');
    const page = await fetch(`${t.baseUrl}/docs/open311`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('/open311/v2/openapi.json');

    const s = xml.parse(await (await get(`services.xml?jurisdiction_id=${JURISDICTION}&api_key=${city.key}`)).text());
    const lamp = s.services.service.find((x: { service_code: string }) => x.service_code === 'LAMP_OUT');
    expect(lamp).toMatchObject({ service_name: 'Lâmpada apagada', metadata: 'false', type: 'realtime' });
    expect(s.services.service.map((x: { service_code: string }) => x.service_code).sort()).toEqual(['EXTERNAL_OTHER', 'LAMP_OUT']);

    const json = (await (await get('services.json', { 'x-api-key': manual.key, 'accept-language': 'en' })).json()) as { service_code: string; service_name: string; type: string }[];
    expect(json.find((x) => x.service_code === 'LAMP_OUT')).toMatchObject({ service_name: 'Lamp out', type: 'batch' });
    expect(await (await get(`services/LAMP_OUT.json?api_key=${city.key}`)).json()).toEqual({ service_code: 'LAMP_OUT', attributes: [] });
    const missing = await get(`services/NOPE.xml?api_key=${city.key}`);
    expect(missing.status).toBe(404);
    expect(xml.parse(await missing.text()).errors.error[0]).toMatchObject({ code: '404' });
  });

  it('a FixMyStreet form post (XML) creates an order; a resend with the same fixmystreet_id is the same request; the operator’s note comes back as status_notes', async () => {
    const res = await postForm('requests.xml', fixMyStreet('42'));
    const text = await res.text();
    expect(res.status, text).toBe(201);
    const created = xml.parse(text).service_requests.request[0];
    expect(created.service_request_id).toMatch(/^\d+$/);
    expect(created.service_notice).toBe('Prazo de atendimento 24 h');
    const id = created.service_request_id as string;

    const row = await orderOf(city.tenantId, id);
    expect(row.service_order_id).not.toBeNull();
    expect(row.protocol_number).toBe('42');
    expect(row.requester_name).toBe('Maria dos Santos');
    expect(row.requester_phone).toBe('+5511987654321');
    expect(row.additional_notes).toContain('email: maria@example.com');
    expect(row.additional_notes).toContain('report_url: https://fixmystreet.example/report/42');
    // media_url went through the attachment download of the partner API.
    const photo = await t.rt.db.selectFrom('alert_attachment').select(['success', 'source_url', 'content_type']).where('alert_id', '=', row.id).executeTakeFirstOrThrow();
    expect(photo).toEqual({ success: true, source_url: `${photos.url}/photo/42.jpeg`, content_type: 'image/jpeg' });
    expect(photos.requests.some((r) => r.url === '/photo/42.jpeg')).toBe(true);

    const again = await postForm('requests.xml', fixMyStreet('42'));
    expect(again.status).toBe(200);
    expect(xml.parse(await again.text()).service_requests.request[0].service_request_id).toBe(id);

    const open = xml.parse(await (await get(`requests/${id}.xml?jurisdiction_id=${JURISDICTION}&api_key=${city.key}`)).text()).service_requests.request[0];
    expect(open).toMatchObject({ service_request_id: id, status: 'open', service_code: 'LAMP_OUT', lat: '-23.5573', long: '-46.6602', status_notes: '' });
    // media_url is Lumen's own copy on its public URL, never the URL the partner sent.
    expect(open.media_url).toMatch(new RegExp(`^${PUBLIC_URL}/open311/v2/media/[0-9a-f-]{36}/[A-Za-z0-9_-]{32}$`));
    const served = await fetch(`${t.baseUrl}${new URL(open.media_url).pathname}`);
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer())).toEqual(JPEG);
    expect(served.headers.get('content-type')).toBe('image/jpeg');
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
    expect(served.headers.get('content-security-policy')).toMatch(/^sandbox/);
    expect(served.headers.get('content-disposition')).toMatch(/^inline; filename="photo-[0-9a-f]{8}\.jpg"$/);
    const forged = `${new URL(open.media_url).pathname.slice(0, -1)}${open.media_url.endsWith('A') ? 'B' : 'A'}`;
    expect((await fetch(`${t.baseUrl}${forged}`)).status).toBe(404);
    const due = await t.rt.db.selectFrom('service_order').select('sla_due_at').where('id', '=', row.service_order_id!).executeTakeFirstOrThrow();
    expect(open.expected_datetime).toBe(due.sla_due_at.toISOString());
    expect(Math.abs(Date.parse(open.expected_datetime) - Date.parse(open.requested_datetime) - 24 * 3_600_000)).toBeLessThan(60_000);

    const before = new Date().toISOString();
    const team = await makeCityTeam(t.rt, { tenantId: city.tenantId, name: 'Equipe Centro 03' });
    await assignServiceOrder(t.rt, cliActor(), row.service_order_id!, team.id);
    await startServiceOrder(t.rt, cliActor(), row.service_order_id!, 'Equipe a caminho.');
    const [started] = (await (await get(`requests.json?service_request_id=${id}&api_key=${city.key}`)).json()) as Record<string, unknown>[];
    expect(started).toMatchObject({ status: 'open', status_notes: 'Equipe a caminho.', agency_responsible: 'Equipe Centro 03' });
    await completeServiceOrder(t.rt, cliActor(), row.service_order_id!, 'Lâmpada trocada por LED 100 W.');
    const [closed] = (await (await get(`requests.json?service_request_id=${id}&api_key=${city.key}`)).json()) as Record<string, unknown>[];
    expect(closed).toMatchObject({ service_request_id: id, status: 'closed', status_notes: 'Lâmpada trocada por LED 100 W.' });
    const changed = (await (await get(`requests.json?updated_after=${encodeURIComponent(before)}&api_key=${city.key}`)).json()) as { service_request_id: string }[];
    expect(changed.map((r) => r.service_request_id)).toEqual([id]);
    const untouched = (await (await get(`requests.json?updated_before=${encodeURIComponent(before)}&status=closed&api_key=${city.key}`)).json()) as unknown[];
    expect(untouched).toEqual([]);
    const openOnes = (await (await get(`requests.json?status=open&api_key=${city.key}`)).json()) as { service_request_id: string }[];
    expect(openOnes.map((r) => r.service_request_id)).not.toContain(id);
  });

  it('a JSON client without an id of its own, an address instead of coordinates, and attribute arrays', async () => {
    const res = await fetch(`${t.baseUrl}/open311/v2/requests.json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': city.key },
      body: JSON.stringify({ service_code: 'LAMP_OUT', address_string: 'Rua Augusta, 1500, Consolação', description: 'Apagada', attribute: { lamp_type: 'LED', nearby: ['padaria', 'farmácia'] } }),
    });
    const body = (await res.json()) as { service_request_id: string }[];
    expect(res.status).toBe(201);
    const row = await orderOf(city.tenantId, body[0]!.service_request_id);
    expect(row.additional_notes).toContain('nearby: padaria, farmácia');
    expect(row.protocol_number).toMatch(/^open311-/);
    const [shown] = (await (await get(`requests/${body[0]!.service_request_id}.json`, { 'x-api-key': city.key })).json()) as { address: string }[];
    expect(shown!.address).toBe('Rua Augusta, 1500, Consolação');

    // The attachment guards apply: a link-local address is refused, the request still registered.
    const guarded = await postForm('requests.json', [['api_key', city.key], ['service_code', 'LAMP_OUT'], ['lat', '-23.55'], ['long', '-46.66'], ['media_url', 'http://169.254.169.254/latest/meta-data.jpg']]);
    expect(guarded.status).toBe(201);
    const guardedRow = await orderOf(city.tenantId, ((await guarded.json()) as { service_request_id: string }[])[0]!.service_request_id);
    expect(await t.rt.db.selectFrom('alert_attachment').select('success').where('alert_id', '=', guardedRow.id).executeTakeFirstOrThrow()).toEqual({ success: false });

    const form = await postForm('requests.json', [['api_key', city.key], ['service_code', 'LAMP_OUT'], ['lat', '-23.55'], ['long', '-46.66'], ['attribute[nearby]', 'a'], ['attribute[nearby]', 'b']]);
    expect(form.status).toBe(201);
    const formRow = await orderOf(city.tenantId, ((await form.json()) as { service_request_id: string }[])[0]!.service_request_id);
    expect(formRow.additional_notes).toBe('nearby: a, b');
  });

  it('manual triage answers a token; tokens/{token} resolves at once to the id under which requests lists it', async () => {
    const res = await postForm('requests.json', [['api_key', manual.key], ['service_code', 'LAMP_OUT'], ['lat', '-23.55'], ['long', '-46.66'], ['description', 'Apagada']]);
    expect(res.status).toBe(201);
    const [{ token }] = (await res.json()) as [{ token: string }];
    expect(token).toMatch(/^[0-9a-f-]{36}$/);
    // Pending, and already listed under its number: the token gives that number, so the
    // client never meets its own report under an id it does not know.
    const [pending] = (await (await get(`tokens/${token}.json?api_key=${manual.key}`)).json()) as [{ service_request_id: string; token: string }];
    expect(pending).toEqual({ service_request_id: expect.stringMatching(/^\d+$/), token });
    const listed = (await (await get(`requests.json?api_key=${manual.key}`)).json()) as { service_request_id: string; description: string }[];
    expect(listed.find((r) => r.service_request_id === pending.service_request_id)).toMatchObject({ description: 'Apagada' });
    await createOrderFromAlert(t.rt, cliActor(), token, {});
    const [answer] = xml.parse(await (await get(`tokens/${token}.xml?api_key=${manual.key}`)).text()).service_requests.request;
    expect(answer.token).toBe(token);
    expect(answer.service_request_id).toBe(pending.service_request_id);

    const other = await postForm('requests.json', [['api_key', manual.key], ['service_code', 'LAMP_OUT'], ['address_string', 'Rua Augusta, 10']]);
    const [{ token: discarded }] = (await other.json()) as [{ token: string }];
    await discardAlert(t.rt, cliActor(), discarded, 'Poste particular, fora da rede municipal.', 'pt-BR');
    const [gone] = (await (await get(`tokens/${discarded}.json?api_key=${manual.key}`)).json()) as { service_request_id: string }[];
    const [shown] = (await (await get(`requests/${gone!.service_request_id}.json?api_key=${manual.key}`)).json()) as Record<string, unknown>[];
    expect(shown).toMatchObject({ status: 'closed', status_notes: 'Poste particular, fora da rede municipal.' });
  });

  it('errors are the specification’s list, in the format asked for, with the right statuses', async () => {
    const noCode = await postForm('requests.xml', [['api_key', city.key], ['lat', '-23.5'], ['long', '-46.6']]);
    expect(noCode.status).toBe(400);
    expect(noCode.headers.get('content-type')).toBe('text/xml; charset=utf-8');
    expect(xml.parse(await noCode.text()).errors.error).toEqual([{ code: '400', description: 'service_code: is required' }]);

    const badLat = await postForm('requests.json', [['api_key', city.key], ['service_code', 'LAMP_OUT'], ['lat', 'north'], ['long', '-46.6']]);
    expect(badLat.status).toBe(400);
    expect(((await badLat.json()) as { description: string }[])[0]!.description).toMatch(/^lat: /);
    const nowhere = await postForm('requests.json', [['api_key', city.key], ['service_code', 'LAMP_OUT']]);
    expect(nowhere.status).toBe(400);
    const unknownService = await postForm('requests.json', [['api_key', city.key], ['service_code', 'TREE_DOWN'], ['lat', '1'], ['long', '1']]);
    expect(((await unknownService.json()) as { description: string }[])[0]!.description).toBe('service_code: TREE_DOWN is not a service of this city');

    for (const key of ['', 'lmn_test_nonsense', reader]) {
      const refused = await postForm('requests.json', [['api_key', key], ['service_code', 'LAMP_OUT'], ['lat', '1'], ['long', '1']]);
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { code: number }[])[0]!.code).toBe(403);
    }
    expect((await get('requests.json')).status).toBe(403);
    expect((await get(`requests.html?api_key=${city.key}`)).status).toBe(404);
    expect((await get(`requests/abc.json?api_key=${city.key}`)).status).toBe(400);
    expect((await get(`requests.json?start_date=yesterday&api_key=${city.key}`)).status).toBe(400);
    const media = await fetch(`${t.baseUrl}/open311/v2/requests.json`, { method: 'POST', headers: { 'content-type': 'text/plain', 'x-api-key': city.key, 'accept-language': 'en' }, body: 'service_code=LAMP_OUT' });
    expect(media.status).toBe(415);
    // It names the forms a GeoReport client can send, not JSON alone.
    expect(((await media.json()) as { description: string }[])[0]!.description).toMatch(/application\/x-www-form-urlencoded.*multipart\/form-data.*application\/json/);
  });

  it('errors the HTTP parser or the body limits raise are GeoReport lists too, with the path as it was asked', async () => {
    // 431: a 16 KiB URL. The answer is the specification's list in the format of the path.
    for (const format of ['json', 'xml'] as const) {
      const long = await rawRequest(`GET /open311/v2/requests.${format}?api_key=${city.key}&x=${'a'.repeat(16 * 1024)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      expect(long.status).toBe(431);
      if (format === 'json') {
        expect(long.type).toBe('application/json; charset=utf-8');
        expect(JSON.parse(long.body)).toEqual([{ code: 431, description: expect.any(String) }]);
      } else {
        expect(long.type).toBe('text/xml; charset=utf-8');
        expect(xml.parse(long.body).errors.error[0]).toMatchObject({ code: '431' });
      }
    }
    // 413 (a body declared larger than the limit) and 429 (the key's quota spent): GeoReport lists too.
    const big = await rawRequest(`POST /open311/v2/requests.xml HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${city.key}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${1024 * 1024 * 1024}\r\n\r\nservice_code=LAMP_OUT`);
    expect(big.status, big.body).toBe(413);
    expect(big.type).toBe('text/xml; charset=utf-8');
    expect(xml.parse(big.body).errors.error[0]).toMatchObject({ code: '413' });
    const limited = await makePartner(t.rt, { tenantId: city.tenantId, scopes: ['canCreateServiceOrders'], transport: 'polling' });
    await updatePartner(t.rt, limited.code, { rateLimitPerMinute: 1 }, cliActor());
    expect((await get(`services.json?api_key=${limited.apiKey}`)).status).toBe(200);
    const spent = await get(`services.json?api_key=${limited.apiKey}`);
    expect(spent.status).toBe(429);
    expect(spent.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await spent.json()).toEqual([{ code: 429, description: expect.any(String) }]);

    // On the partner API the same refusal is problem+json whose instance is the path asked for.
    const partner = await rawRequest(`GET /api/external/poles?x=${'a'.repeat(16 * 1024)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    expect(partner.status).toBe(431);
    expect(JSON.parse(partner.body)).toMatchObject({ status: 431, instance: '/api/external/poles' });
  });

  it('jurisdiction_id must be the key’s city; discovery with a key names it', async () => {
    for (const [where, send] of [
      ['query', () => get(`services.json?jurisdiction_id=lumen.example.city&api_key=${city.key}`)],
      ['form', () => postForm('requests.json', fixMyStreet('j1', [['jurisdiction_id', '4106902']]).filter(([k, v]) => k !== 'jurisdiction_id' || v === '4106902'))],
    ] as const) {
      const before = await t.rt.db.selectFrom('alert').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
      const refused = await send();
      expect(refused.status, where).toBe(400);
      expect(((await refused.json()) as { description: string }[])[0]!.description).toMatch(/^jurisdiction_id: /);
      expect(await t.rt.db.selectFrom('alert').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).toEqual(before);
    }
    expect((await get(`services.json?jurisdiction_id=${city.tenantId}&api_key=${city.key}`)).status).toBe(200);
    expect(((await (await get(`discovery.json?api_key=${city.key}`)).json()) as { jurisdiction_id?: string }).jurisdiction_id).toBe(JURISDICTION);
    expect(((await (await get('discovery.json')).json()) as { jurisdiction_id?: string }).jurisdiction_id).toBeUndefined();
  });

  it('a cancelled order sends the request back to triage: open, with the cancellation note, until it is done', async () => {
    const res = await postForm('requests.json', fixMyStreet('c1'));
    const [{ service_request_id: id }] = (await res.json()) as [{ service_request_id: string }];
    const row = await orderOf(city.tenantId, id);
    await cancelServiceOrder(t.rt, cliActor(), row.service_order_id!, 'Poste duplicado no cadastro; vamos reavaliar.');
    const [cancelled] = (await (await get(`requests/${id}.json?api_key=${city.key}`)).json()) as Record<string, unknown>[];
    expect(cancelled).toMatchObject({ status: 'open', status_notes: 'Poste duplicado no cadastro; vamos reavaliar.' });
    expect(((await (await get(`requests.json?status=open&api_key=${city.key}`)).json()) as { service_request_id: string }[]).map((r) => r.service_request_id)).toContain(id);
    expect(((await (await get(`requests.json?status=closed&api_key=${city.key}`)).json()) as { service_request_id: string }[]).map((r) => r.service_request_id)).not.toContain(id);
    // Re-triage: a new order, still open until it is completed.
    const order = await createOrderFromAlert(t.rt, cliActor(), row.id, {});
    const [again] = (await (await get(`requests/${id}.json?api_key=${city.key}`)).json()) as Record<string, unknown>[];
    expect(again).toMatchObject({ status: 'open' });
    const team = await makeCityTeam(t.rt, { tenantId: city.tenantId });
    await assignServiceOrder(t.rt, cliActor(), order.id, team.id);
    await completeServiceOrder(t.rt, cliActor(), order.id, 'Lâmpada trocada.');
    const [done] = (await (await get(`requests/${id}.json?api_key=${city.key}`)).json()) as Record<string, unknown>[];
    expect(done).toMatchObject({ status: 'closed', status_notes: 'Lâmpada trocada.' });
  });

  it('media_url is only a photo Lumen stored: a javascript: or file: URL is never echoed; a multipart media file is stored like an inline photo', async () => {
    for (const bad of ['javascript:alert(document.domain)//x.jpg', 'file:///etc/passwd.jpg']) {
      const res = await postForm('requests.json', [['api_key', city.key], ['service_code', 'LAMP_OUT'], ['lat', '-23.55'], ['long', '-46.66'], ['media_url', bad]]);
      expect([201, 400]).toContain(res.status);
      if (res.status !== 201) continue;
      const [{ service_request_id: id }] = (await res.json()) as [{ service_request_id: string }];
      const [shown] = (await (await get(`requests/${id}.json?api_key=${city.key}`)).json()) as { media_url: string | null }[];
      expect(shown!.media_url).toBeNull();
    }

    const multipart = new FormData();
    multipart.append('api_key', city.key);
    multipart.append('jurisdiction_id', JURISDICTION);
    multipart.append('service_code', 'LAMP_OUT');
    multipart.append('lat', '-25.4284');
    multipart.append('long', '-49.2733');
    multipart.append('attribute[fixmystreet_id]', 'mp-1');
    multipart.append('media', new Blob([JPEG], { type: 'application/octet-stream' }), 'foto.jpeg');
    const res = await fetch(`${t.baseUrl}/open311/v2/requests.json`, { method: 'POST', body: multipart });
    expect(res.status, await res.clone().text()).toBe(201);
    const [{ service_request_id: id }] = (await res.json()) as [{ service_request_id: string }];
    const row = await orderOf(city.tenantId, id);
    expect(row.protocol_number).toBe('mp-1');
    const stored = await t.rt.db.selectFrom('alert_attachment').select(['success', 'source_kind', 'content_type']).where('alert_id', '=', row.id).execute();
    expect(stored).toEqual([{ success: true, source_kind: 'inline', content_type: 'image/jpeg' }]);
    const [shown] = (await (await get(`requests/${id}.json?api_key=${city.key}`)).json()) as { media_url: string }[];
    expect(Buffer.from(await (await fetch(`${t.baseUrl}${new URL(shown!.media_url).pathname}`)).arrayBuffer())).toEqual(JPEG);

    // Not an image: refused through the attachment path's check, naming media.
    const notImage = new FormData();
    notImage.append('api_key', city.key);
    notImage.append('service_code', 'LAMP_OUT');
    notImage.append('lat', '-25.4284');
    notImage.append('long', '-49.2733');
    notImage.append('media', new Blob(['<html><script>alert(1)</script>'], { type: 'image/jpeg' }), 'x.jpg');
    const refused = await fetch(`${t.baseUrl}/open311/v2/requests.json`, { method: 'POST', body: notImage });
    const refusedText = await refused.text();
    if (refused.status === 201) {
      // The attachment path keeps the request and records the failed photo: nothing is served.
      const [{ service_request_id: other }] = JSON.parse(refusedText) as [{ service_request_id: string }];
      const [otherShown] = (await (await get(`requests/${other}.json?api_key=${city.key}`)).json()) as { media_url: string | null }[];
      expect(otherShown!.media_url).toBeNull();
    } else {
      expect(refused.status).toBe(400);
      expect(refusedText).toContain('media');
    }
    // Another file field is refused with its name.
    const wrongField = new FormData();
    wrongField.append('api_key', city.key);
    wrongField.append('service_code', 'LAMP_OUT');
    wrongField.append('photo', new Blob([JPEG], { type: 'image/jpeg' }), 'x.jpg');
    const wrong = await fetch(`${t.baseUrl}/open311/v2/requests.json`, { method: 'POST', body: wrongField });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { description: string }[])[0]!.description).toMatch(/^photo: /);
  });

  it('status_notes does not depend on the partner’s event subscriptions', async () => {
    const quiet = await makePartner(t.rt, { tenantId: city.tenantId, scopes: ['canCreateServiceOrders'], transport: 'polling' });
    await updatePartner(t.rt, quiet.code, { eventTypes: ['Alert.Cancelled'] }, cliActor());
    const res = await postForm('requests.json', [['api_key', quiet.apiKey], ['service_code', 'LAMP_OUT'], ['lat', '-23.55'], ['long', '-46.66']]);
    const [{ service_request_id: id }] = (await res.json()) as [{ service_request_id: string }];
    const row = await orderOf(city.tenantId, id);
    const team = await makeCityTeam(t.rt, { tenantId: city.tenantId });
    await assignServiceOrder(t.rt, cliActor(), row.service_order_id!, team.id);
    await completeServiceOrder(t.rt, cliActor(), row.service_order_id!, 'Reator substituído.');
    expect(await t.rt.db.selectFrom('event').select('id').where('alert_id', '=', row.id).execute()).toEqual([]);
    const [shown] = (await (await get(`requests/${id}.json?api_key=${quiet.apiKey}`)).json()) as Record<string, unknown>[];
    expect(shown).toMatchObject({ status: 'closed', status_notes: 'Reator substituído.' });
  });

  it('the specification’s own POST example and answer shapes, XML and JSON carrying the same request', async () => {
    // The GeoReport v2 "POST Service Request" example, with this city's key and service.
    const res = await fetch(`${t.baseUrl}/open311/v2/requests.xml`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `api_key=${city.key}&jurisdiction_id=${JURISDICTION}&service_code=LAMP_OUT&lat=37.76524078&long=-122.4212043&address_string=1234+5th+street&email=smit222%40sfgov.edu&device_id=tt222111&account_id=123456&first_name=john&last_name=smith&phone=111111111&description=A+large+sinkhole+is+destroying+the+street&media_url=${encodeURIComponent(`${photos.url}/media/12345.jpg`)}`,
    });
    const text = await res.text();
    expect(res.status, text).toBe(201);
    expect(text).toMatch(/^<\?xml version="1.0" encoding="utf-8"\?>\n<service_requests>\s*<request>\s*<service_request_id>\d+<\/service_request_id>\s*<service_notice>[^<]+<\/service_notice>\s*<account_id><\/account_id>\s*<\/request>\s*<\/service_requests>\s*$/);
    const id = xml.parse(text).service_requests.request[0].service_request_id as string;
    const row = await orderOf(city.tenantId, id);
    expect(row.requester_name).toBe('john smith');
    expect(row.requester_phone).toBeNull();
    expect(row.additional_notes).toBe('email: smit222@sfgov.edu\nphone: 111111111\ndevice_id: tt222111\naccount_id: 123456');

    // GET Service Request: the specification's elements, in XML and JSON alike.
    const inXml = xml.parse(await (await get(`requests/${id}.xml?api_key=${city.key}`)).text()).service_requests.request[0] as Record<string, string>;
    const [inJson] = (await (await get(`requests/${id}.json?api_key=${city.key}`)).json()) as Record<string, unknown>[];
    const fields = ['service_request_id', 'status', 'status_notes', 'service_name', 'service_code', 'description', 'agency_responsible', 'service_notice', 'requested_datetime', 'updated_datetime', 'expected_datetime', 'address', 'address_id', 'zipcode', 'lat', 'long', 'media_url'];
    expect(Object.keys(inXml)).toEqual(fields);
    expect(Object.keys(inJson!)).toEqual(fields);
    for (const f of fields) expect(inXml[f], f).toBe(inJson![f] === null ? '' : String(inJson![f]));
    expect(inJson).toMatchObject({ address: '1234 5th street', lat: 37.76524078, long: -122.4212043, zipcode: null, description: 'A large sinkhole is destroying the street' });
  });

  it('another city’s partner sees none of these requests', async () => {
    const res = await postForm('requests.json', fixMyStreet('77'));
    const [{ service_request_id: id }] = (await res.json()) as [{ service_request_id: string }];
    expect((await get(`requests/${id}.json?api_key=${stranger}`)).status).toBe(404);
    expect(await (await get(`requests.json?service_request_id=${id}&api_key=${stranger}`)).json()).toEqual([]);
    expect((await get(`requests/${id}.json?api_key=${city.key}`)).status).toBe(200);
    const [{ token }] = (await (await postForm('requests.json', [['api_key', manual.key], ['service_code', 'LAMP_OUT'], ['lat', '1'], ['long', '1']])).json()) as [{ token: string }];
    expect((await get(`tokens/${token}.json?api_key=${city.key}`)).status).toBe(404);
  });
});
