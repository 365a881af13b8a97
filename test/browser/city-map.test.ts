/**
 * The city map as a new operator of Curitiba (310 poles, 400 km from São Paulo) sees it,
 * on a closed network (no basemap): the whole city at the zoom of its extent, as
 * clusters whose counts add up to every pole, coloured as the legend says; a filter
 * changes the counts; a click on a pole opens a preview (its open order, a link to its
 * page) without leaving the map; zoom, position and filters survive a reload and Back.
 * pt-BR and English, 1366 and 390 px, with screenshots.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, noSidewaysScroll, openPage, PHONE, screenshots, seriousViolations } from './support/browser.js';
import { makeCity, type City } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';

let lumen: Lumen;
let browser: Browser;
let curitiba: City;
/** The pole with an open High-priority order, and where it is. */
const ORDER_POLE = { code: 'CWB-000101', latitude: 0, longitude: 0 };
const TOTAL = 310;
const COLOURS: Record<string, string> = { alert: 'rgb(232, 89, 12)', order: 'rgb(28, 126, 214)', off: 'rgb(201, 42, 42)', unknown: 'rgb(173, 181, 189)', ok: 'rgb(47, 158, 68)' };

beforeAll(async () => {
  lumen = await startLumenForBrowser();
  browser = await launch();
  curitiba = await makeCity(lumen, { name: 'Curitiba', webhookUrl: 'https://hooks.curitiba.example/lumen', code: 'CENTRAL-156-CURITIBA-ATENDIMENTO' });
  // 310 poles over central Curitiba, two thirds with a telegestor.
  const rows = ['code,address,neighborhood,latitude,longitude,active,device_identifier'];
  for (let i = 1; i <= TOTAL; i++) {
    const lat = -25.47 + ((i * 37) % 97) * 0.0009;
    const lon = -49.31 + ((i * 53) % 101) * 0.0008;
    if (i === 101) Object.assign(ORDER_POLE, { latitude: Number(lat.toFixed(6)), longitude: Number(lon.toFixed(6)) });
    rows.push(`CWB-${String(i).padStart(6, '0')},Rua Comendador Araújo ${100 + i},Batel,${lat.toFixed(6)},${lon.toFixed(6)},true,${i % 3 === 0 ? '' : `TG-CWB-${i}`}`);
  }
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'lumen-curitiba-')), 'poles.csv');
  writeFileSync(file, rows.join('\n') + '\n');
  await lumen.cli('pole', 'import', '--tenant', curitiba.tenantId, file);
  // Devices that reported (online, some offline), and three open orders of High priority.
  const db = new pg.Client({ connectionString: lumen.databaseUrl });
  await db.connect();
  try {
    await db.query(`UPDATE telegestor SET online = (substr(identifier, 8)::int % 7 <> 0), last_communication_at = now() WHERE tenant_id = $1 AND substr(identifier, 8)::int % 5 <> 0`, [curitiba.tenantId]);
    for (const [n, code, priority] of [[1, 'CWB-000101', 'High'], [2, 'CWB-000150', 'High'], [3, 'CWB-000200', 'High'], [4, 'CWB-000250', 'Medium']] as const) {
      await db.query(
        `INSERT INTO service_order (tenant_id, number, status, priority, reason_code, address, neighborhood, latitude, longitude, pole_id, team_id, sla_due_at)
         SELECT p.tenant_id, 'OS-2026-' || lpad($2::text, 5, '0'), 'OPEN', $3, 'EXTERNAL_OTHER', p.address, p.neighborhood, p.latitude, p.longitude, p.id, $4, now() + interval '1 day'
           FROM pole p WHERE p.tenant_id = $1 AND p.code = $5`,
        [curitiba.tenantId, n, priority, curitiba.teamId, code],
      );
    }
  } finally {
    await db.end();
  }
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

/** The poles the drawn clusters hold, added up. */
async function clusteredPoles(page: Page): Promise<number> {
  return (await page.evaluate(`[...document.querySelectorAll('.pole-cluster')].reduce((n, el) => n + Number(el.dataset.count), 0)`)) as number;
}

async function legendTotal(page: Page): Promise<string> {
  return page.getByTestId('citymap-total').innerText();
}

