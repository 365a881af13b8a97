/**
 * "Desfazer" for 10 s after a triage action or an order's cancellation, in Porto Alegre,
 * with the partner's webhook a real receiver on loopback: an undone discard or order
 * never reaches it and leaves the alert as it was; an action left alone reaches it once
 * the offer is gone. Desktop 1366 and phone 390, pt-BR, and the offer in English;
 * screenshots docs/console/undo-{desktop,phone}.png.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { DESKTOP, launch, noSidewaysScroll, openPage, PHONE, screenshots, seriousViolations, toast } from './support/browser.js';
import { makeCity, sendRequest, type City } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';
import { startReceiver } from '../events/support.js';

const PORTO_ALEGRE = { latitude: -30.0346, longitude: -51.2177 };

let lumen: Lumen;
let browser: Browser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let poa: City;

let spot = 0;
async function pendingAlert(street: string, description: string): Promise<{ id: string; number: number }> {
  // Each street at its own place (300 m apart): Pending alerts on one spot are one group in the inbox.
  spot += 1;
  const sent = await sendRequest(lumen, poa, { ...PORTO_ALEGRE, longitude: PORTO_ALEGRE.longitude + spot * 0.003, street, description });
  const page = await lumen.admin(poa.token, 'GET', `/api/admin/alerts?tenantId=${poa.tenantId}&status=Pending&sort=newest&pageSize=50`);
  const found = (page.body.items as { id: string; alertNumber: number; protocolNumber: string }[]).find((a) => a.protocolNumber === sent.protocolNumber)!;
  return { id: found.id, number: found.alertNumber };
}

const receivedAbout = (alertId: string) => receiver.received.filter((r) => (JSON.parse(r.raw.toString('utf8')) as { alert: { id: string } }).alert.id === alertId);

beforeAll(async () => {
  receiver = await startReceiver();
  lumen = await startLumenForBrowser();
  browser = await launch();
  poa = await makeCity(lumen, { name: 'Porto Alegre', webhookUrl: receiver.url, code: `POA-156-${randomUUID().slice(0, 4).toUpperCase()}` });
});
afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
  await receiver?.close();
});

describe('undo in the console', () => {
  it('undoes a discard, a new order, a bulk discard and a cancellation, holds their events meanwhile, and lets the partner know only what stands', async () => {
    const discarded = await pendingAlert('Avenida Borges de Medeiros', 'Três luminárias apagadas em sequência perto do viaduto Otávio Rocha.');
    const ordered = await pendingAlert('Rua dos Andradas', 'Lâmpada acesa de dia em frente à Casa de Cultura Mario Quintana.');
    const kept = await pendingAlert('Avenida Ipiranga', 'Poste inclinado com a luminária apagada.');
    const pair = [await pendingAlert('Rua da República', 'Lâmpada queimada perto do bar.'), await pendingAlert('Rua Lima e Silva', 'Lâmpada queimada na esquina da República.')];
    const onOrder = await pendingAlert('Avenida Osvaldo Aranha', 'Luminária apagada em frente ao Parque da Redenção.');
    const order = await lumen.admin(poa.token, 'POST', `/api/admin/alerts/${onOrder.id}/create-order`, { teamId: poa.teamId });
    expect(order.status).toBe(201);
    const me = await openPage(browser, lumen.baseUrl, { as: poa.admin, viewport: DESKTOP });
    const page = me.page;

    // A discard, confirmed with its note: "Desfazer" is offered with the seconds left.
    await page.goto(`${lumen.baseUrl}/console/alerts/${discarded.id}`);
    await page.getByTestId('triage').waitFor();
    await page.getByTestId('discard-note').fill('Mesmo poste do protocolo anterior; já há equipe a caminho do viaduto.');
    await page.getByTestId('discard').click();
    await page.getByTestId('discard-yes').click();
    await toast(page, 'ok', /Alerta nº \d+ descartado\./);
    const offer = page.getByTestId('undo-offer');
    await offer.waitFor();
    expect(await offer.innerText()).toMatch(/Você pode desfazer por \d+ s/);
    expect(await offer.innerText()).toContain('Até lá o parceiro não é avisado.');
    expect((await lumen.admin(poa.token, 'GET', `/api/admin/alerts/${discarded.id}`)).body.status).toBe('Cancelled');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'undo');
    await page.setViewportSize(PHONE);
    await noSidewaysScroll(page);
    await page.setViewportSize(DESKTOP);
    await page.getByTestId('undo').click();
    await toast(page, 'ok', 'Ação desfeita; o parceiro não foi avisado.');
    const back = (await lumen.admin(poa.token, 'GET', `/api/admin/alerts/${discarded.id}`)).body;
    expect(back).toMatchObject({ status: 'Pending', cancelReason: null });
    await page.getByTestId('discard-note').waitFor();
    expect(await page.getByTestId('undo-offer').count()).toBe(0);
    await expect.poll(() => page.getByTestId('timeline').innerText()).toContain('desfeito a tempo; o parceiro não foi avisado');

    // A new order: the console goes on to the next alert; undone, the order is gone and the alert is back.
    await page.goto(`${lumen.baseUrl}/console/alerts/${ordered.id}`);
    await page.getByTestId('create-order').click();
    const created = await toast(page, 'ok', /Ordem OS-\d{4}-\d{5} criada/);
    const number = /OS-\d{4}-\d{5}/.exec(created)![0];
    const orderId = (await lumen.admin(poa.token, 'GET', `/api/admin/alerts/${ordered.id}`)).body.serviceOrder.id as string;
    await page.getByTestId('undo').click();
    await toast(page, 'ok', 'Ação desfeita; o parceiro não foi avisado.');
    await page.waitForURL(`${lumen.baseUrl}/console/alerts/${ordered.id}`);
    await page.getByTestId('create-order').waitFor();
    expect((await lumen.admin(poa.token, 'GET', `/api/admin/service-orders/${orderId}`)).status).toBe(404);
    expect((await lumen.admin(poa.token, 'GET', `/api/admin/alerts/${ordered.id}`)).body).toMatchObject({ status: 'Pending', serviceOrder: null });
    expect(number).toMatch(/^OS-/);

    // Two alerts discarded at once from the inbox, undone together.
    await page.goto(`${lumen.baseUrl}/console/inbox`);
    await page.getByTestId('inbox').waitFor();
    for (const a of pair) await page.locator(`.inbox-row[data-alert-id="${a.id}"] [data-testid="mark"]`).check();
    await page.getByTestId('bulk-action').selectOption('discard');
    await page.getByTestId('bulk-note').fill('Mesma lâmpada da Rua da República, já registrada.');
    await page.getByTestId('bulk-apply').click();
    await page.getByTestId('bulk-confirm-yes').click();
    await page.getByTestId('undo-offer').waitFor();
    for (const a of pair) expect((await lumen.admin(poa.token, 'GET', `/api/admin/alerts/${a.id}`)).body.status).toBe('Cancelled');
    await page.getByTestId('undo').click();
    await toast(page, 'ok', 'Ação desfeita; o parceiro não foi avisado.');
    for (const a of pair) expect((await lumen.admin(poa.token, 'GET', `/api/admin/alerts/${a.id}`)).body).toMatchObject({ status: 'Pending', cancelReason: null });
    await page.locator(`.inbox-row[data-alert-id="${pair[0]!.id}"]`).waitFor();

    // An order's cancellation, undone: the order is open again with its alert.
    await page.goto(`${lumen.baseUrl}/console/orders/${order.body.id}`);
    await page.getByTestId('order-note').fill('Aberta por engano: a luminária é do parque, não da via.');
    await page.getByTestId('cancel-order').click();
    await page.getByTestId('cancel-yes').click();
    await toast(page, 'ok', 'Ordem cancelada.');
    expect((await lumen.admin(poa.token, 'GET', `/api/admin/service-orders/${order.body.id}`)).body.status).toBe('CANCELLED');
    await page.getByTestId('undo').click();
    await toast(page, 'ok', 'Ação desfeita; o parceiro não foi avisado.');
    expect((await lumen.admin(poa.token, 'GET', `/api/admin/service-orders/${order.body.id}`)).body.status).toBe('ASSIGNED');
    expect((await lumen.admin(poa.token, 'GET', `/api/admin/alerts/${onOrder.id}`)).body.status).toBe('Linked');
    await page.getByTestId('cancel-order').waitFor();

    // In English, an action left alone: the offer goes after its seconds, then the partner hears of it.
    await page.getByTestId('language').selectOption('en');
    await page.goto(`${lumen.baseUrl}/console/alerts/${kept.id}`);
    await page.getByTestId('discard-note').fill('Reported twice by the same citizen; the first report stands.');
    await page.getByTestId('discard').click();
    await page.getByTestId('discard-yes').click();
    expect(await page.getByTestId('undo-offer').innerText()).toMatch(/You can undo this for \d+ s/);
    expect(receivedAbout(kept.id)).toEqual([]);
    await page.getByTestId('undo-offer').waitFor({ state: 'detached', timeout: 20_000 });
    await expect.poll(() => receivedAbout(kept.id).length, { timeout: 15_000 }).toBe(1);
    expect((JSON.parse(receivedAbout(kept.id)[0]!.raw.toString('utf8')) as { eventType: string }).eventType).toBe('Alert.Cancelled');
    // The undone ones never arrived (their windows ended before this one's).
    expect(receivedAbout(discarded.id)).toEqual([]);
    expect(receivedAbout(ordered.id)).toEqual([]);
    for (const a of pair) expect(receivedAbout(a.id)).toEqual([]);
    expect(receivedAbout(onOrder.id).map((r) => (JSON.parse(r.raw.toString('utf8')) as { eventType: string }).eventType)).toEqual(['ServiceOrder.Created']);
    expect(me.problems).toEqual([]);
  }, 120_000);
});
