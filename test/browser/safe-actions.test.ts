/**
 * Actions that cannot go wrong by one click, in Manaus: a discard or a cancel needs the
 * note that goes to the partner and a confirmation; an operator whose page is stale (a
 * colleague acted first) gets the object read again and, in words, who did what and when;
 * a partner's resend that changed the description shows before → after in the timeline
 * and "atualizado pelo parceiro" in the inbox. Two operators, both languages, at 1366 px
 * and 390 px; screenshots docs/console/safe-actions-{desktop,phone}.png.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { DESKTOP, launch, noSidewaysScroll, openPage, PHONE, screenshots, seriousViolations, toast } from './support/browser.js';
import { makeCity, makeOperator, sendRequest, type City, type Person } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';

const MANAUS = { latitude: -3.1044, longitude: -60.0119 };
const COLLEAGUE = 'ana.beatriz.figueiredo.albuquerque@semulsp.manaus.am.gov.example';

let lumen: Lumen;
let browser: Browser;
let manaus: City;
let colleague: Person;
const alerts: Record<'discard' | 'race' | 'resent', { id: string; number: number; protocol: string }> = {} as never;

/** A partner's request; sent again with the same protocol number it is a resend. */
async function send(protocolNumber: string, description: string, number = '1661', spot = 0) {
  const body = {
    protocolNumber,
    assetType: 'POLE',
    requestedAt: new Date(Date.now() - 3_600_000).toISOString(),
    requester: { name: 'Raimunda Nonata de Souza Albuquerque', phone: '+5592987654321' },
    lampType: 'LED',
    address: { street: 'Avenida Djalma Batista', number, neighborhood: 'Chapada', reference: 'Ao lado do Manauara Shopping', ...MANAUS, longitude: MANAUS.longitude + spot * 0.003 },
    problem: { description, additionalNotes: 'A avenida fica escura depois das 18h.' },
  };
  const res = await fetch(`${lumen.baseUrl}/api/external/service-orders`, { method: 'POST', headers: { 'x-api-key': manaus.apiKey, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBeLessThan(300);
  const out = (await res.json()) as { alert: { id: string } };
  const alert = await lumen.admin(manaus.token, 'GET', `/api/admin/alerts/${out.alert.id}`);
  return { id: out.alert.id, number: alert.body.alertNumber as number, protocol: protocolNumber };
}

beforeAll(async () => {
  lumen = await startLumenForBrowser();
  browser = await launch();
  manaus = await makeCity(lumen, { name: 'Manaus', webhookUrl: 'https://hooks.manaus.example/lumen', code: 'PORTAL-MANAUS-156' });
  colleague = await makeOperator(lumen, { email: COLLEAGUE, name: 'Ana Beatriz Figueiredo Albuquerque', role: 'city-admin', tenantId: manaus.tenantId });
  // Each at its own place along the avenue (300 m apart): Pending alerts on one spot would be one group in the inbox.
  alerts.discard = await send(`156-${randomUUID().slice(0, 8)}`, 'Poste com lâmpada queimada em frente ao ponto de ônibus.', '1661', 1);
  alerts.race = await send(`156-${randomUUID().slice(0, 8)}`, 'Três postes apagados seguidos na avenida, perto da passarela.', '1661', 2);
  const protocol = `156-${randomUUID().slice(0, 8)}`;
  await send(protocol, 'Lâmpada piscando a noite toda.', '1661', 3);
  alerts.resent = await send(protocol, 'Lâmpada piscando a noite toda e agora apagada de vez; fios expostos na base do poste.', '1780', 3);
  // One more, so the inbox is not only these.
  await sendRequest(lumen, manaus, { ...MANAUS, longitude: MANAUS.longitude + 4 * 0.003, street: 'Rua Recife', description: 'Luminária pendurada pelo fio.' });
});
afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
});



describe('safe actions in the console', () => {
  it('asks for the note and a confirmation, says who acted first, and shows what the partner changed', async () => {
    const me = await openPage(browser, lumen.baseUrl, { as: manaus.admin, viewport: DESKTOP });
    const other = await openPage(browser, lumen.baseUrl, { as: colleague, viewport: DESKTOP });
    const page = me.page;

    // The inbox marks the alert the partner changed; its timeline says before → after.
    await page.goto(`${lumen.baseUrl}/console/inbox`);
    await page.getByTestId('inbox').waitFor();
    const resentRow = page.locator(`.inbox-row[data-alert-id="${alerts.resent.id}"]`);
    expect(await resentRow.getByTestId('partner-updated').innerText()).toBe('atualizado pelo parceiro');
    expect(await page.locator(`.inbox-row[data-alert-id="${alerts.discard.id}"] [data-testid="partner-updated"]`).count()).toBe(0);
    await page.goto(`${lumen.baseUrl}/console/alerts/${alerts.resent.id}`);
    expect(await page.getByTestId('partner-updated-at').innerText()).toContain('atualizado pelo parceiro');
    const changes = await page.getByTestId('changes').innerText();
    expect(changes).toContain('Descrição');
    expect(changes).toContain('Lâmpada piscando a noite toda.');
    expect(changes).toContain('fios expostos na base do poste');
    expect(changes).toMatch(/Número\s*1661 → 1780/);
    expect(await page.getByTestId('timeline').innerText()).toContain('O parceiro mudou a descrição ou o local');

    // A discard: no note, no button; the note, then a confirmation; "Voltar" changes nothing.
    await page.goto(`${lumen.baseUrl}/console/alerts/${alerts.discard.id}`);
    await page.getByTestId('triage').waitFor();
    expect(await page.getByTestId('discard').isDisabled()).toBe(true);
    expect(await page.getByTestId('triage').innerText()).toContain('Escreva a nota que o parceiro vai receber.');
    expect(await page.getByTestId('triage').innerText()).toContain('Nota do descarte (vai para o parceiro)');
    await page.getByTestId('discard-note').fill('Poste já atendido pela equipe na semana passada (OS anterior).');
    await page.getByTestId('discard').click();
    expect(await page.getByTestId('discard-confirm').innerText()).toContain(`Descartar o alerta #${alerts.discard.number}? A nota vai para o parceiro, e o descarte é definitivo.`);
    await page.getByTestId('discard-confirm').getByRole('button', { name: 'Voltar' }).click();
    expect((await lumen.admin(manaus.token, 'GET', `/api/admin/alerts/${alerts.discard.id}`)).body.status).toBe('Pending');
    await page.getByTestId('discard').click();
    await page.getByTestId('discard-yes').click();
    await toast(page, 'ok', `Alerta nº ${alerts.discard.number} descartado.`);
    const discarded = (await lumen.admin(manaus.token, 'GET', `/api/admin/alerts/${alerts.discard.id}`)).body;
    expect(discarded).toMatchObject({ status: 'Cancelled', cancelReason: 'Poste já atendido pela equipe na semana passada (OS anterior).' });

    // A race: this page shows the alert Pending; the colleague makes it an order first.
    await page.goto(`${lumen.baseUrl}/console/alerts/${alerts.race.id}`);
    await page.getByTestId('triage').waitFor();
    await other.page.goto(`${lumen.baseUrl}/console/alerts/${alerts.race.id}`);
    await other.page.getByTestId('create-order').click();
    const created = await toast(other.page, 'ok', /Ordem OS-\d{4}-\d{5} criada/);
    // The colleague follows the toast's link to the new order (the page moved on to the next alert).
    const orderNumber = /OS-\d{4}-\d{5}/.exec(created)![0];
    await other.page.getByTestId('toast-ok').getByRole('link', { name: new RegExp(orderNumber) }).click();
    await page.getByTestId('discard-note').fill('Pedido em duplicidade com o protocolo anterior do mesmo poste.');
    await page.getByTestId('discard').click();
    await page.getByTestId('discard-yes').click();
    const conflict = await toast(page, 'error', 'Alguém agiu antes');
    expect(conflict).toContain(`Este alerta já foi vinculado à ${orderNumber} por ${COLLEAGUE}, agora há pouco.`);
    await expect.poll(() => page.getByTestId('alert-details').innerText()).toContain(orderNumber);
    expect(await page.getByTestId('discard').count()).toBe(0);
    expect((await lumen.admin(manaus.token, 'GET', `/api/admin/alerts/${alerts.race.id}`)).body.status).toBe('Linked');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'safe-actions');

    // An order: the colleague's page shows it open; this operator cancels it, with the note and a confirmation.
    const orderId = (await lumen.admin(manaus.token, 'GET', `/api/admin/alerts/${alerts.race.id}`)).body.serviceOrder.id as string;
    await other.page.getByTestId('order-actions').waitFor();
    await other.page.getByTestId('language').selectOption('en');
    await other.page.getByText('Note (sent to the partner)').waitFor();
    await page.goto(`${lumen.baseUrl}/console/orders/${orderId}`);
    await page.getByTestId('order-actions').waitFor();
    expect(await page.getByTestId('cancel-order').isDisabled()).toBe(true);
    expect(await page.getByTestId('order-actions').innerText()).toContain('Para cancelar, escreva a nota que o parceiro vai receber.');
    await page.getByTestId('order-note').fill('Poste será substituído pela concessionária de energia; não é serviço de iluminação.');
    await page.getByTestId('cancel-order').click();
    expect(await page.getByTestId('cancel-confirm').innerText()).toContain(`Cancelar a ordem ${orderNumber}? A nota vai para o parceiro, e o cancelamento é definitivo.`);
    await page.getByTestId('cancel-yes').click();
    await toast(page, 'ok', 'Ordem cancelada.');

    // The colleague, in English, tries the same on the stale page: told who cancelled it and when.
    expect(await other.page.getByTestId('order-actions').innerText()).toContain('To cancel, write the note the partner will receive.');
    await other.page.getByTestId('order-note').fill('Cancelled: duplicate of an older order on the same pole.');
    await other.page.getByTestId('cancel-order').click();
    expect(await other.page.getByTestId('cancel-confirm').innerText()).toContain(`Cancel order ${orderNumber}? The note goes to the partner, and a cancellation is final.`);
    await other.page.getByTestId('cancel-yes').click();
    const orderConflict = await toast(other.page, 'error', 'Someone acted first');
    expect(orderConflict).toContain(`This order was already cancelled by ${manaus.admin.email}, just now.`);
    await expect.poll(() => other.page.getByTestId('order-actions').count()).toBe(0);
    const order = (await lumen.admin(manaus.token, 'GET', `/api/admin/service-orders/${orderId}`)).body;
    expect(order.status).toBe('CANCELLED');

    // English: the inbox mark and the discard's words; at 390 px nothing scrolls sideways.
    await other.page.goto(`${lumen.baseUrl}/console/inbox`);
    await other.page.getByTestId('inbox').waitFor();
    expect(await other.page.locator(`.inbox-row[data-alert-id="${alerts.resent.id}"] [data-testid="partner-updated"]`).innerText()).toBe('updated by the partner');
    await other.page.setViewportSize(PHONE);
    await noSidewaysScroll(other.page);
    await other.page.goto(`${lumen.baseUrl}/console/alerts/${alerts.resent.id}`);
    await other.page.getByTestId('triage').waitFor();
    const triage = await other.page.getByTestId('triage').innerText();
    expect(triage).toContain('Discard note (sent to the partner)');
    expect(triage).toContain('Write the note the partner will receive.');
    expect(await other.page.getByTestId('changes').innerText()).toContain('Description');
    // A 409 about something else (the order to link to is cancelled) keeps its own words.
    await other.page.getByTestId('link-order').fill(orderNumber);
    await other.page.getByTestId('link').click();
    const closed = await toast(other.page, 'error', 'Invalid transition');
    expect(closed).not.toContain('Someone acted first');
    expect(closed).toContain(orderNumber);
    expect((await lumen.admin(manaus.token, 'GET', `/api/admin/alerts/${alerts.resent.id}`)).body.status).toBe('Pending');
    expect(await other.page.getByTestId('timeline').innerText()).toContain('The partner changed the description or the place');
    await noSidewaysScroll(other.page);
    await page.setViewportSize(PHONE);
    await page.goto(`${lumen.baseUrl}/console/alerts/${alerts.race.id}`);
    await page.getByTestId('alert-details').waitFor();
    await noSidewaysScroll(page);
    expect(me.problems).toEqual([]);
    expect(other.problems).toEqual([]);
  });
});