describe('the city map', () => {
  it('shows the whole city at its extent with counts, filters them, previews a pole, and keeps the view on reload and Back', async () => {
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: curitiba.admin });
    await page.goto(`${lumen.baseUrl}/console/map`);
    await page.getByTestId('map').waitFor();
    await page.locator('.pole-cluster').first().waitFor();
    // Opened on Curitiba, every pole in a cluster, at the extent's zoom.
    await expect.poll(() => clusteredPoles(page)).toBe(TOTAL);
    const opened = await view(page);
    expect(opened.lat).toBeGreaterThan(-25.48);
    expect(opened.lat).toBeLessThan(-25.38);
    expect(opened.lon).toBeGreaterThan(-49.32);
    expect(opened.lon).toBeLessThan(-49.22);
    expect(opened.zoom).toBeGreaterThanOrEqual(12);
    expect(await legendTotal(page)).toBe('310');
    expect(await page.getByText('Aproxime o mapa para ver os postes').count()).toBe(0);

    // The legend's colours are the markers' colours: each state's dot, and every colour a cluster is drawn in.
    for (const [state, colour] of Object.entries(COLOURS)) {
      const dot = page.locator(`[data-testid="citymap-legend"] li[data-state="${state}"] .dot`);
      expect(await dot.evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(el).backgroundColor), state).toBe(colour);
    }
    const drawn = (await page.evaluate(`[...document.querySelectorAll('.pole-cluster')].flatMap((el) => getComputedStyle(el).backgroundImage.match(/rgb\\([^)]*\\)/g) ?? [])`)) as string[];
    expect(drawn.length).toBeGreaterThan(0);
    for (const c of drawn) expect(Object.values(COLOURS)).toContain(c);
    // A cluster with the order's state is drawn with the order colour.
    expect(drawn).toContain(COLOURS.order);
    const counts = Object.fromEntries(await Promise.all(Object.keys(COLOURS).map(async (s) => [s, Number(await page.getByTestId(`citymap-count-${s}`).innerText())])));
    expect(counts.order).toBe(4);
    expect(counts.off + counts.unknown + counts.ok + counts.order + counts.alert).toBe(TOTAL);

    // A filter: High priority leaves the three poles with High orders.
    await page.getByTestId('citymap-priority').selectOption('High');
    await expect.poll(() => legendTotal(page)).toBe('3');
    await expect.poll(() => clusteredPoles(page)).toBe(3);
    expect(page.url()).toContain('priority=High');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'city-map-filtered');

    // Close to the ordered pole: the poles one by one; a click opens the preview, not another page.
    await page.goto(`${lumen.baseUrl}/console/map?z=18&c=${ORDER_POLE.latitude},${ORDER_POLE.longitude}&priority=High`);
    const dot = page.locator('path.pole-dot-order');
    await dot.first().waitFor();
    await expect.poll(() => legendTotal(page)).toBe('1');
    await dot.first().click();
    const preview = page.getByTestId('citymap-preview');
    await preview.waitFor();
    expect(await page.getByTestId('citymap-preview-code').innerText()).toBe('Poste CWB-000101');
    await preview.getByText('Rua Comendador Araújo 201').waitFor();
    await preview.getByRole('link', { name: 'OS-2026-00001' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/map');

    // Reload: the same zoom, place and filter.
    const before = await view(page);
    await page.reload();
    await page.locator('path.pole-dot-order').first().waitFor();
    const after = await view(page);
    expect(after.zoom).toBe(before.zoom);
    expect(after.lat).toBeCloseTo(before.lat, 4);
    expect(after.lon).toBeCloseTo(before.lon, 4);
    expect(await page.getByTestId('citymap-priority').inputValue()).toBe('High');

    // The pole page from the preview, then Back: the map as it was.
    await page.locator('path.pole-dot-order').first().click();
    await page.getByTestId('citymap-preview').getByRole('link', { name: 'Abrir a página do poste' }).click();
    await page.getByTestId('pole-details').waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/poles/CWB-000101');
    await page.goBack();
    await page.locator('path.pole-dot-order').first().waitFor();
    const back = await view(page);
    expect(back.zoom).toBe(before.zoom);
    expect(back.lat).toBeCloseTo(before.lat, 4);
    expect(await page.getByTestId('citymap-priority').inputValue()).toBe('High');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('opens another city on its own extent when the operator switches city on the map', async () => {
    const porto = await makeCity(lumen, { name: 'Porto Alegre', webhookUrl: 'https://hooks.portoalegre.example/lumen', code: 'PORTAL-POA-MAPA' });
    await lumen.cli('tenant', 'update', porto.tenantId, '--extent', '-30.27,-51.31,-29.93,-51.01');
    await lumen.cli('operator', 'grant', curitiba.admin.email, '--role', 'viewer', '--tenant', porto.tenantId);
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: curitiba.admin });
    await page.goto(`${lumen.baseUrl}/console/map?z=16&c=${ORDER_POLE.latitude},${ORDER_POLE.longitude}&team=${curitiba.teamId}`);
    await page.locator('.pole-cluster, path.pole-dot').first().waitFor();
    await page.getByTestId('tenant-switcher').selectOption(porto.tenantId);
    await expect.poll(async () => (await view(page)).lat).toBeLessThan(-29.9);
    const v = await view(page);
    expect(v.lon).toBeGreaterThan(-51.35);
    expect(v.lon).toBeLessThan(-51.0);
    await expect.poll(() => legendTotal(page)).toBe('0');
    expect(page.url()).not.toContain('team=');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('fits a phone in both languages, with the whole city in view; screenshots', async () => {
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: curitiba.admin, viewport: PHONE });
    await page.goto(`${lumen.baseUrl}/console/map`);
    await page.locator('.pole-cluster').first().waitFor();
    await expect.poll(() => clusteredPoles(page)).toBe(TOTAL);
    await noSidewaysScroll(page);
    // A cluster's preview: its counts by state.
    await page.locator('.pole-cluster').first().click();
    await page.getByTestId('citymap-preview').getByText(/^Postes nesta área: \d+$/).waitFor();
    await noSidewaysScroll(page);
    await screenshots(page, 'city-map');
    await page.getByTestId('language').selectOption('en');
    await page.getByText('Poles in view:').waitFor();
    await page.getByTestId('citymap-legend').getByText('Open order').waitFor();
    await expect.poll(() => legendTotal(page)).toBe('310');
    await noSidewaysScroll(page);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'city-map-en');
    // "Zoom in on this area" on a cluster: the map closer, its poles spread out.
    const before = await view(page);
    await page.locator('.pole-cluster').first().click();
    await page.getByTestId('citymap-zoom-cell').click();
    await expect.poll(async () => (await view(page)).zoom).toBeGreaterThan(before.zoom);
    await page.getByTestId('citymap-preview').waitFor({ state: 'detached' });
    await page.locator('.pole-cluster, path.pole-dot').first().waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });
});
