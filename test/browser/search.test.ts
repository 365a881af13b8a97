/**
 * The console's search box (top bar, every page), in Chromium, in Curitiba beside
 * Manaus: an alert found by its address as the inbox row displays it, by its
 * citizen's name typed without accents, by the phone's digits; an order by its
 * number; a pole by its code, opening the pole's page. Manaus's identical request is
 * never offered. Both languages, desktop and a 390 px phone.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { DESKTOP, launch, noSidewaysScroll, openPage, PHONE, screenshots, seriousViolations } from './support/browser.js';
import { makeCity, type City } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';

let lumen: Lumen;
let browser: Browser;
let cwb: City;
let manaus: City;
const ids: Record<string, string> = {};
let orderNumber = '';

/** A citizen's request as the partner sends it, with the address and citizen the test needs. */
async function request(city: City, r: { street: string; number: string; neighborhood: string; name: string; phone: string; description: string; latitude: number; longitude: number }): Promise<string> {
  const body = {
    protocolNumber: `156-${randomUUID().slice(0, 8)}`,
    assetType: 'POLE',
    requestedAt: new Date(Date.now() - 3_600_000).toISOString(),
    requester: { name: r.name, phone: r.phone },
    lampType: 'LED',
    address: { street: r.street, number: r.number, neighborhood: r.neighborhood, latitude: r.latitude, longitude: r.longitude },
    problem: { description: r.description },
  };
  const res = await fetch(`${lumen.baseUrl}/api/external/service-orders`, { method: 'POST', headers: { 'x-api-key': city.apiKey, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
  const found = await lumen.admin(city.token, 'GET', `/api/admin/alerts?tenantId=${city.tenantId}&text=${encodeURIComponent(body.protocolNumber)}`);
  return found.body.items[0].id as string;
}

const WESTPHALEN = {
  street: 'Rua Desembargador Westphalen',
  number: '280',
  neighborhood: 'Rebouças',
  name: 'Conceição Aparecida de Souza Brandão',
  phone: '+5541999991234',
  description: 'Lâmpada piscando a noite toda perto da Travessa São João.',
  latitude: -25.4391,
  longitude: -49.2674,
};

beforeAll(async () => {
  lumen = await startLumenForBrowser();
  browser = await launch();
  cwb = await makeCity(lumen, { name: 'Curitiba', webhookUrl: 'https://hooks.curitiba.example/lumen', code: 'CENTRAL-156-CWB' });
  manaus = await makeCity(lumen, { name: 'Manaus', webhookUrl: 'https://hooks.manaus.example/lumen', code: 'CENTRAL-156-MAO' });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lumen-search-'));
  const header = 'code,address,neighborhood,latitude,longitude,active,device_identifier';
  writeFileSync(path.join(dir, 'cwb.csv'), [header, 'CWB-PST-00731,"Avenida Sete de Setembro, 3165",Rebouças,-25.441000,-49.276000,true,'].join('\n') + '\n');
  await lumen.cli('pole', 'import', '--tenant', cwb.tenantId, path.join(dir, 'cwb.csv'));

  ids.westphalen = await request(cwb, WESTPHALEN);
  ids.seteSetembro = await request(cwb, { street: 'Avenida Sete de Setembro', number: '3165', neighborhood: 'Rebouças', name: 'Rogério Kowalski', phone: '+554133507788', description: 'Poste com a luminária caída sobre a calçada.', latitude: -25.441, longitude: -49.276 });
  // Manaus: the same request word for word (its own city only).
  ids.manaus = await request(manaus, { ...WESTPHALEN, latitude: -3.1303, longitude: -60.0233 });
  // The Sete de Setembro alert becomes an order on pole CWB-PST-00731.
  const made = await lumen.admin(cwb.token, 'POST', `/api/admin/alerts/${ids.seteSetembro}/create-order`, { poleId: 'CWB-PST-00731', teamId: cwb.teamId });
  expect(made.status).toBe(201);
  orderNumber = made.body.number as string;
  ids.order = made.body.id as string;
});
afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
});

/** The test id (or tag) of the element with the focus. */
const focused = (page: Page) => page.evaluate<string>('document.activeElement ? document.activeElement.dataset.testid || document.activeElement.tagName : ""');

async function search(page: Page, text: string): Promise<string[]> {
  const box = page.getByTestId('global-search');
  await box.fill(text);
  const results = page.getByTestId('global-search-results');
  await expect.poll(() => results.getAttribute('data-ready'), { timeout: 10_000 }).toBe('true');
  return results.locator('.search-hit').allInnerTexts();
}

describe('The console search', () => {
  it('finds an alert by its address as displayed, its citizen and phone, an order by number and a pole by code, in both languages and on a phone', { timeout: 180_000 }, async () => {
    const { page, problems } = await openPage(browser, lumen.baseUrl, { as: cwb.admin });
    await page.getByTestId('global-search').waitFor();

    // The address as the inbox row shows it: one alert, Curitiba's.
    let hits = await search(page, 'Westphalen, 280');
    expect(hits).toHaveLength(1);
    expect(hits[0]).toContain('Alerta');
    expect(hits[0]).toContain('Lâmpada piscando');
    expect(hits[0]).toContain('Rua Desembargador Westphalen, 280');
    await screenshots(page, 'search');
    await page.setViewportSize(DESKTOP);
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByTestId('global-search-results').locator('.search-hit').first().click();
    await page.waitForURL(new RegExp(`/console/alerts/${ids.westphalen}$`));
    await expect.poll(() => page.locator('main').innerText()).toContain('Conceição Aparecida de Souza Brandão');

    // The citizen's name without accents; Enter opens the first result.
    hits = await search(page, 'conceicao brandao');
    expect(hits).toHaveLength(1);
    await page.goto(`${lumen.baseUrl}/console/inbox`);
    await search(page, 'conceicao brandao');
    await page.getByTestId('global-search').press('Enter');
    await page.waitForURL(new RegExp(`/console/alerts/${ids.westphalen}$`));
    // The search is done: the alert's triage panel has the focus, so its keys work at once.
    await expect.poll(() => focused(page)).toBe('triage');

    // An operator who types the next search while the alert is still loading keeps
    // the box: the page, when it arrives, does not take the focus (nor close the results).
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const alertUrl = new RegExp(`/api/admin/alerts/${ids.westphalen}(\\?|$)`);
    await page.context().route(alertUrl, async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${lumen.baseUrl}/console/inbox`);
    await search(page, 'conceicao brandao');
    await page.getByTestId('global-search').press('Enter');
    await page.waitForURL(new RegExp(`/console/alerts/${ids.westphalen}$`));
    // The phone's digits, as typed with or without its punctuation.
    expect(await search(page, '(41) 99999-1234')).toHaveLength(1);
    release();
    await page.getByTestId('triage').waitFor();
    // The page's effects run after the frame that shows it.
    await page.evaluate('new Promise((done) => requestAnimationFrame(() => setTimeout(done)))');
    expect(await focused(page)).toBe('global-search');
    expect(await page.getByTestId('global-search-results').locator('.search-hit').count()).toBe(1);
    await page.context().unroute(alertUrl);
    expect(await search(page, '41 99999')).toHaveLength(1);
    expect((await search(page, '4199999'))[0]).toContain('Westphalen');

    // An order by its number; the alert linked to it comes along.
    hits = await search(page, orderNumber);
    expect(hits[0]).toContain('Ordem');
    expect(hits[0]).toContain(orderNumber);
    await page.getByTestId('global-search-results').locator('.search-hit').first().click();
    await page.waitForURL(new RegExp(`/console/orders/${ids.order}$`));

    // A pole by its code, typed in lower case: the pole's page.
    hits = await search(page, 'cwb-pst-00731');
    expect(hits[0]).toContain('Poste');
    expect(hits[0]).toContain('CWB-PST-00731');
    await page.getByTestId('global-search-results').locator('.search-hit').first().click();
    await page.waitForURL(/\/console\/poles\/CWB-PST-00731$/);
    await page.getByTestId('pole-details').waitFor();

    // Nothing of Manaus: its protocol and pole are not found; a word that is nowhere says so.
    hits = await search(page, 'Westphalen');
    expect(hits).toHaveLength(1);
    expect(await search(page, 'Eduardo Ribeiro')).toEqual([]);
    expect(await page.getByTestId('global-search-results').innerText()).toContain('Nada encontrado para “Eduardo Ribeiro” nesta cidade.');

    // English, and a 390 px phone: the box and its results fit.
    await page.getByTestId('language').selectOption('en');
    hits = await search(page, 'sao joao');
    expect(hits).toHaveLength(1);
    expect(hits[0]).toContain('Alert');
    expect(await page.getByTestId('global-search').getAttribute('placeholder')).toContain('Search');
    expect(await page.getByTestId('global-search-all').innerText()).toBe('See the alert found in the inbox');
    await page.setViewportSize(PHONE);
    await noSidewaysScroll(page);
    await page.getByTestId('global-search-all').click();
    await page.waitForURL(/\/console\/inbox\?q=sao%20joao/);
    await expect.poll(() => page.locator('.inbox-row').count()).toBe(1);
    await noSidewaysScroll(page);
    expect(problems).toEqual([]);
  });
});
