/**
 * The Reports page as a council's viewer uses it, in Chromium: the figures of a city far
 * from São Paulo drawn from the dashboard API, every figure a link to the list behind it,
 * the CSV downloads, both languages, desktop and a 390 px phone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launch, openPage, PHONE, screenshots, seriousViolations } from './support/browser.js';
import { alertsOf, makeCity, makeOperator, sendRequest, type City, type Person } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';

let lumen: Lumen;
let browser: Browser;
let city: City;
let viewer: Person;

beforeAll(async () => {
  lumen = await startLumenForBrowser();
  browser = await launch();
  city = await makeCity(lumen, { name: 'Curitiba', webhookUrl: 'https://hooks.curitiba.example/lumen', code: 'PORTAL-CURITIBA-CENTRAL-156' });
  viewer = await makeOperator(lumen, { email: 'conselho.municipal.iluminacao.publica@curitiba.pr.gov.example', name: 'Conselho Municipal de Iluminação Pública', role: 'viewer', tenantId: city.tenantId });
  for (let i = 0; i < 6; i++) await sendRequest(lumen, city, { street: 'Rua Comendador Araújo', latitude: -25.4325 + i * 0.0002, longitude: -49.2791, description: `Poste ${i + 1} apagado na Rua Comendador Araújo.` });
  const pending = await alertsOf(lumen, city);
  // Four become orders; two of them are repaired by the city's team; one is discarded.
  const orders: string[] = [];
  for (const alert of pending.slice(0, 4)) {
    const made = await lumen.admin(city.token, 'POST', `/api/admin/alerts/${alert.id}/create-order`, {});
    orders.push(made.body.id as string);
  }
  for (const id of orders.slice(0, 2)) {
    await lumen.admin(city.token, 'POST', `/api/admin/service-orders/${id}/assign`, { teamId: city.teamId });
    await lumen.admin(city.token, 'POST', `/api/admin/service-orders/${id}/complete`, { note: 'Lâmpada trocada por LED 100 W.' });
  }
  expect((await lumen.admin(city.token, 'POST', `/api/admin/alerts/${pending[4].id}/discard`, { reason: 'Poste particular, fora da rede municipal.' })).status).toBe(200);
});
afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
});

describe('Reports', () => {
  it('shows the city’s figures in words with a chart, links each figure to its list, downloads the CSVs, in both languages and on a phone', async () => {
    const { page, problems } = await openPage(browser, lumen.baseUrl, { as: viewer });
    await page.getByRole('link', { name: 'Relatórios' }).click();
    await page.getByTestId('report-backlog').waitFor();
    // The period reads as the operator's calendar: "to" is today in the city (both days included).
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo' }).format(new Date());
    expect(await page.getByLabel('Até', { exact: true }).inputValue()).toBe(today);
    // The backlog: two open orders under a day old, one Pending alert; a chart drawn.
    await expect.poll(() => page.getByTestId('report-backlog-table').locator('tbody tr').first().innerText()).toMatch(/Menos de 1 dia\s+2\s+0\s+0\s+1/);
    expect(await page.locator('[data-testid="report-backlog"] canvas').count()).toBeGreaterThan(0);
    // Triage: five decisions; repair and deadlines: two orders of the city's team.
    await expect.poll(() => page.getByTestId('report-triage').innerText()).toMatch(/\(5 no período\)/);
    await expect.poll(() => page.getByTestId('report-sla').innerText()).toMatch(/100% no prazo \(2 de 2 ordens concluídas\)/);
    expect(await page.getByTestId('report-repair-team').innerText()).toContain('Equipe Curitiba 01');
    const text = await page.locator('main').innerText();
    for (const raw of ['COMPLETED', 'IN_PROGRESS', 'd0_1', 'p50Seconds', 'undefined', 'NaN']) expect(text).not.toContain(raw);
    expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}/);
    // At 1366 px every column of every table fits its panel: none is cut or scrolled sideways.
    const tablesFit = "[...document.querySelectorAll('.report-grid .table-wrap')].every((w) => w.scrollWidth <= w.clientWidth)";
    expect(await page.evaluate(tablesFit)).toBe(true);
    await screenshots(page, 'reports');

    // The CSV of the orders: a download with a BOM and a header in Portuguese.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-orders').click()]);
    expect(download.suggestedFilename()).toMatch(/^ordens-\d{4}-\d{2}-\d{2}\.csv$/);
    const bytes = await new Promise<Buffer>((resolve, reject) => {
      void download.createReadStream().then((s) => {
        const chunks: Buffer[] = [];
        s.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks))).on('error', reject);
      }, reject);
    });
    expect(bytes.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    const lines = bytes.subarray(3).toString('utf8').trim().split('\n');
    expect(lines[0]).toBe('Número,Estado,Prioridade,Motivo,Equipe,Poste,Endereço,Bairro,Aberta em,Prazo,Encerrada em,Atrasada,Alertas,Parceiros');
    expect(lines.length).toBe(5);

    // A figure leads to the list behind it: the team's completed orders.
    await page.getByTestId('report-repair-team').getByRole('link', { name: 'Equipe Curitiba 01' }).click();
    await page.waitForURL(/\/console\/orders\?/);
    expect(new URL(page.url()).searchParams.get('status')).toBe('COMPLETED');
    await expect.poll(() => page.locator('main table tbody tr').count()).toBe(2);

    // English, and a phone: no page scrolled sideways, no violation.
    await page.goBack();
    await page.getByTestId('language').selectOption('en');
    await expect.poll(() => page.getByTestId('report-sla').innerText()).toMatch(/100% on time \(2 of 2 completed orders\)/);
    expect(await page.locator('main').innerText()).not.toMatch(/Relatórios|Acúmulo|no prazo/);
    expect(await page.evaluate(tablesFit)).toBe(true);
    await screenshots(page, 'reports-en');
    await page.setViewportSize(PHONE);
    expect(await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
  });
});
