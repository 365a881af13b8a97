/**
 * The city's extent in the console, as a Manaus operator (2,700 km from São Paulo) sees
 * it: an alert without coordinates opens its map on Manaus, never on São Paulo; the
 * basemap is unreachable (a closed network) and the map says so once; the search box
 * finds a pole by its code; a point typed in São Paulo is questioned with how far it is
 * and saved only when confirmed. Both languages, 1366 and 390 px, with screenshots.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, openPage, PHONE, screenshots, seriousViolations } from './support/browser.js';
import { alertsOf, makeCity, sendRequest, type City } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';

let lumen: Lumen;
let browser: Browser;
let manaus: City;

beforeAll(async () => {
  lumen = await startLumenForBrowser();
  browser = await launch();
  manaus = await makeCity(lumen, { name: 'Manaus', webhookUrl: 'https://hooks.manaus.example/lumen', code: 'PORTAL-MANAUS-156-ATENDIMENTO' });
  const rows = ['code,address,neighborhood,latitude,longitude,active,device_identifier'];
  for (let i = 0; i < 40; i++) rows.push(`MAO-${String(i + 1).padStart(5, '0')},Avenida Eduardo Ribeiro ${600 + i * 10},Centro,${(-3.1316 + (i % 8) * 0.004).toFixed(6)},${(-60.0233 + Math.floor(i / 8) * 0.004).toFixed(6)},true,TG-MAO-${i + 1}`);
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'lumen-manaus-')), 'poles.csv');
  writeFileSync(file, rows.join('\n') + '\n');
  await lumen.cli('pole', 'import', '--tenant', manaus.tenantId, file);
  for (const street of ['Rua Barroso', 'Rua Marcílio Dias']) await sendRequest(lumen, manaus, { street, noLocation: true, description: `Poste apagado na ${street}, sem coordenadas.` });
});
afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
});

async function view(page: Page): Promise<{ lat: number; lon: number; zoom: number }> {
  const raw = (await page.getByTestId('map').first().getAttribute('data-view'))!;
  const [lat, lon, zoom] = raw.split(',').map(Number) as [number, number, number];
  return { lat, lon, zoom };
}

describe('the city’s extent in the console', () => {
  it('opens the map of an alert without coordinates on the city, says the basemap failed, finds a pole, and questions a far point', async () => {
    const [first, second] = (await alertsOf(lumen, manaus)).sort((a, b) => a.alertNumber - b.alertNumber);
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: manaus.admin });
    await page.goto(`${lumen.baseUrl}/console/alerts/${first.id}`);
    await page.getByTestId('map').first().waitFor();
    await expect.poll(async () => (await view(page)).lat).toBeGreaterThan(-3.2);
    const opened = await view(page);
    expect(opened.lat).toBeLessThan(-3.0);
    expect(opened.lon).toBeGreaterThan(-60.1);
    expect(opened.lon).toBeLessThan(-59.9);
    await expect.poll(() => page.getByTestId('tiles-failed').count()).toBe(1);
    expect(await page.getByTestId('tiles-failed').innerText()).toMatch(/^O mapa de fundo não carregou/);

    // The search box: a pole by its code, saved at once (it is a pole of the city).
    await page.getByTestId('place-query').fill('MAO-00012');
    await page.getByTestId('place-find').click();
    await page.getByTestId('places').getByText('Poste MAO-00012').waitFor();
    await page.getByTestId('set-location').click();
    await page.getByTestId('toast-ok').filter({ hasText: 'Localização gravada.' }).waitFor();

    // São Paulo typed in on the second alert: asked first, with how far.
    await page.goto(`${lumen.baseUrl}/console/alerts/${second.id}`);
    await page.getByTestId('map').first().waitFor();
    await page.locator('details.coords summary').click();
    await page.locator('input[name="lat"]').fill('-23.5573');
    await page.locator('input[name="lon"]').fill('-46.6602');
    await page.locator('details.coords button[type="submit"]').click();
    await page.getByTestId('set-location').click();
    const doubt = page.getByTestId('location-doubt');
    await doubt.waitFor();
    expect(await doubt.innerText()).toMatch(/Este ponto fica a 2\.\d{3} km da área de Manaus\. Confirme para gravar assim mesmo\./);
    expect((await lumen.admin(manaus.token, 'GET', `/api/admin/alerts/${second.id}`)).body.latitude).toBeNull();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'city-extent');
    await page.getByTestId('confirm-outside').click();
    await page.getByTestId('toast-ok').filter({ hasText: 'Localização gravada.' }).waitFor();
    expect((await lumen.admin(manaus.token, 'GET', `/api/admin/alerts/${second.id}`)).body).toMatchObject({ latitude: -23.5573, longitude: -46.6602 });
    expect(problems).toEqual([]);
    await context.close();
  });

  it('speaks English too, and fits a phone: a city with no poles yet opens on the box configured for it', async () => {
    const porto = await makeCity(lumen, { name: 'Porto Alegre', webhookUrl: 'https://hooks.portoalegre.example/lumen', code: 'PORTAL-POA' });
    await lumen.cli('tenant', 'update', porto.tenantId, '--extent', '-30.27,-51.31,-29.93,-51.01');
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: porto.admin, viewport: PHONE });
    // The city's extent arrives late: held here until the language has changed (the page
    // is made again in English). The country shown meanwhile is no view of the
    // operator's, so the map still opens on the city when the extent comes.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(
      (url) => url.pathname === `/api/admin/tenants/${porto.tenantId}`,
      async (route) => {
        await held;
        await route.continue();
      },
    );
    await page.goto(`${lumen.baseUrl}/console/map`);
    await page.getByTestId('map').first().waitFor();
    await page.getByTestId('language').selectOption('en');
    await page.getByTestId('citymap-legend').getByText('Poles in view:').waitFor();
    expect(new URL(page.url()).searchParams.get('c')).toBeNull();
    release();
    await expect.poll(() => page.getByTestId('tiles-failed').innerText()).toMatch(/^The background map did not load/);
    await expect.poll(async () => (await view(page)).lat).toBeLessThan(-29.9);
    const v = await view(page);
    expect(v.lat).toBeGreaterThan(-30.3);
    expect(v.lon).toBeGreaterThan(-51.35);
    expect(v.lon).toBeLessThan(-51.0);
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    await screenshots(page, 'city-map-extent');
    expect(problems).toEqual([]);
    await context.close();
  });
});
