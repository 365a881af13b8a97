/**
 * The operator's language: every page of the console, in both languages, with data in
 * the states that used to print developer words (status changes, audit entries, events
 * and their dead deliveries, a discarded alert, an order through its life, a polling
 * partner with a failed poll), fails on any of: `->`, an all-caps word with `_`, a UUID,
 * `must match`, a `/field` pointer, an untranslated catalogue key, or a known English
 * system phrase in the pt-BR console. Identifiers the operator types or quotes (reason
 * and partner codes, key prefixes) are shown in `<code>` and left out of the check.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStub, type StubServer } from '../intake/support.js';
import { launch, openPage } from './support/browser.js';
import { alertsOf, importPoles, makeCity, sendRequest, type City } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';

let lumen: Lumen;
let browser: Browser;
let receiver: StubServer;
let city: City;
let alertIds: string[] = [];
let orderId = '';

beforeAll(async () => {
  // The partner's receiver refuses everything: its deliveries die (attempts, outcomes, dead).
  receiver = await startStub((_req, res) => void res.writeHead(500).end('boom'));
  [lumen, browser] = await Promise.all([startLumenForBrowser({ LUMEN_WEBHOOK_RETRY_SCHEDULE: '50ms' }), launch()]);
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
});
afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
  await receiver?.close();
});

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const KEY = /\b(action|entity|field|status|delivery|priority|timeline|eventType|note|polling|pollError|deliveryError|alert|order|partner|map|nav|col|common|inbox|audit|role|scope|value|locationSource)\.[a-z][A-Za-z]/;
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
        [`/console/partners/${city.partnerCode}`, 'deliveries'],
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
});
