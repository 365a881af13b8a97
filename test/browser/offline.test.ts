/**
 * A crew in Curitiba completes an order on a 390 px phone with no connection: the
 * day's orders are read online, the network is cut (Playwright's offline mode), the
 * order's page opens from the service worker's shell and the kept answers, the crew
 * completes it with a photo and materials, sees "pendente de envio", the connection
 * returns, and the order is completed on the server exactly once, with the photo. The
 * console is installable (manifest, icons, service worker).
 */
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { DESKTOP, launch, noSidewaysScroll, openPage, PHONE, SCREENSHOTS, seriousViolations } from './support/browser.js';
import { alertsOf, lampPng, makeCity, makeOperator, sendRequest, type City, type Person } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';

let lumen: Lumen;
let browser: Browser;
let curitiba: City;
let manaus: City;
let crew: Person;
const orders: { id: string; number: string }[] = [];
let lamp: string;
let driver: string;

beforeAll(async () => {
  lumen = await startLumenForBrowser();
  browser = await launch();
  curitiba = await makeCity(lumen, { name: 'Curitiba', webhookUrl: 'https://hooks.curitiba.example/lumen', code: 'CENTRAL-156-CURITIBA' });
  manaus = await makeCity(lumen, { name: 'Manaus', webhookUrl: 'https://hooks.manaus.example/lumen', code: 'PORTAL-MANAUS-156' });
  crew = await makeOperator(lumen, { email: 'equipe.boqueirao.turno.noite@iluminacao.curitiba.pr.gov.br', name: 'Equipe Boqueirão — turno da noite', role: 'triager', tenantId: curitiba.tenantId });
  const m = (body: unknown) => lumen.admin(curitiba.token, 'POST', `/api/admin/tenants/${curitiba.tenantId}/materials`, body);
  lamp = (await m({ kind: 'lamp', name: 'Lâmpada LED 100 W (luminária pública)', wattage: 100 })).body.id;
  driver = (await m({ kind: 'driver', name: 'Driver LED 100 W', wattage: 100 })).body.id;
  await m({ kind: 'photocell', name: 'Relé fotoelétrico NA 1000 W' });
  expect((await lumen.admin(manaus.token, 'POST', `/api/admin/tenants/${manaus.tenantId}/materials`, { kind: 'lamp', name: 'Lâmpada vapor de sódio 150 W', wattage: 150 })).status).toBe(201);
  for (const street of ['Rua Marechal Floriano Peixoto', 'Avenida Sete de Setembro']) {
    await sendRequest(lumen, curitiba, { street, latitude: -25.4876, longitude: -49.2411, description: `Poste apagado na ${street}, em frente ao ponto de ônibus.` });
  }
  for (const alert of await alertsOf(lumen, curitiba)) {
    const made = await lumen.admin(curitiba.token, 'POST', `/api/admin/alerts/${alert.id}/create-order`, { teamId: curitiba.teamId });
    expect(made.status).toBe(201);
    orders.push({ id: made.body.id, number: made.body.number });
  }
});
afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
});

async function serverState(orderId: string) {
  const db = new pg.Client({ connectionString: lumen.databaseUrl });
  await db.connect();
  try {
    const q = async (sql: string) => (await db.query(sql, [orderId])).rows;
    return {
      status: (await q('SELECT status FROM service_order WHERE id = $1'))[0].status as string,
      completions: await q('SELECT completion_id, note FROM service_order_completion WHERE service_order_id = $1'),
      completedMoves: (await q(`SELECT 1 FROM service_order_status_history WHERE service_order_id = $1 AND to_status = 'COMPLETED'`)).length,
      events: (await q(`SELECT payload FROM event WHERE service_order_id = $1 AND event_type = 'ServiceOrder.Completed'`)).map((r) => r.payload),
      photos: await q('SELECT id, content_type, size_bytes FROM service_order_photo WHERE service_order_id = $1'),
      materials: await q('SELECT material_id, quantity FROM service_order_completion_material WHERE service_order_id = $1 ORDER BY quantity'),
    };
  } finally {
    await db.end();
  }
}

