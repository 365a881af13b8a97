/**
 * Triage at volume on the alert page, with the keyboard only: a Curitiba operator
 * filters the inbox by the partner's code, opens the second row with j and Enter, and
 * triages alert after alert (o Enter; l, the order's number, Enter; d, the note, Tab,
 * Enter, Enter; r, part of a reason's name, Enter, Tab, Enter). Each time the next
 * Pending alert of the filter opens, with the focus on the triage panel and a toast
 * linking to the order. n/p step through the filter; ? lists the keys (in both
 * languages); Back returns to the inbox with its filter and the focused row.
 * Screenshots: docs/console/triage-flow-{desktop,phone}.png, shortcuts-dialog.png.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { DESKTOP, launch, noSidewaysScroll, openPage, PHONE, SCREENSHOTS, screenshots, seriousViolations, toast } from './support/browser.js';
import { alertsOf, makeCity, sendRequest, type City } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';

const CODE = 'LUZ-PISCANDO-CWB';
const CURITIBA = { latitude: -25.4284, longitude: -49.2733 };
const STREETS = ['Rua Comendador Araújo', 'Avenida Sete de Setembro', 'Rua XV de Novembro', 'Alameda Dr. Carlos de Carvalho', 'Rua Desembargador Westphalen', 'Avenida Visconde de Guarapuava'];

let lumen: Lumen;
let browser: Browser;
let curitiba: City;
/** The filtered alerts, by number (the inbox's order here). */
let filtered: { id: string; alertNumber: number; address: { street: string } }[];
let others: string[];

beforeAll(async () => {
  lumen = await startLumenForBrowser();
  browser = await launch();
  curitiba = await makeCity(lumen, { name: 'Curitiba', webhookUrl: 'https://hooks.curitiba.example/lumen', code: 'CENTRAL-156-CURITIBA' });
  await lumen.cli('reason', 'create', '--tenant', curitiba.tenantId, '--code', 'LAMP_FLICKER', '--name-pt', 'Lâmpada piscando', '--name-en', 'Flickering lamp', '--priority', 'Low', '--sla-hours', '72');
  await lumen.cli('reason', 'create', '--tenant', curitiba.tenantId, '--code', 'POLE_DAMAGED', '--name-pt', 'Poste danificado', '--name-en', 'Damaged pole', '--priority', 'High', '--sla-hours', '12');
  // Interleaved: the filter keeps six, two reports of other kinds never open in the flow.
  for (const [i, street] of STREETS.entries()) {
    await sendRequest(lumen, curitiba, { ...CURITIBA, latitude: CURITIBA.latitude + i * 0.0005, street, reasonCode: CODE, description: `Lâmpada piscando a noite toda na ${street}, perto do número ${200 + i * 40}.` });
    // Each at its own place (different lamps, 300 m apart): Pending alerts on one spot are one group in the inbox.
    if (i === 2 || i === 4) await sendRequest(lumen, curitiba, { ...CURITIBA, longitude: CURITIBA.longitude + i * 0.003, street: 'Rua Marechal Deodoro', description: 'Poste inclinado depois da chuva.' });
  }
  const pending = await alertsOf(lumen, curitiba);
  filtered = pending.filter((a) => a.partnerReasonCode === CODE).sort((a, b) => a.alertNumber - b.alertNumber);
  others = pending.filter((a) => a.partnerReasonCode !== CODE).map((a) => a.id);
  expect(filtered).toHaveLength(6);
  expect(others).toHaveLength(2);
});
afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
});

/** The alert page shown is this alert's, ready, with the focus on its triage panel. */
async function onAlert(page: Page, a: { alertNumber: number }) {
  await page.getByRole('heading', { level: 1, name: `Alerta #${a.alertNumber}` }).waitFor();
  await page.getByTestId('triage').waitFor();
  await expect.poll(() => focused(page)).toBe('triage');
}

/**
 * Three new alerts of one partner reason at the given streets, and the inbox filtered to
 * them (oldest first) open at this viewport with its three rows shown.
 */
async function inboxOfThree(reasonCode: string, streets: readonly string[], at: (i: number) => { latitude: number; longitude: number }, description: (street: string) => string, viewport: typeof PHONE) {
  for (const [i, street] of streets.entries()) await sendRequest(lumen, curitiba, { ...at(i), street, reasonCode, description: description(street) });
  const mine = (await alertsOf(lumen, curitiba)).filter((a) => a.partnerReasonCode === reasonCode).sort((a, b) => a.alertNumber - b.alertNumber);
  expect(mine).toHaveLength(3);
  const { page, problems } = await openPage(browser, lumen.baseUrl, { as: curitiba.admin, viewport });
  await page.goto(`${lumen.baseUrl}/console/inbox?partnerReason=${reasonCode}&sort=number`);
  await page.getByTestId('inbox').waitFor();
  await expect.poll(() => page.locator('.inbox-row').count()).toBe(3);
  return { mine, page, problems };
}

