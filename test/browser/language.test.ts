/**
 * The operator's language: every page of the console, in both languages, with data in
 * the states that used to print developer words (status changes, audit entries, events
 * and their dead deliveries, a discarded alert, an order through its life, a polling
 * partner with a failed poll and the items its endpoint returned that intake refused, a
 * polling partner Lumen does not poll (no URL), a photo URL that failed), fails on any of: `->`, an all-caps word with `_`, a UUID,
 * `must match`, a `/field` pointer, an untranslated catalogue key, or a known English
 * system phrase in the pt-BR console. Identifiers the operator types or quotes (reason
 * and partner codes, key prefixes) are shown in `<code>` and left out of the check.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretFile } from '../support/app.js';
import { startStub, type StubServer } from '../intake/support.js';
import { request, startPartnerStub, type PartnerStub } from '../polling/support.js';
import { launch, openPage } from './support/browser.js';
import { alertsOf, importPoles, makeCity, sendRequest, type City } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';

let lumen: Lumen;
let browser: Browser;
let receiver: StubServer;
let city: City;
let alertIds: string[] = [];
let orderId = '';
let partnerEndpoint: PartnerStub;
const POLLED = 'CONSULTA-156-FLORIPA';
const NOT_POLLED = 'CONSULTA-156-FLORIPA-SEM-URL';

async function until(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  // The partner's receiver refuses everything: its deliveries die (attempts, outcomes, dead).
  receiver = await startStub((req, res) => void (req.url?.startsWith('/fotos/') ? res.writeHead(503).end('busy') : res.writeHead(500).end('boom')));
  // A partner endpoint Lumen polls: one request without street or description, one about a tree.
  partnerEndpoint = await startPartnerStub(() => ({
    json: {
      items: [
        request('FLN-156-001', '2026-11-26T10:00:01.000Z', { address: { street: '', latitude: -27.5954, longitude: -48.548 }, problem: { description: '' } }),
        request('FLN-156-002', '2026-11-26T10:00:02.000Z', { assetType: 'TREE', reasonCode: 'not a code!' }),
      ],
      nextSince: '2026-11-26T10:00:02.000Z',
    },
  }));
  [lumen, browser] = await Promise.all([
    startLumenForBrowser({ LUMEN_WEBHOOK_RETRY_SCHEDULE: '50ms', LUMEN_ATTACHMENT_RETRY_DELAY_MS: '0', LUMEN_ATTACHMENT_TOTAL_TIMEOUT_MS: '3000', LUMEN_ATTACHMENT_ATTEMPT_TIMEOUT_MS: '1000' }),
    launch(),
  ]);
  city = await makeCity(lumen, { name: 'Florianópolis', webhookUrl: `${receiver.url}/hook`, code: 'PORTAL-FLORIPA-156' });
  await importPoles(lumen, city);
  for (const d of ['Lâmpada apagada em frente ao número 1500.', 'Poste piscando a noite toda.', 'Luminária quebrada pelo vento.']) await sendRequest(lumen, city, { description: d });
  const alerts = (await alertsOf(lumen, city)).sort((a, b) => a.alertNumber - b.alertNumber);
  alertIds = alerts.map((a) => a.id);
  const admin = (m: string, p: string, b?: unknown) => lumen.admin(city.token, m, p, b);
  const order = await admin('POST', `/api/admin/alerts/${alertIds[0]}/create-order`, { teamId: city.teamId });
  expect(order.status).toBe(201);
  orderId = order.body.id;
  expect((await admin('POST', `/api/admin/service-orders/${orderId}/start`, {})).status).toBe(200);
  expect((await admin('POST', `/api/admin/service-orders/${orderId}/complete`, { note: 'Reator trocado.' })).status).toBe(200);
  expect((await admin('POST', `/api/admin/alerts/${alertIds[1]}/discard`, { reason: 'Poste particular, fora da rede municipal.' })).status).toBe(200);
  expect((await admin('POST', `/api/admin/alerts/${alertIds[2]}/link`, { serviceOrderId: order.body.number })).status).toBe(409);

  // A photo by URL its host refuses: a failed photo with an error code.
  const photo = await fetch(`${lumen.baseUrl}/api/external/service-orders`, {
    method: 'POST',
    headers: { 'x-api-key': city.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      ...request('156-FOTO-FLN-1', new Date(Date.now() - 3_600_000).toISOString(), { address: { street: 'Rua Felipe Schmidt', number: '515', latitude: -27.5969, longitude: -48.5495 } }),
      attachments: [{ type: 'photo', url: `${receiver.url}/fotos/poste.png`, filename: 'poste.png', contentType: 'image/png' }],
    }),
  });
  expect(photo.status).toBeLessThan(300);
  // A partner Lumen polls, whose items intake refused, and one it cannot poll (no URL).
  await lumen.cli('partner', 'create', '--tenant', city.tenantId, '--code', POLLED, '--scopes', 'canCreateAlerts', '--transport', 'polling', '--polling-url', partnerEndpoint.url, '--polling-key-file', secretFile('chave-de-consulta-0123456789'));
  await lumen.cli('partner', 'create', '--tenant', city.tenantId, '--code', NOT_POLLED, '--scopes', 'canCreateAlerts', '--transport', 'polling');
  expect((await admin('POST', `/api/admin/partners/${POLLED}/polling/poll-now`)).status).toBe(202);
  await until('the refused items', async () => (await admin('GET', `/api/admin/partners/${POLLED}/rejected-inbound-items?status=open`)).body.total === 2);
  await until('the failed photo URL', async () => ((await admin('GET', `/api/admin/tenants/${city.tenantId}/attachment-failures`)).body.items as unknown[]).length === 1);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
  await receiver?.close();
  await partnerEndpoint?.close();
});

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const KEY = /\b(action|entity|field|status|delivery|priority|timeline|eventType|note|polling|pollError|deliveryError|alert|order|partner|map|nav|col|common|inbox|audit|role|scope|value|locationSource|undo|partnerPolling|rejected|photoError|failures)\.[a-z][A-Za-z]/;
const ENGLISH_IN_PT = /\b(created in triage|new order|linked to order|delivery (succeeded|dead|failed)|not a 2xx|Pending|Linked|IN_PROGRESS|COMPLETED|payload|geocoder|webhook deliveries)\b/;

/** What the operator reads on the page, without the codes shown as codes. */
async function visibleWords(page: Page): Promise<string> {
  return page.evaluate(`(() => {
    const main = document.querySelector('main') ?? document.body;
    const copy = main.cloneNode(true);
    for (const c of copy.querySelectorAll('code, input, textarea, select option[value=""]')) c.remove();
    return copy.innerText ?? copy.textContent ?? '';
  })()`);
}

