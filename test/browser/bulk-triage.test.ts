/**
 * Triage at volume in the console: a new partner of Recife starts sending, with a reason
 * code nobody mapped, and an operator clears the lot in a few actions: every row of the page
 * marked and reclassified at once, a range (shift-click) on one new order with a team,
 * rows marked with `x` discarded with one note after a confirmation, and a batch refused
 * because one of its alerts was discarded meanwhile (nothing changes; the row says why).
 * At 1366 px and at 390 px; screenshots docs/console/bulk-triage-{desktop,phone}.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { DESKTOP, launch, noSidewaysScroll, openPage, PHONE, screenshots, seriousViolations, toast } from './support/browser.js';
import { alertsOf, makeCity, sendRequest, type City } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';
import { secretFile } from '../support/app.js';

const NEW_PARTNER = 'PORTAL-RECIFE-156';
const NEW_CODE = 'LUMINARIA-QUEBRADA-77';
const RECIFE = { latitude: -8.0631, longitude: -34.8711 };

let lumen: Lumen;
let browser: Browser;
let recife: City;

beforeAll(async () => {
  lumen = await startLumenForBrowser();
  browser = await launch();
  recife = await makeCity(lumen, { name: 'Recife', webhookUrl: 'https://hooks.recife.example/lumen', code: 'PORTAL-RECIFE' });
  await lumen.cli('reason', 'create', '--tenant', recife.tenantId, '--code', 'LAMP_BROKEN', '--name-pt', 'Luminária quebrada', '--name-en', 'Broken luminaire', '--priority', 'High', '--sla-hours', '24');
  const partner = await lumen.cli('partner', 'create', '--tenant', recife.tenantId, '--code', NEW_PARTNER, '--scopes', 'canCreateAlerts', '--webhook-url', 'https://hooks.recife156.example/lumen', '--webhook-secret-file', secretFile('segredo-de-teste-0123456789'));
  // Sixteen reports of the new partner along Avenida Boa Viagem, and two ordinary ones.
  for (let i = 0; i < 16; i++)
    await sendRequest(lumen, { ...recife, apiKey: partner.apiKey as string }, { ...RECIFE, latitude: RECIFE.latitude - i * 0.0004, reasonCode: NEW_CODE, street: 'Avenida Boa Viagem', description: `Luminária quebrada no poste ${i + 1} da avenida.` });
  // Two streets apart (not one spot: two Pending alerts on one spot are one group in the inbox).
  for (const [i, street] of ['Rua da Aurora', 'Rua do Bom Jesus'].entries()) await sendRequest(lumen, recife, { ...RECIFE, longitude: RECIFE.longitude + 0.003 * (i + 1), street, description: `Lâmpada apagada na ${street}.` });
});
afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
});



describe('bulk triage in the inbox', () => {
  it('clears a new partner code in a few actions at 1366 px and 390 px, and a refused batch changes nothing', async () => {
    const { page, problems } = await openPage(browser, lumen.baseUrl, { as: recife.admin, viewport: DESKTOP });
    await page.goto(`${lumen.baseUrl}/console/inbox?partner=${NEW_PARTNER}&sort=number`);
    await page.getByTestId('inbox').waitFor();
    await expect.poll(() => page.locator('.inbox-row').count()).toBe(16);

    // 1. Every row of the page, reclassified at once. The city's reasons are held back
    // for a moment: Enter on a typed code before they arrive chooses nothing (it used to
    // choose "no reason" and clear the field).
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const reasonsUrl = new RegExp(`/api/admin/tenants/${recife.tenantId}/reasons(\\?|$)`);
    await page.context().route(reasonsUrl, async (route) => {
      await held;
      await route.continue();
    });
    await page.getByTestId('select-all').check();
    expect(await page.getByTestId('bulk-count').innerText()).toBe('16 alertas marcados');
    await page.getByTestId('bulk-action').selectOption('reclassify');
    expect(await page.getByTestId('bulk-apply').isDisabled()).toBe(true);
    // The reason picker finds the reason by its code; Enter chooses it.
    await page.getByTestId('bulk-reason-input').fill('LAMP_BROKEN');
    await page.getByTestId('bulk-reason-input').press('Enter');
    expect(await page.getByTestId('bulk-reason-input').inputValue()).toBe('LAMP_BROKEN');
    expect(await page.getByTestId('bulk-apply').isDisabled()).toBe(true);
    release();
    await page.getByTestId('bulk-reason').getByRole('option', { name: /\(LAMP_BROKEN\)/ }).waitFor();
    await page.context().unroute(reasonsUrl);
    await page.getByTestId('bulk-reason-input').press('Enter');
    await page.getByTestId('bulk-apply').click();
    await toast(page, 'ok', '16 alertas reclassificados.');
    await expect.poll(async () => (await alertsOf(lumen, recife)).filter((a) => a.reasonCode === 'LAMP_BROKEN').length).toBe(16);
    expect(await page.getByTestId('bulk-bar').count()).toBe(0);

    // 2. Rows 1 to 5 by a click and a shift-click: one order, assigned to the team.
    const marks = page.getByTestId('mark');
    await marks.nth(0).click();
    await marks.nth(4).click({ modifiers: ['Shift'] });
    expect(await page.getByTestId('bulk-count').innerText()).toBe('5 alertas marcados');
    await page.getByTestId('bulk-action').selectOption('create-order');
    await page.getByTestId('bulk-team').selectOption(recife.teamId);
    await page.getByTestId('bulk-apply').click();
    await toast(page, 'ok', /^5 alertas vinculados à nova ordem OS-\d{4}-\d{5}\./);
    await expect.poll(() => page.locator('.inbox-row').count()).toBe(11);
    const linked = await alertsOf(lumen, recife, 'Linked');
    expect(linked).toHaveLength(5);
    expect(new Set(linked.map((a) => a.serviceOrder.id)).size).toBe(1);

    // 3. A refused batch: three rows marked with x, one of them discarded meanwhile.
    // The keys act when no field has the focus: back to the top with k, then x and j.
    await page.evaluate('document.activeElement && document.activeElement.blur()');
    for (let i = 0; i < 12; i++) await page.keyboard.press('k');
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press('x');
      await page.keyboard.press('j');
    }
    expect(await page.getByTestId('bulk-count').innerText()).toBe('3 alertas marcados');
    const firstId = (await page.locator('.inbox-row.marked').first().getAttribute('data-alert-id'))!;
    expect((await lumen.admin(recife.token, 'POST', `/api/admin/alerts/${firstId}/discard`, { reason: 'duplicado' })).status).toBe(200);
    await page.getByTestId('bulk-action').selectOption('discard');
    await page.getByTestId('bulk-note').fill('Luminária já trocada pela equipe.');
    await page.getByTestId('bulk-apply').click();
    await page.getByTestId('bulk-confirm').waitFor();
    expect(await page.getByTestId('bulk-confirm').innerText()).toContain('Descartar 3 alertas?');
    await page.getByTestId('bulk-confirm-yes').click();
    const refusal = await toast(page, 'error', 'Nada foi alterado');
    expect(refusal).toContain('1 dos alertas marcados não pode receber esta ação');
    expect(await page.locator(`.inbox-row[data-alert-id="${firstId}"] [data-testid="refusal"]`).innerText()).toBe('já está cancelado');
    expect((await alertsOf(lumen, recife)).length).toBe(10 + 2);
    expect(await seriousViolations(page)).toEqual([]);
    // The refusal stays on screen; the earlier confirmations are closed for the picture.
    const oks = page.locator('.toast-ok .toast-close');
    while ((await oks.count()) > 0) await oks.first().click({ timeout: 2000 }).catch(() => undefined);
    await screenshots(page, 'bulk-triage');

    // 4. At 390 px: the rest of the code discarded with one note.
    await page.setViewportSize(PHONE);
    await page.reload();
    await page.getByTestId('inbox').waitFor();
    await expect.poll(() => page.locator('.inbox-row').count()).toBe(10);
    await noSidewaysScroll(page);
    await page.getByTestId('select-all').check();
    await page.getByTestId('bulk-action').selectOption('discard');
    await noSidewaysScroll(page);
    await page.getByTestId('bulk-note').fill('Luminária já trocada pela equipe.');
    await page.getByTestId('bulk-apply').click();
    await page.getByTestId('bulk-confirm-yes').click();
    await toast(page, 'ok', '10 alertas descartados.');
    await page.getByText('Nenhum alerta pendente com estes filtros.').waitFor();
    const left = await alertsOf(lumen, recife);
    expect(left.map((a) => a.address.street).sort()).toEqual(['Rua da Aurora', 'Rua do Bom Jesus']);
    const cancelled = await alertsOf(lumen, recife, 'Cancelled');
    expect(cancelled.filter((a) => a.cancelReason === 'Luminária já trocada pela equipe.')).toHaveLength(10);
    expect(problems).toEqual([]);
  });

  it('speaks English with the switcher: counts, actions and refusals', async () => {
    const { page, problems } = await openPage(browser, lumen.baseUrl, { as: recife.admin, viewport: DESKTOP });
    // The first partner's two ordinary reports.
    await page.goto(`${lumen.baseUrl}/console/inbox?partner=PORTAL-RECIFE`);
    await page.getByTestId('inbox').waitFor();
    await expect.poll(() => page.locator('.inbox-row').count()).toBe(2);
    await page.getByTestId('language').selectOption('en');
    await page.getByText('Pending alerts').first().waitFor();
    await page.getByTestId('select-all').check();
    expect(await page.getByTestId('bulk-count').innerText()).toBe('2 alerts selected');
    expect(await page.getByTestId('bulk-apply').innerText()).toBe('Apply to 2 alerts');
    const bar = await page.getByTestId('bulk-bar').innerText();
    expect(bar).toContain('Create one order for all');
    expect(bar).not.toMatch(/alertas|Ação|create-order/);
    // An order number the city does not have: words, not the API's field pointer.
    await page.getByTestId('bulk-action').selectOption('link');
    await page.getByTestId('bulk-order').fill('OS-1999-99999');
    await page.getByTestId('bulk-apply').click();
    const problem = await toast(page, 'error', 'Nothing was changed');
    expect(problem).toContain('There is no order with this number in this city.');
    expect(problem).not.toMatch(/\/serviceOrderId|no such/);
    expect((await alertsOf(lumen, recife)).length).toBe(2);
    expect(problems).toEqual([]);
  });
});
