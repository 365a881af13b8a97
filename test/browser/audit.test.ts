/**
 * The audit log in the console, as a city-admin of Natal reads it: each entry names its
 * object by number or name, a team by its name, and the page filters by an order's
 * number, by who did it and by a period, with the CSV export of that period.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, openPage, screenshots, seriousViolations } from './support/browser.js';
import { alertsOf, makeCity, sendRequest, type City } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';

let lumen: Lumen;
let browser: Browser;
let natal: City;
let orderNumber = '';
/** The reasons before and after the third alert's reclassification, as the console names them. */
let reclassified = { from: '', to: '' };

beforeAll(async () => {
  [lumen, browser] = await Promise.all([startLumenForBrowser(), launch()]);
  natal = await makeCity(lumen, { name: 'Natal', webhookUrl: 'https://hooks.natal.example/lumen', code: 'PORTAL-NATAL-156' });
  for (const d of ['Poste apagado na Avenida Engenheiro Roberto Freire.', 'Lâmpada acesa de dia na Rua Mossoró.']) await sendRequest(lumen, natal, { description: d });
  const [first, second] = (await alertsOf(lumen, natal)).sort((a, b) => a.alertNumber - b.alertNumber);
  const order = await lumen.admin(natal.token, 'POST', `/api/admin/alerts/${first.id}/create-order`, {});
  orderNumber = order.body.number;
  expect((await lumen.admin(natal.token, 'POST', `/api/admin/service-orders/${order.body.id}/assign`, { teamId: natal.teamId })).status).toBe(200);
  expect((await lumen.admin(natal.token, 'POST', `/api/admin/alerts/${second.id}/discard`, { reason: 'Iluminação de condomínio particular.' })).status).toBe(200);
  await sendRequest(lumen, natal, { description: 'Poste com a lâmpada queimada na Rua Apodi, em frente à escola.' });
  // The only Pending alert now: the first is linked to its order, the second discarded.
  const pending = await alertsOf(lumen, natal);
  expect(pending).toHaveLength(1);
  const third = pending[0]!;
  expect((await lumen.admin(natal.token, 'POST', `/api/admin/tenants/${natal.tenantId}/reasons`, { code: 'LAMP_OUT', namePt: 'Lâmpada apagada', nameEn: 'Lamp out', priority: 'High', slaHours: 24 })).status).toBe(201);
  const reasons = (await lumen.admin(natal.token, 'GET', `/api/admin/tenants/${natal.tenantId}/reasons`)).body.items as { code: string; namePt: string }[];
  const named = (code: string) => {
    const reason = reasons.find((r) => r.code === code);
    if (!reason) throw new Error(`no reason ${code} in Natal (it has ${reasons.map((r) => r.code).join(', ')})`);
    return `${reason.namePt} (${code})`;
  };
  reclassified = { from: named(third.reasonCode), to: named('LAMP_OUT') };
  expect((await lumen.admin(natal.token, 'POST', `/api/admin/alerts/${third.id}/reclassify`, { reasonCode: 'LAMP_OUT' })).status).toBe(200);
});
afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
});

describe('the audit log page', () => {
  it('names objects and teams, and filters by number, by who and by period', async () => {
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: natal.admin });
    // The city's reasons are held back until the entries have arrived: the page waits for
    // them rather than show an entry with a reason's code first.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const reasonsRead = (url: URL) => url.pathname === `/api/admin/tenants/${natal.tenantId}/reasons`;
    await context.route(reasonsRead, async (route) => {
      await held;
      await route.continue().catch(() => undefined);
    });
    const entriesRead = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/admin/audit' && r.ok());
    await page.goto(`${lumen.baseUrl}/console/audit`);
    await entriesRead;
    await page.getByRole('status').filter({ hasText: 'Carregando…' }).waitFor();
    expect(await page.getByTestId('audit').count()).toBe(0);
    release();
    await page.getByTestId('audit').waitFor();
    await context.unroute(reasonsRead);
    const text = await page.getByTestId('audit').innerText();
    expect(text).toContain('Ordem de serviço criada a partir do alerta · Alerta #1');
    expect(text).toContain(`Ordem de serviço: nenhum → ${orderNumber}`);
    expect(text).toContain('Alerta descartado · Alerta #2');
    expect(text).not.toMatch(/service_order|alert\.discard/);
    // A reason by its name with its code, as the other pages show it; a field empty on both sides is left out.
    expect(text).toContain(`Motivo: ${reclassified.from} → ${reclassified.to}`);
    expect(text).not.toMatch(/nenhum → nenhum/);

    await page.getByTestId('audit-number').fill(orderNumber);
    await page.getByTestId('audit-number').press('Enter');
    await expect.poll(async () => (await page.getByTestId('audit').innerText()).includes('Alerta descartado')).toBe(false);
    expect(await page.getByTestId('audit').innerText()).toContain(`Ordem atribuída a uma equipe · Ordem de serviço ${orderNumber}`);
    expect(await page.getByTestId('audit').innerText()).toMatch(/Equipe: nenhum → Equipe Natal 01/);
    await page.getByTestId('audit-number').fill('OS-1999-99999');
    await page.getByTestId('audit-number').press('Enter');
    await page.getByTestId('audit-number-unknown').waitFor();
    await page.getByTestId('audit-number').fill('');
    await page.getByTestId('audit-number').press('Enter');

    await page.getByTestId('audit-who').fill('nobody-did-this');
    await page.getByText('Nenhum registro.').waitFor();
    await page.getByTestId('audit-who').fill('desk-');
    await page.getByTestId('audit').waitFor();

    // Today as the operator's page counts days (its own time zone, not UTC: after 21:00 in
    // Brazil the UTC date is already tomorrow).
    const today = await page.evaluate<string>("new Date().toLocaleDateString('sv')");
    await page.getByTestId('audit-from').fill(today);
    await page.getByTestId('audit-to').fill(today);
    await page.getByTestId('audit').waitFor();
    const href = (await page.getByTestId('audit-export').getAttribute('href'))!;
    expect(href).toMatch(new RegExp(`^/api/admin/tenants/${natal.tenantId}/exports/audit\\?from=.+&to=.+`));
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'audit-filters');
    expect(problems).toEqual([]);
    await context.close();
  });
});
