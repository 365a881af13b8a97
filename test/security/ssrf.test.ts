/**
 * SSRF: no URL Lumen is given (attachment URLs, webhook URLs, polling URLs, the
 * geocoder and what the geocoder answers) can make it reach a private, loopback,
 * link-local or cloud-metadata address, also through redirects and through DNS
 * answers that change between calls. DNS is played by the test through the outbound
 * client's resolver seam; every server is on 127.0.0.1.
 *
 * Part 1 runs as production does (LUMEN_ALLOW_LOOPBACK off): loopback itself is
 * refused, by literal, by name and in every spelling of 127.0.0.1.
 * Part 2 runs with LUMEN_ALLOW_LOOPBACK on, where 127.0.0.1 stands for the public
 * internet (the only place a test may send traffic): a public host that redirects to
 * an internal address, or whose name starts resolving to one, is refused all the same.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPollState } from '../../src/db/repositories/partner-poll.repository.js';
import { reconcilePartnerPolls } from '../../src/services/partner-poll/service.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { recordReliability } from '../support/reliability.js';
import { emit, subjectFor, waitFor, WEBHOOK_SECRET } from '../events/support.js';
import { intakeBody, JPEG, postJson } from '../intake/support.js';
import { makePollingPartner, request } from '../polling/support.js';
import { playDns, rebinding, startTrap, type Trap } from './support.js';

const SECTION = 'Security: SSRF';
const METADATA = '169.254.169.254';

type AttachmentResult = { success: boolean; error: string | null; filename: string };

let trap: Trap;
const dns = playDns();
const closers: (() => Promise<unknown>)[] = [];
let refusals = 0;

beforeAll(async () => {
  trap = await startTrap();
  closers.push(() => trap.close());
});
afterAll(async () => {
  dns.restore();
  for (const close of closers.reverse()) await close().catch(() => {});
  recordReliability(SECTION, {
    item: 'internal targets tried, refused',
    figure: `${refusals} of ${refusals}`,
    detail: 'attachment URLs, redirects, webhook and polling URLs, the geocoder and its answers, rebinding DNS; a listener on the internal side counted 0 connections',
  });
});

function photo(url: string, filename: string) {
  return { type: 'photo', url, filename, contentType: 'image/jpeg' };
}

async function deliveryOf(t: TestApp, eventId: string) {
  return t.rt.db.selectFrom('webhook_delivery').selectAll().where('event_id', '=', eventId).executeTakeFirst();
}

async function webhookPartner(t: TestApp, webhookUrl: string) {
  const tenant = await makeTenant(t.rt);
  const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes: [], transport: 'webhook', webhookUrl, webhookSecret: WEBHOOK_SECRET });
  return { tenantId: tenant.id, partner };
}

describe('with LUMEN_ALLOW_LOOPBACK off (production)', () => {
  let t: TestApp;
  beforeAll(async () => {
    dns.set('localhost', ['127.0.0.1', '::1']);
    dns.set('geo.lumen.test', ['127.0.0.1']);
    dns.set('metadata.google.internal', [METADATA]);
    dns.set('internal.lumen.test', ['10.20.30.40']);
    dns.set('mixed.lumen.test', ['203.0.114.10', '10.0.0.1']);
    dns.set('v6-private.lumen.test', ['fd12:3456::1']);
    dns.set('hooks.lumen.test', ['127.0.0.1']);
    dns.set('partner.lumen.test', ['127.0.0.1']);
    t = await startTestApp({
      env: {
        LUMEN_ALLOW_LOOPBACK: 'false',
        LUMEN_GEOCODER_URL: `https://geo.lumen.test:${trap.port}`,
        LUMEN_WEBHOOK_RETRY_SCHEDULE: '50ms',
        LUMEN_ATTACHMENT_RETRY_DELAY_MS: '0',
      },
    });
    closers.push(() => t.stop());
  });

  it('refuses every spelling of loopback, private and metadata addresses in attachment URLs, without connecting', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const port = trap.port;
    const blocked = [
      `https://127.0.0.1:${port}/a.jpg`,
      `https://localhost:${port}/a.jpg`,
      `https://[::1]:${port}/a.jpg`,
      `https://[::ffff:127.0.0.1]:${port}/a.jpg`,
      `https://[::ffff:7f00:1]:${port}/a.jpg`,
      `https://2130706433:${port}/a.jpg`,
      `https://0x7f.0.0.1:${port}/a.jpg`,
      `https://0177.0.0.1:${port}/a.jpg`,
      `https://127.1:${port}/a.jpg`,
      `https://0.0.0.0:${port}/a.jpg`,
      `https://[::]:${port}/a.jpg`,
      `https://${METADATA}/latest/meta-data/iam/security-credentials/`,
      `https://[::ffff:a9fe:a9fe]/latest/meta-data/`,
      'https://[fd00:ec2::254]/latest/meta-data/',
      'https://metadata.google.internal/computeMetadata/v1/',
      'https://100.100.100.200/latest/meta-data/',
      'https://10.0.0.1/a.jpg',
      'https://172.16.0.1/a.jpg',
      'https://192.168.0.1/a.jpg',
      `https://internal.lumen.test:${port}/a.jpg`,
      `https://mixed.lumen.test:${port}/a.jpg`,
      `https://v6-private.lumen.test:${port}/a.jpg`,
    ];
    const insecure = [`http://localhost:${port}/a.jpg`, `http://${METADATA}/latest/meta-data/`];
    const urls = [...blocked, ...insecure];
    const results: AttachmentResult[] = [];
    for (let i = 0; i < urls.length; i += 10) {
      const chunk = urls.slice(i, i + 10);
      const res = await postJson(t, p.apiKey, intakeBody(`SSRF-OFF-${i}`, { attachments: chunk.map((u, j) => photo(u, `f${i + j}.jpg`)) }), { 'accept-language': 'en' });
      expect(res.status, res.text).toBe(201);
      results.push(...(res.body.alert.attachments as AttachmentResult[]));
    }
    const allowedHere = 'The attachment URL leads to an address that is not allowed (private network, loopback, link-local or cloud metadata).';
    // A name that resolves to a non-public address fails like a name that does not
    // resolve: the answer tells the partner nothing about which internal names exist.
    const notReachable = 'The attachment could not be downloaded after 3 attempt(s): connection failed.';
    const byName = (u: string) => !/^https:\/\/(\[|[0-9])/.test(u);
    expect(results.map((r) => [r.filename, r.success, r.error])).toEqual([
      ...blocked.map((u, i) => [`f${i}.jpg`, false, byName(u) ? notReachable : allowedHere]),
      ...insecure.map((_, i) => [`f${blocked.length + i}.jpg`, false, 'The attachment URL must use HTTPS.']),
    ]);
    const review = await t.rt.db.selectFrom('attachment_failure').select(['url', 'error_code', 'attempts', 'detail']).where('tenant_id', '=', tenant.id).execute();
    expect(review).toHaveLength(urls.length);
    // An address literal is refused before any attempt to connect, and not retried.
    expect(review.filter((r) => !byName(r.url)).every((r) => r.attempts <= 1)).toBe(true);
    // Operators still see why a name failed.
    expect(review.find((r) => r.url.includes('internal.lumen.test'))!.detail).toMatch(/resolves to a non-public address/);
    expect(trap.connections).toBe(0);
    refusals += urls.length;
  });

  it('refuses webhook and polling URLs that lead to loopback or metadata, recording why, without connecting', async () => {
    const byName = await webhookPartner(t, `https://hooks.lumen.test:${trap.port}/lumen`);
    // A literal non-public address is refused when the partner is registered...
    await expect(webhookPartner(t, `https://${METADATA}/latest/meta-data/`)).rejects.toMatchObject({ code: 'validation-failed' });
    // ...and one stored before that check existed is still refused at every call.
    const byLiteral = await webhookPartner(t, `https://hooks.lumen.test:${trap.port}/literal`);
    await t.rt.db.updateTable('external_system').set({ webhook_url: `https://${METADATA}/latest/meta-data/` }).where('id', '=', byLiteral.partner.id).execute();
    const events = [];
    for (const p of [byName, byLiteral]) events.push(...(await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, p)])));
    for (const ev of events) {
      const d = await waitFor(async () => {
        const row = await deliveryOf(t, ev!.eventId);
        return row?.status === 'dead' ? row : null;
      }, 10_000, 'a dead delivery');
      expect(d.last_error).toMatch(/^blocked-address: /);
      expect(d.attempts).toBe(2);
    }

    await expect(makePollingPartner(t.rt, `https://[::ffff:${METADATA}]/lumen/requests`)).rejects.toMatchObject({ code: 'validation-failed' });
    const polled = [
      await makePollingPartner(t.rt, `https://partner.lumen.test:${trap.port}/lumen/requests`),
      await makePollingPartner(t.rt, `https://partner.lumen.test:${trap.port}/literal`),
    ];
    await t.rt.db.updateTable('external_system').set({ polling_url: `https://[::ffff:${METADATA}]/lumen/requests` }).where('id', '=', polled[1]!.id).execute();
    await reconcilePartnerPolls(t.rt);
    for (const p of polled) {
      const state = await waitFor(async () => {
        const s = await findPollState(t.rt.db, p.id);
        return s?.last_error_kind ? s : null;
      }, 10_000, 'a failed poll');
      expect(state.last_error_kind).toBe('blocked-address');
      expect(state.cursor).toBeNull();
    }
    expect(dns.count('hooks.lumen.test')).toBeGreaterThanOrEqual(2);
    expect(dns.count('partner.lumen.test')).toBeGreaterThanOrEqual(1);
    expect(trap.connections).toBe(0);
    refusals += events.length * 2 + polled.length;
  });

  it('refuses a geocoder whose name resolves to loopback: the request is still accepted, not geolocated', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const before = dns.count('geo.lumen.test');
    const body = intakeBody('SSRF-GEO-OFF', { address: { street: 'Rua Sem Poste', number: '10', neighborhood: 'Centro' } });
    const res = await postJson(t, p.apiKey, body);
    expect(res.status).toBe(201);
    expect(res.body.alert).toMatchObject({ latitude: null, longitude: null });
    expect(dns.count('geo.lumen.test')).toBe(before + 1);
    expect(t.logs.text).toMatch(/geocoder: blocked-address/);
    expect(trap.connections).toBe(0);
    refusals += 1;
  });
});

describe('with LUMEN_ALLOW_LOOPBACK on (127.0.0.1 plays the public internet)', () => {
  let t: TestApp;
  /** A public-looking host: photos, redirects to internal places, and a geocoder. */
  let host: http.Server;
  let hostPort = 0;
  const hits: string[] = [];

  beforeAll(async () => {
    host = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://host');
      hits.push(url.pathname + url.search);
      const close = { connection: 'close' };
      const redirect = (location: string) => res.writeHead(302, { location, ...close }).end();
      switch (url.pathname) {
        case '/photo.jpg':
          return void res.writeHead(200, { 'content-type': 'image/jpeg', ...close }).end(JPEG);
        case '/to-metadata':
          return redirect(`http://${METADATA}/latest/meta-data/iam/security-credentials/`);
        case '/to-private':
          return redirect(`http://10.0.0.7:${trap.port}/admin`);
        case '/to-mapped':
          return redirect('http://[::ffff:a9fe:a9fe]/latest/meta-data/');
        case '/to-internal-name':
          return redirect(`http://internal.lumen.test:${trap.port}/x`);
        case '/to-zero':
          return redirect(`http://0.0.0.0:${trap.port}/x`);
        case '/to-v6-private':
          return redirect('http://[fd00::1]/x');
        case '/to-cgnat':
          return redirect('http://100.100.100.200/latest/meta-data/');
        case '/hop':
          return redirect(`http://public.lumen.test:${hostPort}/to-metadata`);
        case '/search': {
          const q = url.searchParams.get('q') ?? '';
          if (q.startsWith('Rua Redirecionada')) return redirect(`http://${METADATA}/search?q=x`);
          const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json', ...close }).end(JSON.stringify(body));
          const internal = `http://127.0.0.1:${trap.port}`;
          if (q.startsWith('Rua Com Links')) {
            return json([{ place_id: 1, lat: '-23.5614', lon: '-46.6559', licence: `${internal}/licence`, osm_url: `${internal}/osm`, icon: `${internal}/icon.png`, url: `http://${METADATA}/`, display_name: 'Rua Com Links' }]);
          }
          if (q.startsWith('Rua Coordenadas Falsas')) return json([{ place_id: 2, lat: `${internal}/lat`, lon: `http://${METADATA}/lon`, display_name: 'x' }]);
          return json([]);
        }
        default:
          return void res.writeHead(404, close).end();
      }
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    hostPort = (host.address() as AddressInfo).port;
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          host.closeAllConnections();
          host.close(() => resolve());
        }),
    );
    dns.set('public.lumen.test', ['127.0.0.1']);
    dns.set('geo-public.lumen.test', rebinding('127.0.0.1', METADATA));
    t = await startTestApp({
      env: {
        LUMEN_GEOCODER_URL: `http://geo-public.lumen.test:${hostPort}`,
        LUMEN_WEBHOOK_RETRY_SCHEDULE: '50ms',
        LUMEN_ATTACHMENT_RETRY_DELAY_MS: '0',
      },
    });
    closers.push(() => t.stop());
  });

  it('checks every redirect hop of an attachment download and refuses internal targets', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const paths = ['/to-metadata', '/to-private', '/to-mapped', '/to-internal-name', '/to-zero', '/to-v6-private', '/to-cgnat', '/hop'];
    dns.set('internal.lumen.test', ['192.168.10.20']);
    const attachments = [photo(`http://public.lumen.test:${hostPort}/photo.jpg`, 'ok.jpg'), ...paths.map((x, i) => photo(`http://public.lumen.test:${hostPort}${x}`, `r${i}.jpg`))];
    const res = await postJson(t, p.apiKey, intakeBody('SSRF-REDIRECT', { attachments }), { 'accept-language': 'en' });
    expect(res.status).toBe(201);
    const [ok, ...refused] = res.body.alert.attachments as AttachmentResult[];
    expect(ok).toMatchObject({ success: true, filename: 'ok.jpg' });
    // A hop to an address is refused as such; a hop to a name that resolves to a non-public address fails like an unreachable one.
    for (const r of refused) expect(r, r.filename).toMatchObject({ success: false, error: expect.stringMatching(/not allowed \(private network, loopback, link-local or cloud metadata\)|connection failed/) });
    expect(refused[paths.indexOf('/to-internal-name')]!.error).toMatch(/connection failed/);
    expect(trap.connections).toBe(0);
    refusals += refused.length;
  });

  it('follows a DNS answer that changes to an internal address nowhere: each connection uses the address it checked', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    dns.set('rebind.lumen.test', rebinding('127.0.0.1', METADATA));
    dns.set('mixed-public.lumen.test', ['127.0.0.1', '10.1.1.1']);
    const url = `http://rebind.lumen.test:${hostPort}/photo.jpg`;
    const before = hits.filter((h) => h === '/photo.jpg').length;

    const first = await postJson(t, p.apiKey, intakeBody('SSRF-REBIND-1', { attachments: [photo(url, 'first.jpg')] }));
    expect(first.body.alert.attachments[0]).toMatchObject({ success: true });
    const second = await postJson(t, p.apiKey, intakeBody('SSRF-REBIND-2', { attachments: [photo(url, 'second.jpg'), photo(`http://mixed-public.lumen.test:${hostPort}/photo.jpg`, 'mixed.jpg')] }));
    expect(second.status).toBe(201);
    expect(second.body.alert.attachments.map((a: AttachmentResult) => a.success)).toEqual([false, false]);
    // One resolution per attempt (the first download, then the refused name tried 3
    // times like an unreachable one), and the host saw only the first download.
    expect(dns.count('rebind.lumen.test')).toBe(4);
    expect(hits.filter((h) => h === '/photo.jpg').length).toBe(before + 1);
    refusals += 2;
  });

  it('does not follow webhook redirects, and refuses a webhook host whose name rebinds to an internal address', async () => {
    let answered = 0;
    const rx = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        answered++;
        if (req.url === '/moved') return void res.writeHead(308, { location: `http://127.0.0.1:${trap.port}/stolen`, connection: 'close' }).end();
        res.writeHead(204, { connection: 'close' }).end();
      });
    });
    await new Promise<void>((resolve) => rx.listen(0, '127.0.0.1', resolve));
    const rxPort = (rx.address() as AddressInfo).port;
    closers.push(() => new Promise<void>((resolve) => rx.close(() => resolve())));

    const moved = await webhookPartner(t, `http://127.0.0.1:${rxPort}/moved`);
    const [movedEvent] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, moved)]);
    const dead = await waitFor(async () => {
      const row = await deliveryOf(t, movedEvent!.eventId);
      return row?.status === 'dead' ? row : null;
    }, 10_000, 'a dead delivery');
    expect(dead.last_error).toMatch(/^HTTP 308 \(redirect not followed\)/);

    dns.set('hooks-rebind.lumen.test', rebinding('127.0.0.1', '10.9.8.7'));
    const rebound = await webhookPartner(t, `http://hooks-rebind.lumen.test:${rxPort}/hook`);
    const [e1] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, rebound)]);
    await waitFor(async () => (await deliveryOf(t, e1!.eventId))?.status === 'succeeded', 10_000, 'the first delivery');
    const [e2] = await emit(t.rt, ['ServiceOrder.Created', await subjectFor(t.rt, rebound)]);
    const refused = await waitFor(async () => {
      const row = await deliveryOf(t, e2!.eventId);
      return row?.status === 'dead' ? row : null;
    }, 10_000, 'a refused delivery');
    expect(refused.last_error).toMatch(/^blocked-address: hooks-rebind\.lumen\.test resolves to a non-public address 10\.9\.8\.7/);
    // The receiver saw the redirecting delivery's 2 attempts and the first rebinding one, nothing more.
    expect(answered).toBe(3);
    expect(trap.connections).toBe(0);
    refusals += 3;
  });

  it('does not follow a polling redirect, and refuses a polling host whose name rebinds', async () => {
    const partnerStub = http.createServer((req, res) => {
      if (req.url?.startsWith('/moved')) return void res.writeHead(307, { location: `http://127.0.0.1:${trap.port}/lumen/requests`, connection: 'close' }).end();
      res.writeHead(200, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify({ items: [request('SSRF-POLL-1', '2026-03-14T12:00:00.000Z')], nextSince: '2026-03-14T12:00:00.000Z', hasMore: false }));
    });
    await new Promise<void>((resolve) => partnerStub.listen(0, '127.0.0.1', resolve));
    const port = (partnerStub.address() as AddressInfo).port;
    closers.push(() => new Promise<void>((resolve) => partnerStub.close(() => resolve())));

    dns.set('poll-rebind.lumen.test', rebinding('127.0.0.1', '172.16.9.9'));
    const moved = await makePollingPartner(t.rt, `http://127.0.0.1:${port}/moved`);
    const rebound = await makePollingPartner(t.rt, `http://poll-rebind.lumen.test:${port}/lumen/requests`, { interval: 1 });
    await reconcilePartnerPolls(t.rt);
    const movedState = await waitFor(async () => {
      const s = await findPollState(t.rt.db, moved.id);
      return s?.last_error_kind ? s : null;
    }, 10_000, 'the redirect refused');
    expect(movedState.last_error_kind).toBe('redirect');
    // First poll from the public address stores the request; the next one, rebound, is refused.
    const reboundState = await waitFor(async () => {
      const s = await findPollState(t.rt.db, rebound.id);
      return s?.last_error_kind === 'blocked-address' ? s : null;
    }, 15_000, 'the rebound poll refused');
    expect(reboundState.cursor?.toISOString()).toBe('2026-03-14T12:00:00.000Z');
    expect(trap.connections).toBe(0);
    refusals += 2;
  });

  it("never calls what the geocoder's answer names, follows its redirects only to allowed addresses, and refuses it once its name rebinds", async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const at = (street: string, protocol: string) => intakeBody(protocol, { address: { street, number: '10', neighborhood: 'Centro' } });

    const links = await postJson(t, p.apiKey, at('Rua Com Links', 'SSRF-GEO-1'));
    expect(links.body.alert).toMatchObject({ latitude: -23.5614, longitude: -46.6559 });
    // The geocoder's name now answers the metadata address: refused, the request still accepted.
    const rebound = await postJson(t, p.apiKey, at('Rua Coordenadas Falsas', 'SSRF-GEO-2'));
    expect(rebound.status).toBe(201);
    expect(rebound.body.alert).toMatchObject({ latitude: null, longitude: null });
    expect(t.logs.text).toMatch(/geocoder: blocked-address: geo-public\.lumen\.test resolves to a non-public address 169\.254\.169\.254/);
    dns.set('geo-public.lumen.test', ['127.0.0.1']);

    const fake = await postJson(t, p.apiKey, at('Rua Coordenadas Falsas', 'SSRF-GEO-3'));
    expect(fake.body.alert).toMatchObject({ latitude: null, longitude: null });
    const redirected = await postJson(t, p.apiKey, at('Rua Redirecionada', 'SSRF-GEO-4'));
    expect(redirected.body.alert).toMatchObject({ latitude: null, longitude: null });
    expect(t.logs.text).toMatch(/geocoder: blocked-address: refused non-public address 169\.254\.169\.254/);
    expect(trap.connections).toBe(0);
    refusals += 3;
  });
});
