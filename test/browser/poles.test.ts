/**
 * The pole page as a city's administrator uses it, in Chromium, in Porto Alegre (far
 * from São Paulo) beside Manaus: a pole opened by its code, its telegestor's state over
 * time, its orders and alerts, an order created for it from its telemetry alert; the
 * order page naming the pole by code; the inbox search finding a pole; another city's
 * pole not found; both languages, desktop and a 390 px phone.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { DESKTOP, launch, openPage, PHONE, screenshots, seriousViolations } from './support/browser.js';
import { makeCity, sendRequest, alertsOf, type City } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';

let lumen: Lumen;
let browser: Browser;
let poa: City;
let manaus: City;
let orderNumber: string;
const HOUR = 3600_000;

function file(name: string, text: string): string {
  const f = path.join(mkdtempSync(path.join(os.tmpdir(), 'lumen-poles-')), name);
  writeFileSync(f, text);
  return f;
}

beforeAll(async () => {
  lumen = await startLumenForBrowser();
  browser = await launch();
  poa = await makeCity(lumen, { name: 'Porto Alegre', webhookUrl: 'https://hooks.portoalegre.example/lumen', code: 'PORTAL-POA-156' });
  manaus = await makeCity(lumen, { name: 'Manaus', webhookUrl: 'https://hooks.manaus.example/lumen', code: 'PORTAL-MANAUS-156' });
  const header = 'code,address,neighborhood,latitude,longitude,active,device_identifier';
  await lumen.cli('pole', 'import', '--tenant', poa.tenantId, file('poa.csv', [header, 'POA-004217,"Rua dos Andradas, 1234",Centro Histórico,-30.030200,-51.230200,true,TG-POA-004217', 'POA-004218,"Rua dos Andradas, 1250",Centro Histórico,-30.030300,-51.230400,true,'].join('\n') + '\n'));
  await lumen.cli('pole', 'import', '--tenant', manaus.tenantId, file('mao.csv', [header, 'MAO-000001,"Avenida Eduardo Ribeiro, 520",Centro,-3.130300,-60.023300,true,TG-MAO-1'].join('\n') + '\n'));
  // Three nights of the pole's lamp: on at dusk, off at dawn, and now the device offline.
  const now = Date.now();
  const reports = [
    [74, true, true],
    [62, true, false],
    [50, true, true],
    [38, true, false],
    [26, true, true],
    [14, true, false],
    [3, false, null],
  ].map(([h, online, relayOn]) => JSON.stringify({ deviceIdentifier: 'TG-POA-004217', online, relayOn, reportedAt: new Date(now - (h as number) * HOUR).toISOString() }));
  // One file each: a batch applies only the newest report of a device.
  for (const r of reports) await lumen.cli('telemetry', 'ingest', '--tenant', poa.tenantId, file('reports.ndjson', `${r}\n`));
  // A citizen's request on the pole becomes an order on it.
  await sendRequest(lumen, poa, { street: 'Rua dos Andradas', latitude: -30.0302, longitude: -51.2302, description: 'Poste apagado em frente ao número 1234.' });
  const [alert] = await alertsOf(lumen, poa);
  const made = await lumen.admin(poa.token, 'POST', `/api/admin/alerts/${alert.id}/create-order`, { poleId: 'POA-004217', teamId: poa.teamId });
  expect(made.status).toBe(201);
  orderNumber = made.body.number as string;
  // The device offline for hours: telemetry raises its lamp-out alert (the rule its
  // minute job runs, run now rather than waited for; a pass of the job in between
  // leaves this one nothing to raise).
  await lumen.cli('tenant', 'lamp-out', poa.tenantId, '--after', '1');
  await lumen.lampOutRuleNow();
});
afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
});

describe('A pole page', () => {
  it('shows a pole by its code with its telegestor over time, its orders and alerts, creates an order for it, in both languages and on a phone', { timeout: 240_000 }, async () => {
    // The telemetry alert on the pole, Pending, before the page is opened.
    expect((await lumen.admin(poa.token, 'GET', `/api/admin/tenants/${poa.tenantId}/poles/POA-004217`)).body.alerts.filter((a: { status: string }) => a.status === 'Pending')).toHaveLength(1);
    const { page, problems } = await openPage(browser, lumen.baseUrl, { as: poa.admin });
    // The order page names its pole by code, and links to it.
    const order = await lumen.admin(poa.token, 'GET', `/api/admin/service-orders/${orderNumber}?tenantId=${poa.tenantId}`);
    // Its reason is named once the city's reasons arrive (held back here), never its bare code before.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const reasonsRead = (url: URL) => url.pathname === `/api/admin/tenants/${poa.tenantId}/reasons`;
    await page.context().route(reasonsRead, async (route) => {
      await held;
      await route.continue().catch(() => undefined);
    });
    await page.goto(`${lumen.baseUrl}/console/orders/${order.body.id}`);
    const orderDetails = page.getByTestId('order-details');
    await orderDetails.getByText('Carregando…').waitFor();
    expect(await orderDetails.innerText()).not.toContain(order.body.type);
    release();
    await orderDetails.getByText(`Outros (sistema externo) ${order.body.type}`).waitFor();
    await page.context().unroute(reasonsRead);
    await page.getByTestId('order-details').getByRole('link', { name: 'POA-004217' }).click();
    await page.waitForURL(/\/console\/poles\/POA-004217$/);
    await page.getByTestId('pole-details').waitFor();
    const main = page.locator('main');
    await expect.poll(() => main.innerText()).toContain('Poste POA-004217');
    const details = await page.getByTestId('pole-details').innerText();
    expect(details).toContain('Rua dos Andradas, 1234');
    expect(details).toContain('Centro Histórico');
    expect(details).toMatch(/Latitude -30,03020, longitude -51,23020/);
    const telegestor = await page.getByTestId('pole-telegestor').innerText();
    expect(telegestor).toContain('TG-POA-004217');
    expect(telegestor).toMatch(/offline desde/);
    // Seven changes of state: a chart, and the newest first in the table.
    expect(await page.locator('[data-testid="pole-telegestor"] canvas').count()).toBeGreaterThan(0);
    await expect.poll(() => page.getByTestId('pole-states').locator('tbody tr').count()).toBe(7);
    expect(await page.getByTestId('pole-states').locator('tbody tr').first().innerText()).toMatch(/offline\s+desconhecido/);
    expect(await page.getByTestId('pole-orders').innerText()).toContain(orderNumber);
    expect(await page.getByTestId('pole-orders').innerText()).toContain('Aberta');
    expect(await page.getByTestId('pole-alerts').locator('li').count()).toBe(2);
    const text = await main.innerText();
    for (const raw of ['OPEN', 'ASSIGNED', 'Pending', 'Linked', 'TELEMETRY_LAMP_OUT', 'null', 'undefined', 'NaN', 'true', 'false']) expect(text, raw).not.toContain(raw);
    expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}/);
    await screenshots(page, 'pole');
    expect(await seriousViolations(page)).toEqual([]);

    // The telemetry alert becomes an order on this pole.
    await page.getByTestId('pole-create-from-alert').click();
    await expect.poll(() => page.getByTestId('pole-orders').locator('li').count()).toBe(2);
    expect(await page.getByTestId('pole-create-order').innerText()).toContain('Abrir o mapa neste poste');

    // English: every word changes, at both widths, the page never scrolls sideways.
    await page.getByTestId('language').selectOption('en');
    await expect.poll(() => main.innerText()).toContain('Pole POA-004217');
    const en = await main.innerText();
    expect(en).toContain('Service orders on this pole');
    expect(en).toMatch(/offline since/);
    expect(en).not.toMatch(/Ordens de serviço neste poste|desconhecido|desde|Aberta/);
    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    }
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByTestId('language').selectOption('pt-BR');
    await page.setViewportSize(PHONE);
    await expect.poll(() => main.innerText()).toContain('Poste POA-004217');
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    await page.setViewportSize(DESKTOP);

    // The orders table and the alert page name the pole by code, linked to it.
    await page.goto(`${lumen.baseUrl}/console/orders?view=table`);
    await page.getByTestId('orders-table').getByRole('link', { name: orderNumber }).waitFor();
    expect(await page.getByTestId('orders-table').getByRole('link', { name: 'POA-004217' }).count()).toBe(2);
    const linked = (await alertsOf(lumen, poa, 'Linked')).find((a: { serviceOrder: { number: string } | null }) => a.serviceOrder?.number === orderNumber);
    await page.goto(`${lumen.baseUrl}/console/alerts/${linked.id}`);
    await page.getByTestId('alert-details').getByRole('link', { name: 'POA-004217' }).click();
    await page.waitForURL(/\/console\/poles\/POA-004217$/);
    await page.getByTestId('pole-details').waitFor();

    // The inbox search finds a pole by its code.
    await page.goto(`${lumen.baseUrl}/console/inbox`);
    await page.locator('form.filters').getByRole('searchbox').fill('POA-004218');
    await page.getByTestId('pole-found').click();
    await page.waitForURL(/\/console\/poles\/POA-004218$/);
    await expect.poll(() => page.getByTestId('pole-telegestor').innerText()).toContain('Este poste não tem telegestor.');

    // Manaus's pole, asked for in Porto Alegre: not found, as a code nobody has.
    await page.goto(`${lumen.baseUrl}/console/poles/MAO-000001`);
    await page.getByTestId('not-found').waitFor();
    await page.goto(`${lumen.baseUrl}/console/poles/NAO-EXISTE`);
    await page.getByTestId('not-found').waitFor();
    expect(problems).toEqual([]);
  });
});
