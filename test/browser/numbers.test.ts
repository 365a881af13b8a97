/**
 * Display numbers in URLs, for an operator granted two cities that both number from 1:
 * `/console/alerts/1` and `/console/orders/OS-2026-00001` open the selected city's alert
 * and order (they answered "ambiguous reference … give tenantId"), and the order opened
 * by its number shows its linked alerts (they answered "invalid parameter": the alert
 * list was asked for the number as an order id).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launch, openPage } from './support/browser.js';
import { alertsOf, makeCity, makeOperator, sendRequest, type City, type Person } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';

let lumen: Lumen;
let browser: Browser;
let curitiba: City;
let belem: City;
let both: Person;

beforeAll(async () => {
  lumen = await startLumenForBrowser();
  browser = await launch();
  curitiba = await makeCity(lumen, { name: 'Curitiba', webhookUrl: 'https://hooks.curitiba.example/lumen', code: 'PORTAL-CURITIBA' });
  belem = await makeCity(lumen, { name: 'Belém', webhookUrl: 'https://hooks.belem.example/lumen', code: 'PORTAL-BELEM' });
  for (const [city, street] of [[curitiba, 'Rua XV de Novembro'], [belem, 'Avenida Presidente Vargas']] as const) {
    await sendRequest(lumen, city, { street, latitude: city === curitiba ? -25.4284 : -1.4558, longitude: city === curitiba ? -49.2733 : -48.4902, description: `Lâmpada apagada na ${street}.` });
    const [alert] = await alertsOf(lumen, city);
    expect((await lumen.admin(city.token, 'POST', `/api/admin/alerts/${alert.id}/create-order`, {})).status).toBe(201);
  }
  both = await makeOperator(lumen, { email: 'coordenacao.regional@iluminacao.gov.example', name: 'Coordenação Regional de Iluminação', role: 'city-admin', tenantId: curitiba.tenantId });
  await lumen.cli('operator', 'grant', both.email, '--role', 'triager', '--tenant', belem.tenantId);
});
afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
});

describe('display numbers in the URL', () => {
  it('open the selected city’s alert and order, and the order by number lists its alerts', async () => {
    const { page, problems } = await openPage(browser, lumen.baseUrl, { as: both });
    for (const [city, street] of [[curitiba, 'Rua XV de Novembro'], [belem, 'Avenida Presidente Vargas']] as const) {
      await page.getByTestId('tenant-switcher').selectOption(city.tenantId);
      await page.goto(`${lumen.baseUrl}/console/alerts/1`);
      await page.locator('.page h1').first().waitFor();
      await expect.poll(() => page.locator('main').innerText()).toContain(street);
      expect(await page.locator('main').innerText()).not.toMatch(/amb[ií]gu/i);

      const number = (await lumen.admin(city.token, 'GET', `/api/admin/service-orders?tenantId=${city.tenantId}`)).body.items[0].number as string;
      await page.goto(`${lumen.baseUrl}/console/orders/${number}`);
      await page.locator('.page h1').first().waitFor();
      await expect.poll(() => page.locator('main').innerText()).toContain(street);
      // Its linked alert is listed (a link to /alerts/…), no "invalid parameter".
      await expect.poll(() => page.locator('main a[href*="/console/alerts/"]').count()).toBeGreaterThan(0);
      expect(await page.locator('main').innerText()).not.toMatch(/Parâmetro inválido|Invalid parameter/);
    }
    expect(problems).toEqual([]);
  });
});
