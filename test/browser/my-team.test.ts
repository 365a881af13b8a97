/**
 * A crew member on a 390 px phone in Curitiba (beside Manaus): "Minha equipe hoje" from the
 * navigation, the team's open orders most urgent first with the distance from the phone,
 * the planned visits (one overdue, flagged in words); an order opened from there with
 * Start / Complete at the top within the viewport, tel: and geo: links; the visit planned
 * from the order page. Screenshots: docs/console/my-team-phone.png, my-team-order-phone.png,
 * my-team-desktop.png.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { DESKTOP, launch, openPage, PHONE, SCREENSHOTS } from './support/browser.js';
import { alertsOf, makeCity, makeOperator, sendRequest, type City, type Person } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';

let lumen: Lumen;
let browser: Browser;
let curitiba: City;
let manaus: City;
let crew: Person;
const HOUR = 3600_000;
const orders: Record<string, { id: string; number: string }> = {};

beforeAll(async () => {
  lumen = await startLumenForBrowser();
  browser = await launch();
  curitiba = await makeCity(lumen, { name: 'Curitiba', webhookUrl: 'https://hooks.curitiba.example/lumen', code: 'PORTAL-CURITIBA-156' });
  manaus = await makeCity(lumen, { name: 'Manaus', webhookUrl: 'https://hooks.manaus.example/lumen', code: 'PORTAL-MANAUS-156' });
  crew = await makeOperator(lumen, { email: 'joana.aparecida.ferreira.eletricista.turno.noite@prefeitura-curitiba.example', name: 'Joana Aparecida Ferreira (eletricista, turno da noite)', role: 'triager', tenantId: curitiba.tenantId });
  const added = await lumen.admin(curitiba.token, 'PUT', `/api/admin/teams/${curitiba.teamId}/members/${encodeURIComponent(crew.email)}`);
  expect(added.status).toBe(200);
  const spots = [
    { key: 'near', street: 'Rua XV de Novembro', latitude: -25.4295, longitude: -49.2713, description: 'Três postes apagados na quadra da Boca Maldita.', reasonCode: undefined },
    { key: 'far', street: 'Avenida Comendador Franco', latitude: -25.4655, longitude: -49.2155, description: 'Lâmpada piscando a noite toda perto do Jardim Botânico.', reasonCode: undefined },
  ];
  for (const s of spots) {
    await sendRequest(lumen, curitiba, { street: s.street, latitude: s.latitude, longitude: s.longitude, description: s.description });
    const alert = (await alertsOf(lumen, curitiba)).find((a) => a.description === s.description);
    const made = await lumen.admin(curitiba.token, 'POST', `/api/admin/alerts/${alert.id}/create-order`, { teamId: curitiba.teamId });
    expect(made.status).toBe(201);
    orders[s.key] = { id: made.body.id, number: made.body.number };
  }
  // Manaus's order on Manaus's team: never on a Curitiba crew's day.
  await sendRequest(lumen, manaus, { street: 'Avenida Eduardo Ribeiro', latitude: -3.1303, longitude: -60.0233, description: 'Poste de Manaus apagado.' });
  const [mao] = await alertsOf(lumen, manaus);
  expect((await lumen.admin(manaus.token, 'POST', `/api/admin/alerts/${mao.id}/create-order`, { teamId: manaus.teamId })).status).toBe(201);
  // The far order was planned for this morning and the window has passed; the near one for later today.
  const now = Date.now();
  expect((await lumen.admin(curitiba.token, 'PUT', `/api/admin/service-orders/${orders.far!.id}/planned-visit`, { startsAt: new Date(now - 5 * HOUR).toISOString(), endsAt: new Date(now - 2 * HOUR).toISOString() })).status).toBe(200);
  // A window within one day of the city (UTC−3, no daylight saving): later today, or
  // tomorrow morning when today has less than three hours left (a window across midnight
  // is written with its dates).
  const local = new Date(now - 3 * HOUR);
  const near =
    local.getUTCHours() < 21
      ? { startsAt: new Date(now + 1 * HOUR), endsAt: new Date(now + 2 * HOUR) }
      : { startsAt: new Date(Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate() + 1, 9 + 3)), endsAt: new Date(Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate() + 1, 11 + 3)) };
  expect((await lumen.admin(curitiba.token, 'PUT', `/api/admin/service-orders/${orders.near!.id}/planned-visit`, { startsAt: near.startsAt.toISOString(), endsAt: near.endsAt.toISOString() })).status).toBe(200);
});
afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
});

describe('My team today, on a phone', () => {
  it("lists the team's orders with distances and visits, opens one with its actions at the top, tel: and geo: links", { timeout: 180_000 }, async () => {
    const w = await openPage(browser, lumen.baseUrl, { as: crew, viewport: PHONE });
    const { page, context } = w;
    await context.grantPermissions(['geolocation'], { origin: lumen.baseUrl });
    // Standing in Praça Tiradentes, a few hundred metres from the near order.
    await context.setGeolocation({ latitude: -25.4278, longitude: -49.2712 });

    await page.getByRole('link', { name: 'Minha equipe hoje' }).click();
    await page.getByTestId('my-team').waitFor();
    const rows = page.getByTestId('my-team-order');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await page.getByTestId('my-team-teams').innerText()).toContain('Equipe Curitiba 01');
    expect(await page.locator('main').innerText()).not.toContain('Manaus');
    // Both orders have the same deadline and priority; the overdue visit is said in words.
    const far = rows.filter({ hasText: orders.far!.number });
    expect(await far.getByTestId('my-team-visit-overdue').innerText()).toBe('Visita atrasada: a janela terminou e a ordem não foi concluída.');
    const near = rows.filter({ hasText: orders.near!.number });
    expect(await near.getByTestId('my-team-visit').innerText()).toMatch(/das \d\d:\d\d às \d\d:\d\d/);
    expect(await near.getByTestId('my-team-visit-overdue').count()).toBe(0);

    await page.getByTestId('locate').click();
    await expect.poll(() => near.getByTestId('distance').count()).toBe(1);
    expect(await near.getByTestId('distance').innerText()).toMatch(/^\d+ m daqui$/);
    expect(await far.getByTestId('distance').innerText()).toMatch(/^\d+,\d km daqui$/);
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'my-team-phone.png'), fullPage: true });

    // The order: Start and Complete within the first screen, the way there, the requester's phone.
    await near.getByRole('link').first().click();
    await page.getByTestId('order-quick-actions').waitFor();
    for (const id of ['start', 'complete']) {
      const box = await page.getByTestId(id).boundingBox();
      expect(box, id).not.toBeNull();
      expect(box!.y + box!.height, `${id} within the first screen`).toBeLessThanOrEqual(PHONE.height);
      expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);
    }
    expect(await page.getByTestId('navigate-geo').getAttribute('href')).toBe('geo:-25.4295,-49.2713');
    expect(await page.getByTestId('navigate-web').getAttribute('href')).toBe('https://www.openstreetmap.org/directions?to=-25.4295,-49.2713');
    await page.getByTestId('tel').first().waitFor();
    expect(await page.getByTestId('tel').first().getAttribute('href')).toBe('tel:+5511987654321');
    expect(await page.getByTestId('order-visit').innerText()).toMatch(/das \d\d:\d\d às \d\d:\d\d/);
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'my-team-order-phone.png'), fullPage: false });

    // Start from the top of the page.
    await page.getByTestId('start').click();
    await page.getByTestId('toast-ok').filter({ hasText: 'Ordem iniciada.' }).waitFor();
    expect((await lumen.admin(curitiba.token, 'GET', `/api/admin/service-orders/${orders.near!.id}`)).body.status).toBe('IN_PROGRESS');

    // The crew (a triager) re-plans the overdue visit from the order page: the flag goes.
    await page.goto(`${lumen.baseUrl}/console/orders/${orders.far!.id}`);
    await page.getByTestId('order-visit-overdue').waitFor();
    const tomorrow = new Date(Date.now() + 24 * HOUR);
    const day = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo', year: 'numeric', month: '2-digit', day: '2-digit' }).format(tomorrow);
    await page.getByTestId('visit-day').fill(day);
    await page.getByTestId('visit-from').fill('13:00');
    await page.getByTestId('visit-to').fill('09:00');
    expect(await page.getByTestId('visit-save').isDisabled()).toBe(true);
    expect(await page.getByTestId('visit-form').innerText()).toContain('O fim precisa ser depois do início.');
    await page.getByTestId('visit-to').fill('16:30');
    await page.getByTestId('visit-save').click();
    await page.getByTestId('toast-ok').filter({ hasText: 'Visita planejada.' }).waitFor();
    await expect.poll(() => page.getByTestId('order-visit-overdue').count()).toBe(0);
    const planned = (await lumen.admin(curitiba.token, 'GET', `/api/admin/service-orders/${orders.far!.id}`)).body.plannedVisit;
    expect(planned).toEqual({ startsAt: `${day}T16:00:00.000Z`, endsAt: `${day}T19:30:00.000Z`, overdue: false });

    // The desktop view of the day, in English.
    await page.setViewportSize(DESKTOP);
    await page.getByTestId('language').selectOption('en');
    await page.getByRole('link', { name: 'My team today' }).click();
    await page.getByTestId('my-team').waitFor();
    await expect.poll(() => page.getByTestId('my-team-order').count()).toBe(2);
    expect(await page.locator('main').innerText()).toContain('2 open orders, most urgent first');
    expect(await page.getByTestId('my-team-visit').first().innerText()).toMatch(/^Planned visit: \w{3}, \d\d\/\d\d, \d\d:\d\d [AP]M to \d\d:\d\d [AP]M$/);
    // The earlier confirmations closed, for the picture.
    for (const close of await page.locator('.toast-close').all()) await close.click();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'my-team-desktop.png'), fullPage: false });
    expect(w.problems).toEqual([]);
    await context.close();
  });
});
