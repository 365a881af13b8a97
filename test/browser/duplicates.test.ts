/**
 * Groups of Pending alerts in the console (issues 23 §1, 24 §2), in Curitiba: two
 * citizens report the same pole (1 m apart) and the inbox shows ONE row that expands to
 * both; three poles of one circuit go dark at once and their telemetry alerts are ONE
 * "suspeita de falha de alimentação" group, marked on the map. The duplicate pair
 * becomes one order with one click and a confirmation; the supply fault is merged from
 * the alert page, where the group sits above the triage panel. Screenshots
 * docs/console/duplicates-{desktop,phone}.png (pt-BR).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { DESKTOP, launch, noSidewaysScroll, openPage, PHONE, screenshots, seriousViolations, toast } from './support/browser.js';
import { alertsOf, makeCity, sendRequest, type City } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';

let lumen: Lumen;
let browser: Browser;
let cwb: City;
const HOUR = 3600_000;
const CIRCUIT = 'CIRC-REBOUCAS-12';
const CIRCUIT_POLES = ['CWB-020001', 'CWB-020002', 'CWB-020003'];

function file(name: string, text: string): string {
  const f = path.join(mkdtempSync(path.join(os.tmpdir(), 'lumen-dup-')), name);
  writeFileSync(f, text);
  return f;
}

beforeAll(async () => {
  lumen = await startLumenForBrowser();
  browser = await launch();
  cwb = await makeCity(lumen, { name: 'Curitiba', webhookUrl: 'https://hooks.curitiba.example/lumen', code: 'CENTRAL-156-CURITIBA' });
  // One pole on Rua Padre Anchieta; three on Avenida Iguaçu, 155 m apart (farther than the
  // supply-fault distance), fed by one circuit, each with its telegestor.
  const rows = [
    'code,address,neighborhood,latitude,longitude,active,device_identifier,circuit',
    'CWB-010203,"Rua Padre Anchieta, 1200",Bigorrilho,-25.428400,-49.273300,true,,',
    ...CIRCUIT_POLES.map((c, i) => `${c},"Avenida Iguaçu, ${1000 + i * 150}",Rebouças,${(-25.44 - i * 0.0014).toFixed(6)},-49.260000,true,TG-${c},${CIRCUIT}`),
  ];
  await lumen.cli('pole', 'import', '--tenant', cwb.tenantId, file('postes.csv', rows.join('\n') + '\n'));
  // The three devices went offline together three hours ago: telemetry raises a lamp-out alert for each.
  const reports = CIRCUIT_POLES.map((c) => JSON.stringify({ deviceIdentifier: `TG-${c}`, online: false, relayOn: null, reportedAt: new Date(Date.now() - 3 * HOUR).toISOString() }));
  await lumen.cli('telemetry', 'ingest', '--tenant', cwb.tenantId, file('reports.ndjson', reports.join('\n') + '\n'));
  // The served Lumen's minute job raises them (this file waits for it; the pole page's runs the rule at once).
  await lumen.cli('tenant', 'lamp-out', cwb.tenantId, '--after', '1');
  // Two citizens, one pole.
  await sendRequest(lumen, cwb, { street: 'Rua Padre Anchieta', latitude: -25.42841, longitude: -49.2733, description: 'Poste apagado em frente ao número 1200, rua escura.', requesterName: 'Maria Aparecida dos Santos' });
  await sendRequest(lumen, cwb, { street: 'Rua Padre Anchieta', latitude: -25.42839, longitude: -49.27331, description: 'Lâmpada queimada no poste da esquina com a Rua Bruno Filgueira.', requesterName: 'João Batista de Oliveira Ferreira' });
});
afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
});

describe('groups of Pending alerts', () => {
  it('shows duplicates and a suspected supply fault as one group each, and merges each into one order', { timeout: 240_000 }, async () => {
    await expect.poll(async () => (await alertsOf(lumen, cwb)).length, { timeout: 150_000, interval: 2000 }).toBe(5);
    const pending = await alertsOf(lumen, cwb);
    const citizen = pending.filter((a) => a.address.street === 'Rua Padre Anchieta').sort((a, b) => a.alertNumber - b.alertNumber);
    const dark = pending.filter((a) => a.address.street !== 'Rua Padre Anchieta').sort((a, b) => a.alertNumber - b.alertNumber);
    expect(citizen).toHaveLength(2);
    expect(dark).toHaveLength(3);

    const { page, problems } = await openPage(browser, lumen.baseUrl, { as: cwb.admin, viewport: DESKTOP });
    await page.goto(`${lumen.baseUrl}/console/inbox?sort=number`);
    await page.getByTestId('inbox').waitFor();
    // Five Pending alerts, two rows: each group is one row with its count.
    await expect.poll(() => page.locator('.inbox-row').count()).toBe(2);
    const lines = await page.getByTestId('dup-line').allInnerTexts();
    expect(lines.sort()).toEqual(['1 outro alerta pendente neste poste', `2 outros postes apagaram juntos · circuito ${CIRCUIT}`].sort());
    expect(await page.getByTestId('dup-group').filter({ hasText: 'Suspeita de falha de alimentação' }).count()).toBe(1);

    // Expanded: the group's alerts beneath its row.
    for (const toggle of await page.getByTestId('dup-toggle').all()) await toggle.click();
    await expect.poll(() => page.locator('[data-testid="dup-list"] li').count()).toBe(1 + 2);
    expect(await page.locator(`[data-testid="dup-list"] li[data-alert-id="${citizen[1].id}"]`).innerText()).toContain('mesmo poste');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'duplicates');
    await page.setViewportSize(PHONE);
    await noSidewaysScroll(page);
    await page.setViewportSize(DESKTOP);

    // The map marks the three dark poles of the suspected supply fault.
    await page.goto(`${lumen.baseUrl}/console/map`);
    await expect.poll(async () => (await page.getByTestId('supply-fault-legend').count()) > 0 && (await page.getByTestId('supply-fault-legend').innerText()).trim()).toBe('Suspeita de falha de alimentação (3)');
    // The legend and the markers are drawn by separate updates: wait for the markers too.
    await expect.poll(() => page.locator('.marker-supply-fault').count()).toBe(3);

    // One click and a confirmation: the pair on one pole becomes one order.
    await page.goto(`${lumen.baseUrl}/console/inbox?sort=number`);
    await expect.poll(() => page.locator('.inbox-row').count()).toBe(2);
    const pairRow = page.locator(`.inbox-row[data-alert-id="${citizen[0].id}"]`);
    await pairRow.getByTestId('dup-toggle').click();
    await pairRow.getByTestId('dup-merge').click();
    expect(await pairRow.getByTestId('dup-confirm').innerText()).toContain('Criar uma única ordem de serviço para estes 2 alertas?');
    await pairRow.getByTestId('dup-confirm-yes').click();
    await toast(page, 'ok', /^2 alertas unidos na nova ordem OS-\d{4}-\d{5}\./);
    await expect.poll(() => page.locator('.inbox-row').count()).toBe(1);
    const linked = await alertsOf(lumen, cwb, 'Linked');
    expect(linked.map((a) => a.id).sort()).toEqual(citizen.map((a) => a.id).sort());
    expect(new Set(linked.map((a) => a.serviceOrder.id)).size).toBe(1);

    // The alert page of a dark pole: the group at the top, above the triage panel.
    await page.goto(`${lumen.baseUrl}/console/alerts/${dark[2].id}`);
    const banner = page.getByTestId('dup-banner');
    await banner.waitFor();
    expect(await banner.locator('h2').innerText()).toBe('Suspeita de falha de alimentação');
    expect(await banner.getByTestId('dup-line').innerText()).toBe(`2 outros postes apagaram juntos · circuito ${CIRCUIT}`);
    const [bannerBox, triageBox] = [await banner.boundingBox(), await page.getByTestId('triage').boundingBox()];
    expect(bannerBox!.y).toBeLessThan(triageBox!.y);
    await banner.getByTestId('dup-merge').click();
    await banner.getByTestId('dup-confirm-yes').click();
    await toast(page, 'ok', /^3 alertas unidos na nova ordem OS-\d{4}-\d{5}\./);
    await expect.poll(async () => (await alertsOf(lumen, cwb)).length).toBe(0);
    const orders = new Set((await alertsOf(lumen, cwb, 'Linked')).map((a) => a.serviceOrder.id));
    expect(orders.size).toBe(2);
    await expect.poll(() => page.getByTestId('dup-banner').count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it('a city-admin changes the grouping distance in the settings (English)', async () => {
    const { page, problems } = await openPage(browser, lumen.baseUrl, { as: cwb.admin, viewport: PHONE });
    await page.goto(`${lumen.baseUrl}/console/teams`);
    await page.getByTestId('language').selectOption('en');
    const panel = page.getByTestId('alert-grouping');
    await panel.getByText('Alert grouping').waitFor();
    // The city's settings fill the form once they arrive.
    await expect.poll(() => page.getByTestId('grouping-duplicateRadiusMeters').inputValue()).toBe('30');
    await page.getByTestId('grouping-duplicateRadiusMeters').fill('45');
    await page.getByTestId('grouping-save').click();
    await toast(page, 'ok', 'Grouping saved.');
    expect((await lumen.admin(cwb.token, 'GET', `/api/admin/tenants/${cwb.tenantId}/alert-grouping`)).body.duplicateRadiusMeters).toBe(45);
    await noSidewaysScroll(page);
    expect(problems).toEqual([]);
  });
});