/** The focused element's test id (or its tag name). */
const focused = (page: Page) => page.evaluate<string>('document.activeElement ? document.activeElement.dataset.testid || document.activeElement.tagName : ""');

/** The window is phone-sized and the page has been drawn since (the console follows the change event). */
const phoneLaidOut = (page: Page) => page.evaluate<boolean>(`new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(matchMedia('(max-width: 820px)').matches))))`);

const statusOf = async (id: string) => (await lumen.admin(curitiba.token, 'GET', `/api/admin/alerts/${id}`)).body;

describe('triage flow on the alert page', () => {
  it('three alerts triaged in a row with the keyboard only; each time the next Pending alert of the filter opens', async () => {
    const { page, problems } = await openPage(browser, lumen.baseUrl, { as: curitiba.admin, viewport: DESKTOP });
    await page.goto(`${lumen.baseUrl}/console/inbox?partnerReason=${CODE}&sort=number`);
    await page.getByTestId('inbox').waitFor();
    await expect.poll(() => page.locator('.inbox-row').count()).toBe(6);
    await page.evaluate('document.activeElement && document.activeElement.blur()');
    await page.keyboard.press('j');
    await page.keyboard.press('Enter');
    const [, a2, a3, a4, a5, a6] = filtered;
    await onAlert(page, a2!);
    // The panel lists its keys on a keyboard's screen.
    expect(await page.getByTestId('flow-keys-hint').isVisible()).toBe(true);
    // The markers of the map are not in the tab order.
    await page.locator('path.marker').first().waitFor();
    expect(await page.locator('path.marker:not([tabindex="-1"])').count()).toBe(0);

    // ? lists the keys, in a dialog; Escape closes it.
    await page.keyboard.press('?');
    const dialog = page.getByTestId('shortcuts');
    await dialog.waitFor({ state: 'visible' });
    const keys = await dialog.innerText();
    for (const words of ['Atalhos de teclado', 'Criar ordem', 'Vincular a uma ordem aberta', 'Descartar', 'Reclassificar', 'Próximo alerta do filtro', 'Alerta anterior do filtro']) expect(keys).toContain(words);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'shortcuts-dialog.png') });
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });

    // 1. o, Enter: an order; the toast links to it; the next alert of the filter opens.
    await page.keyboard.press('o');
    expect(await focused(page)).toBe('create-order');
    await page.keyboard.press('Enter');
    const created = await toast(page, 'ok', `criada para o alerta nº ${a2!.alertNumber}.`);
    const orderNumber = /OS-\d{4}-\d{5}/.exec(created)![0];
    expect(await page.getByTestId('toast-ok').getByRole('link', { name: `Abrir a ordem ${orderNumber}` }).getAttribute('href')).toMatch(/^\/console\/orders\/[0-9a-f-]{36}$/);
    await onAlert(page, a3!);
    expect((await statusOf(a2!.id)).status).toBe('Linked');

    // 2. l, the order's number, Enter: linked to it; the next alert opens.
    await page.keyboard.press('l');
    await page.keyboard.type(orderNumber);
    await page.keyboard.press('Enter');
    await toast(page, 'ok', `Alerta nº ${a3!.alertNumber} vinculado à ordem ${orderNumber}.`);
    await onAlert(page, a4!);
    expect((await statusOf(a3!.id)).serviceOrder.number).toBe(orderNumber);

    // 3. d, the note, Tab to "Descartar", Enter; the confirmation has the focus, Enter.
    await page.keyboard.press('d');
    await page.keyboard.type('Luminária já trocada pela equipe na semana passada.');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('discard');
    await page.keyboard.press('Enter');
    await page.getByTestId('discard-confirm').waitFor();
    await expect.poll(() => focused(page)).toBe('discard-yes');
    await page.keyboard.press('Enter');
    await toast(page, 'ok', `Alerta nº ${a4!.alertNumber} descartado.`);
    await onAlert(page, a5!);
    expect(await statusOf(a4!.id)).toMatchObject({ status: 'Cancelled', cancelReason: 'Luminária já trocada pela equipe na semana passada.' });

    // 4. r, part of a reason's name (no accent), Enter chooses it; Tab, Enter reclassifies.
    await page.keyboard.press('r');
    await page.keyboard.type('lampada pisc');
    const options = page.locator('.reason-options [role="option"]');
    await expect.poll(() => options.allInnerTexts()).toEqual([expect.stringContaining('Manter o motivo atual'), 'Lâmpada piscando (LAMP_FLICKER)']);
    await page.keyboard.press('Enter');
    expect(await page.getByTestId('reason-picker-input').inputValue()).toBe('Lâmpada piscando (LAMP_FLICKER)');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await toast(page, 'ok', `Alerta nº ${a5!.alertNumber} reclassificado: Lâmpada piscando.`);
    await onAlert(page, a6!);
    expect((await statusOf(a5!.id)).reasonCode).toBe('LAMP_FLICKER');
    // The two reports outside the filter never opened and are untouched.
    for (const id of others) expect((await statusOf(id)).status).toBe('Pending');
    // The toasts of those actions (several at once) cover none of the triage panel's controls.
    const covered = await page.evaluate<string[]>(`(() => {
      const toasts = [...document.querySelectorAll('.toasts .toast')].map((t) => t.getBoundingClientRect());
      const hits = (r) => toasts.some((t) => t.left < r.right && r.left < t.right && t.top < r.bottom && r.top < t.bottom);
      return [...document.querySelectorAll('[data-testid="triage"] :is(button, input, select, textarea)')].filter((c) => hits(c.getBoundingClientRect())).map((c) => c.dataset.testid || c.tagName);
    })()`);
    expect(await page.locator('.toasts .toast').count()).toBeGreaterThan(1);
    expect(covered).toEqual([]);
    // On a phone only the newest confirmation shows (the undo offer stays). Read at once
    // once the layout is a phone's: waited for, the older ones would go by themselves (6 s).
    await page.setViewportSize(PHONE);
    await expect.poll(() => phoneLaidOut(page)).toBe(true);
    expect(await page.locator('.toasts .toast-ok').allInnerTexts()).toEqual([expect.stringContaining(`Alerta nº ${a5!.alertNumber} reclassificado`)]);
    await page.setViewportSize(DESKTOP);
    await screenshots(page, 'triage-flow');
    await noSidewaysScroll(page);

    // p and n step through the filter (a5 is still Pending: a reclassified alert stays).
    await page.keyboard.press('p');
    await onAlert(page, a5!);
    await page.keyboard.press('n');
    await onAlert(page, a6!);

    // Back: the inbox with its filter, the row of the alert last opened focused.
    await page.goBack();
    await page.getByTestId('inbox').waitFor();
    expect(new URL(page.url()).search).toBe(`?partnerReason=${CODE}&sort=number`);
    await expect.poll(() => page.locator('.inbox-row').count()).toBe(3);
    await expect.poll(() => page.locator('.inbox-row[aria-current="true"]').getAttribute('data-alert-id')).toBe(a6!.id);
    // j/k go on from there: k is the row above it.
    await page.evaluate('document.activeElement && document.activeElement.blur()');
    await page.keyboard.press('k');
    await expect.poll(() => page.locator('.inbox-row[aria-current="true"]').getAttribute('data-alert-id')).toBe(a5!.id);
    expect(problems).toEqual([]);
  });

  it('"return to the inbox" after an action, at 390 px, in English; keys typed in a field stay in the field', async () => {
    const { page, problems } = await openPage(browser, lumen.baseUrl, { as: curitiba.admin, viewport: PHONE });
    await page.goto(`${lumen.baseUrl}/console/inbox?partnerReason=${CODE}&sort=number`);
    await page.getByTestId('inbox').waitFor();
    await page.getByTestId('language').selectOption('en');
    // A touch screen has no keys: neither the inbox nor the triage panel lists them.
    expect(await page.locator('.keys-hint').count()).toBe(1);
    expect(await page.locator('.keys-hint').isVisible()).toBe(false);
    const first = (await page.locator('.inbox-row').first().getAttribute('data-alert-id'))!;
    await page.locator('.inbox-row').first().locator('.inbox-link').click();
    await page.getByTestId('triage').waitFor();
    expect(await page.getByTestId('flow-keys-hint').count()).toBe(1);
    expect(await page.getByTestId('flow-keys-hint').isVisible()).toBe(false);
    await page.getByTestId('after-triage').selectOption('inbox');
    // Typing in the order field: "n" and "p" are letters there, not steps.
    await page.getByTestId('link-order').fill('');
    await page.getByTestId('link-order').type('np');
    expect(new URL(page.url()).pathname).toBe(`/console/alerts/${first}`);
    expect(await page.getByTestId('link-order').inputValue()).toBe('np');
    await page.getByTestId('link-order').fill('');
    await page.evaluate('document.activeElement && document.activeElement.blur()');
    await page.keyboard.press('?');
    const keys = await page.getByTestId('shortcuts').innerText();
    expect(keys).toContain('Keyboard shortcuts');
    expect(keys).toContain('Next alert of the filter');
    expect(keys).not.toMatch(/Atalhos|Próximo/);
    await noSidewaysScroll(page);
    await page.getByTestId('shortcuts-close').click();
    await page.getByTestId('shortcuts').waitFor({ state: 'hidden' });
    // The reason picker in English finds by the English name.
    await page.getByTestId('reason-picker-input').fill('damaged');
    await expect.poll(() => page.locator('.reason-options [role="option"]').allInnerTexts()).toEqual([expect.stringContaining('Keep the current reason'), 'Damaged pole (POLE_DAMAGED)']);
    // The city's reasons arrive after the page: Enter picks the first one shown.
    await page.getByTestId('reason-picker').locator('[role="option"]').first().waitFor();
    await page.getByTestId('reason-picker-input').press('Enter');
    await page.getByRole('button', { name: 'Reclassify' }).click();
    await toast(page, 'ok', /reclassified: Damaged pole\./);
    await page.getByTestId('inbox').waitFor();
    expect(new URL(page.url()).search).toBe(`?partnerReason=${CODE}&sort=number`);
    await noSidewaysScroll(page);
    expect(problems).toEqual([]);
  });
  it('at 390 px a newer confirmation replaces the shown one, and the room below the page follows its height', async () => {
    const SHORT = 'LUMINARIA-QUEBRADA-CWB';
    const { mine, page, problems } = await inboxOfThree(
      SHORT,
      ['Rua Voluntários da Pátria', 'Rua Emiliano Perneta', 'Rua Visconde de Nacar'],
      (i) => ({ latitude: -25.4351 + i * 0.0005, longitude: -49.2689 }),
      (street) => `Luminária quebrada na ${street}.`,
      PHONE,
    );
    await page.locator('.inbox-row').first().locator('.inbox-link').click();
    await onAlert(page, mine[0]!);
    /** The page's bottom padding is the toast bar's height and a margin, so nothing ends up under it. */
    const room = () => page.evaluate<[string, string]>(`new Promise((r) => setTimeout(() => requestAnimationFrame(() => requestAnimationFrame(() => r([document.body.style.paddingBottom, document.querySelector('.toasts').offsetHeight + 16 + 'px']))), 300))`);
    // 1. A new order: its confirmation has two lines or more (the words and the link to the order).
    await page.keyboard.press('o');
    await page.keyboard.press('Enter');
    await toast(page, 'ok', `criada para o alerta nº ${mine[0]!.alertNumber}.`);
    await onAlert(page, mine[1]!);
    await expect.poll(async () => { const [a, b] = await room(); return a === b; }).toBe(true);
    // 2. Discarded: a shorter confirmation (one line, no link) takes the place of the first.
    await page.keyboard.press('d');
    await page.keyboard.type('Mesma luminária do alerta anterior.');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe('discard-yes');
    await page.keyboard.press('Enter');
    await toast(page, 'ok', `Alerta nº ${mine[1]!.alertNumber} descartado.`);
    // Read at once: the first confirmation would go by itself after 6 s.
    expect(await page.locator('.toasts .toast-ok').allInnerTexts()).toEqual([expect.stringContaining(`Alerta nº ${mine[1]!.alertNumber} descartado.`)]);
    await onAlert(page, mine[2]!);
    // Read once the page has settled, not polled: when the confirmation goes by itself (6 s)
    // the room would be recomputed anyway.
    const [padding, needed] = await room();
    expect(padding).toBe(needed);
    expect(problems).toEqual([]);
  });

  it('bulk "assign team": two reports of different lamps, each its own order for the team; the reason picker in the orders filter and the mapping table', async () => {
    const { page, problems } = await openPage(browser, lumen.baseUrl, { as: curitiba.admin, viewport: DESKTOP });
    await page.goto(`${lumen.baseUrl}/console/inbox?sort=number`);
    await page.getByTestId('inbox').waitFor();
    for (const id of others) await page.locator(`.inbox-row[data-alert-id="${id}"] [data-testid="mark"]`).check();
    expect(await page.getByTestId('bulk-count').innerText()).toBe('2 alertas marcados');
    await page.getByTestId('bulk-action').selectOption('assign-team');
    expect(await page.getByTestId('bulk-apply').isDisabled()).toBe(true);
    expect(await page.getByTestId('bulk-bar').innerText()).toContain('Escolha a equipe.');
    await page.getByTestId('bulk-team').selectOption(curitiba.teamId);
    await page.getByTestId('bulk-apply').click();
    await toast(page, 'ok', '2 ordens criadas e atribuídas à equipe.');
    const after = await Promise.all(others.map(statusOf));
    expect(after.map((a) => [a.status, a.serviceOrder.status])).toEqual([
      ['Linked', 'ASSIGNED'],
      ['Linked', 'ASSIGNED'],
    ]);
    expect(after[0].serviceOrder.id).not.toBe(after[1].serviceOrder.id);
    await noSidewaysScroll(page);

    // The orders' reason filter is the same picker: part of the name, Enter.
    await page.goto(`${lumen.baseUrl}/console/orders?view=table`);
    await page.getByTestId('orders-reason-input').fill('outros sist');
    // The city's reasons arrive after the page: Enter picks the first one shown.
    await page.getByTestId('orders-reason').locator('[role="option"]', { hasText: 'EXTERNAL_OTHER' }).first().waitFor();
    await page.getByTestId('orders-reason-input').press('Enter');
    await expect.poll(() => new URL(page.url()).searchParams.get('reason')).toBe('EXTERNAL_OTHER');
    expect(await page.getByTestId('orders-reason-input').inputValue()).toBe('Outros (sistema externo) (EXTERNAL_OTHER)');

    // The reason-mapping table: the partner's code mapped with the picker, with what the partner means by it.
    await page.goto(`${lumen.baseUrl}/console/partners/${curitiba.partnerCode}`);
    const row = page.locator(`[data-testid="reason-mapping"] tr[data-code="${CODE}"]`);
    await row.waitFor();
    await row.getByTestId('mapping-select-input').fill('lampada pisc');
    // The city's reasons arrive after the page: Enter picks the first one shown.
    await row.getByTestId('mapping-select').locator('[role="option"]', { hasText: 'LAMP_FLICKER' }).first().waitFor();
    await row.getByTestId('mapping-select-input').press('Enter');
    await row.getByTestId('mapping-description').fill('Luz que acende e apaga sem parar, informada pela central 156 de Curitiba');
    await row.getByTestId('mapping-save').click();
    await toast(page, 'ok', `Mapeamento de ${CODE} salvo.`);
    const codes = (await lumen.admin(curitiba.token, 'GET', `/api/admin/partners/${curitiba.partnerCode}/reason-codes`)).body.items as { partnerCode: string; reasonCode: string; description: string }[];
    expect(codes.find((c) => c.partnerCode === CODE)).toMatchObject({ reasonCode: 'LAMP_FLICKER', description: 'Luz que acende e apaga sem parar, informada pela central 156 de Curitiba' });
    await page.reload();
    await expect.poll(() => row.getByTestId('mapping-description').inputValue()).toBe('Luz que acende e apaga sem parar, informada pela central 156 de Curitiba');
    await noSidewaysScroll(page);
    expect(problems).toEqual([]);
  });

  it('an action taken before the filter\'s list has arrived still opens the alert after it, not the first of the filter', async () => {
    const HELD = 'POSTE-INCLINADO-CWB';
    const { mine, page, problems } = await inboxOfThree(
      HELD,
      ['Rua Saldanha Marinho', 'Rua Cruz Machado', 'Rua André de Barros'],
      (i) => ({ latitude: -25.4402 + i * 0.004, longitude: -49.2811 }),
      (street) => `Poste inclinado na ${street}, com risco de cair sobre a calçada.`,
      DESKTOP,
    );
    // The alert page's read of the filter's list (the list as the page opened) is held
    // back until the action is done; the reads after the action pass.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    await page.route(
      (url) => url.pathname === '/api/admin/alerts' && url.searchParams.get('partnerReason') === HELD && !url.searchParams.has('grouped'),
      async (route) => {
        if (holding) return route.continue();
        holding = true;
        await held;
        await route.continue().catch(() => undefined);
      },
    );
    // The second row: the alert after it is the third, while the filter's first is still Pending.
    await page.evaluate('document.activeElement && document.activeElement.blur()');
    await page.keyboard.press('j');
    await page.keyboard.press('Enter');
    await onAlert(page, mine[1]!);
    await expect.poll(() => holding).toBe(true);
    await page.keyboard.press('o');
    await page.keyboard.press('Enter');
    await toast(page, 'ok', `criada para o alerta nº ${mine[1]!.alertNumber}.`);
    await onAlert(page, mine[2]!);
    release();
    expect((await statusOf(mine[0]!.id)).status).toBe('Pending');
    expect(problems).toEqual([]);
  });
});