function problemsIn(text: string, lang: 'pt-BR' | 'en'): string[] {
  const withoutEmails = text.replace(/[\w.+-]+@[\w-]+(\.[\w-]+)+/g, '');
  const found: string[] = [];
  const look = (what: string, re: RegExp) => {
    const m = re.exec(withoutEmails);
    if (m) found.push(`${what}: “${withoutEmails.slice(Math.max(0, m.index - 30), m.index + 40).replace(/\s+/g, ' ')}”`);
  };
  look('arrow', /->/);
  look('all-caps word with _', /\b[A-Z]+_[A-Z_]+\b/);
  look('UUID', UUID);
  look('regex message', /must match/);
  look('JSON pointer', /(^|\s)\/[a-z][A-Za-z]+/);
  look('problem code', /\b(validation-failed|download-failed|blocked-address|invalid-url|insecure-url|storage-failed)\b/);
  look('validator sentence', /\b(is required|must be|must NOT|is not a property)\b/);
  look('not polled because', /\bthe partner (is in webhook mode|is disabled|has no polling URL)\b/);
  look('catalogue key', KEY);
  if (lang === 'pt-BR') look('English system words', ENGLISH_IN_PT);
  return found;
}

describe('the operator’s language', () => {
  for (const lang of ['pt-BR', 'en'] as const) {
    it(`every page speaks ${lang === 'pt-BR' ? 'Portuguese' : 'English'}, with no developer words`, async () => {
      const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: city.admin });
      if (lang === 'en') {
        await page.getByTestId('language').selectOption('en');
      }
      const found: string[] = [];
      const pages: [string, string][] = [
        ['/console/inbox', 'inbox'],
        [`/console/alerts/${alertIds[0]}`, 'timeline'],
        [`/console/alerts/${alertIds[1]}`, 'timeline'],
        [`/console/orders/${orderId}`, 'timeline'],
        ['/console/orders', 'orders-board'],
        ['/console/partners', 'partners'],
        [`/console/partners/${city.partnerCode}`, 'attachment-failures'],
        [`/console/partners/${POLLED}`, 'rejected-why'],
        [`/console/partners/${NOT_POLLED}`, 'polling-active'],
        ['/console/audit', 'audit'],
        ['/console/teams', 'teams'],
        ['/console/operators', ''],
        ['/console/reports', 'report-backlog'],
        ['/console/poles/AUG-1500', ''],
        ['/console/map', 'map'],
      ];
      for (const [p, testid] of pages) {
        await page.goto(`${lumen.baseUrl}${p}`);
        await (testid ? page.getByTestId(testid).first() : page.locator('main h1').first()).waitFor();
        // The slowest part of each page (timelines, delivery logs) has arrived.
        await page.waitForLoadState('networkidle');
        for (const f of problemsIn(await visibleWords(page), lang)) found.push(`${p}: ${f}`);
      }
      expect(found).toEqual([]);
      expect(problems).toEqual([]);
      await context.close();
    });
  }

  it('a language switch leaves the page as the operator had it, and the server’s words follow it', async () => {
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: city.admin });
    await page.goto(`${lumen.baseUrl}/console/alerts/${alertIds[2]}`);
    const main = page.locator('main');
    await until('the reason in Portuguese', async () => (await main.innerText()).includes('Outros (sistema externo)'));
    // A discard note half written: it lives only in the page.
    const note = page.getByTestId('discard-note');
    await note.fill('Poste de outra concessionária: conferir amanhã com a equipe.');
    await page.getByTestId('language').selectOption('en');
    // The reason's name comes from the server in the operator's language: read again in English.
    await until('the reason in English', async () => (await main.innerText()).includes('Other (external system)'));
    expect(await main.innerText()).not.toContain('Outros (sistema externo)');
    expect(await note.inputValue()).toBe('Poste de outra concessionária: conferir amanhã com a equipe.');
    expect(page.url()).toBe(`${lumen.baseUrl}/console/alerts/${alertIds[2]}`);
    expect(problems).toEqual([]);
    await context.close();
  });
});