describe('Completing an order offline', () => {
  it('is installable: a manifest with icons, and a service worker served by the console', async () => {
    const page = await fetch(`${lumen.baseUrl}/console/orders`);
    const html = await page.text();
    expect(html).toContain('<link rel="manifest" href="/console/manifest.webmanifest">');
    expect(page.headers.get('content-security-policy')).toContain("manifest-src 'self'");
    const manifest = await fetch(`${lumen.baseUrl}/console/manifest.webmanifest`);
    expect(manifest.headers.get('content-type')).toMatch(/^application\/manifest\+json/);
    const m = (await manifest.json()) as { name: string; start_url: string; display: string; icons: { src: string; sizes: string; type: string }[] };
    expect(m).toMatchObject({ short_name: 'Lumen', start_url: '/console/orders', display: 'standalone', scope: '/console/' });
    for (const icon of m.icons) {
      const res = await fetch(`${lumen.baseUrl}${icon.src}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(icon.type);
    }
    expect(m.icons.map((i) => i.sizes)).toEqual(expect.arrayContaining(['192x192', '512x512']));
    const sw = await fetch(`${lumen.baseUrl}/console/sw.js`);
    expect(sw.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(sw.headers.get('cache-control')).toBe('no-cache');
    expect(await sw.text()).toMatch(/^self\.LUMEN_SHELL=\["\/console\/assets\//);
  });

  it('reads the day\'s orders online, completes one offline with a photo and materials, and sends it once when back online', { timeout: 240_000 }, async () => {
    const [order, other] = orders as [{ id: string; number: string }, { id: string; number: string }];
    const { page, context, problems } = await openPage(browser, lumen.baseUrl, { as: crew, viewport: PHONE });
    // The worker takes the console over, then the day's list is read (and kept) under it.
    await page.evaluate('navigator.serviceWorker.ready.then(() => true)');
    // The inbox, read online under the worker (its list is never kept: see below).
    const inboxRead = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/admin/alerts' && new URL(r.url()).searchParams.get('grouped') === 'true');
    await page.goto(`${lumen.baseUrl}/console/inbox`);
    expect((await inboxRead).status()).toBe(200);
    await page.goto(`${lumen.baseUrl}/console/orders`);
    expect(await page.evaluate('!!navigator.serviceWorker.controller')).toBe(true);
    await page.getByText(order.number).first().waitFor();
    await expect
      .poll(async () => page.evaluate(`caches.open('lumen-data-v1').then((c) => c.keys()).then((k) => k.map((r) => new URL(r.url).pathname))`), { timeout: 20_000 })
      .toEqual(expect.arrayContaining([`/api/admin/service-orders/${order.id}`, `/api/admin/service-orders/${order.id}/completion`, `/api/admin/tenants/${curitiba.tenantId}/materials`, `/api/admin/tenants/${curitiba.tenantId}/reasons`]));

    await context.setOffline(true);
    // A full load of the order's page with no network: the shell and the kept answers.
    await page.goto(`${lumen.baseUrl}/console/orders/${order.id}`);
    const form = page.getByTestId('completion-form');
    await form.waitFor();
    expect(await page.getByTestId('order-details').innerText()).toContain('Rua');
    // The order's reason in words, from the city's kept reasons.
    expect(await page.getByTestId('order-details').innerText()).toContain('Outros (sistema externo)');
    await form.getByTestId('completion-note').fill('Lâmpada e driver trocados; poste aceso às 21h.');
    await form.getByTestId('completion-material').selectOption(lamp);
    await form.getByTestId('completion-add-material').click();
    await form.getByTestId('completion-material').selectOption(driver);
    await form.getByTestId('completion-quantity').fill('2');
    await form.getByTestId('completion-add-material').click();
    expect(await form.getByTestId('completion-picked').innerText()).toMatch(/1 × Lâmpada LED 100 W[\s\S]*2 × Driver LED 100 W/);
    const photo = lampPng(160);
    await form.getByTestId('completion-photos').setInputFiles({ name: 'poste-aceso.png', mimeType: 'image/png', buffer: photo });
    await form.getByTestId('completion-photo-list').locator('img').waitFor();
    await form.getByTestId('completion-submit').click();

    const pending = page.getByTestId('completion-pending');
    await pending.waitFor();
    expect((await pending.innerText()).toLowerCase()).toContain('pendente de envio');
    await noSidewaysScroll(page);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'offline-pending-phone.png'), fullPage: true });
    // Nothing reached the server while offline.
    expect((await serverState(order.id)).status).toBe('ASSIGNED');
    // The inbox is never answered from a kept copy: offline it says it could not load,
    // rather than showing the list it had as if it were today's.
    await page.goto(`${lumen.baseUrl}/console/inbox`);
    await page.locator('.error-panel[role="alert"]').waitFor();
    expect(await page.locator('p.empty').count()).toBe(0);
    await page.goto(`${lumen.baseUrl}/console/orders/${order.id}`);
    await pending.waitFor();

    await context.setOffline(false);
    const record = page.getByTestId('completion-record');
    await record.getByTestId('completion-photos-shown').locator('img').waitFor({ timeout: 30_000 });
    await pending.waitFor({ state: 'detached' });
    expect(await record.innerText()).toContain('Lâmpada e driver trocados; poste aceso às 21h.');
    expect(await record.getByTestId('completion-materials').innerText()).toMatch(/2 × Driver LED 100 W[\s\S]*1 × Lâmpada LED 100 W/);
    await expect.poll(() => page.locator('main').innerText()).toContain('Concluída');
    // The photo shown is served by the server, as an image.
    // The element is attached before its bytes arrive: wait for it to have loaded, and loaded as an image.
    await expect
      .poll(() => record.locator('img').first().evaluate((img) => (img as unknown as { complete: boolean; naturalWidth: number }).complete && (img as unknown as { naturalWidth: number }).naturalWidth), { timeout: 10_000 })
      .toBe(160);

    // The server: completed exactly once, with the photo and the materials; the partner got the note alone.
    const state = await serverState(order.id);
    expect(state.status).toBe('COMPLETED');
    expect(state.completions).toHaveLength(1);
    expect(state.completedMoves).toBe(1);
    expect(state.events).toHaveLength(1);
    expect(JSON.stringify(state.events[0])).toContain('poste aceso às 21h');
    expect(JSON.stringify(state.events[0])).not.toMatch(/photo|material/i);
    expect(state.photos).toEqual([{ id: expect.any(String), content_type: 'image/png', size_bytes: photo.length }]);
    expect(state.materials).toEqual([
      { material_id: lamp, quantity: 1 },
      { material_id: driver, quantity: 2 },
    ]);
    // The queue is empty: a reload sends nothing more.
    await page.reload();
    await record.waitFor();
    expect(await page.evaluate(`new Promise((r) => { const q = indexedDB.open('lumen-outbox', 1); q.onsuccess = () => { const t = q.result.transaction('completions').objectStore('completions').count(); t.onsuccess = () => r(t.result); }; })`)).toBe(0);
    expect((await serverState(order.id)).completedMoves).toBe(1);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'completion-phone.png'), fullPage: true });
    await noSidewaysScroll(page);

    // The alert's page shows the order's photos too.
    const alerts = await lumen.admin(curitiba.token, 'GET', `/api/admin/alerts?tenantId=${curitiba.tenantId}&serviceOrderId=${order.id}`);
    await page.goto(`${lumen.baseUrl}/console/alerts/${alerts.body.items[0].id}`);
    await page.getByTestId('completion-record').locator('img').first().waitFor();

    // The other order, on the desktop: the form as a crew sees it before completing.
    await page.setViewportSize(DESKTOP);
    await page.goto(`${lumen.baseUrl}/console/orders/${other.id}`);
    await page.getByTestId('completion-form').waitFor();
    await page.getByTestId('completion-material').selectOption(lamp);
    await page.getByTestId('completion-add-material').click();
    await page.getByTestId('completion-photos').setInputFiles({ name: 'antes.png', mimeType: 'image/png', buffer: lampPng(120) });
    await page.getByTestId('completion-photo-list').locator('img').waitFor();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'completion-desktop.png') });
    expect(await seriousViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
  });

  it("lists and keeps the city's materials for its administrator; another city's list is not shown", async () => {
    const { page, problems } = await openPage(browser, lumen.baseUrl, { as: curitiba.admin });
    await page.goto(`${lumen.baseUrl}/console/teams`);
    const section = page.getByTestId('materials');
    await section.getByTestId('material-kind').selectOption('reactor');
    await section.getByTestId('material-name').fill('Reator vapor de sódio 250 W');
    await section.getByTestId('material-wattage').fill('250');
    await section.getByTestId('material-save').click();
    await section.getByText('Reator vapor de sódio 250 W').waitFor();
    const text = await section.innerText();
    expect(text).toContain('Relé fotoelétrico NA 1000 W');
    expect(text).toContain('250 W');
    expect(text).not.toContain('Lâmpada vapor de sódio 150 W');
    expect(text).not.toMatch(/\b(reactor|photocell|lamp)\b/);
    await noSidewaysScroll(page);
    expect(problems).toEqual([]);
  });
});
