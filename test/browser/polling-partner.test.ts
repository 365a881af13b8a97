/**
 * A partner Lumen polls, in Curitiba (issue 23 defect 8 and §2): its page shows and lets a
 * city-admin edit the polling URL, the interval and the write-only polling key, without
 * the webhook fields or redelivery; the key set there is the one Lumen then sends to the
 * partner's endpoint (a real one on loopback). The items that endpoint returned and
 * intake refused show what the citizen sent and why, in words; the operator corrects
 * one and accepts it (it becomes an alert) and dismisses another with a reason.
 * Screenshots docs/console/polling-partner-{desktop,phone}.png and rejected-item-desktop.png.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { secretFile } from '../support/app.js';
import { DESKTOP, launch, noSidewaysScroll, openPage, PHONE, screenshots, SCREENSHOTS, seriousViolations, toast } from './support/browser.js';
import { makeCity, type City } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';
import { request, startPartnerStub, type PartnerStub } from '../polling/support.js';

const CODE = 'CONSULTA-156-CURITIBA-PREFEITURA-MUNICIPAL';
const CURITIBA = { latitude: -25.4296, longitude: -49.2719 };
const NEW_KEY = 'chave-emitida-pelo-portal-156-curitiba-2026';

let lumen: Lumen;
let browser: Browser;
let city: City;
let stub: PartnerStub;

// The citizen left the street and the description empty; another request is about a tree.
const empty = request('CWB-156-77001', '2026-11-26T10:00:01.000Z', {
  address: { street: '', number: '1020', neighborhood: 'Centro Cívico', ...CURITIBA },
  problem: { description: '' },
  requester: { name: 'Rosângela Aparecida Kowalski Wisniewski', phone: '+5541998761234' },
});
const tree = request('CWB-156-77002', '2026-11-26T10:00:02.000Z', { assetType: 'TREE', address: { street: 'Rua Mateus Leme', ...CURITIBA }, problem: { description: 'Galho de árvore caído sobre a fiação.' } });

beforeAll(async () => {
  stub = await startPartnerStub(() => ({ json: { items: [empty, tree], nextSince: '2026-11-26T10:00:02.000Z' } }));
  lumen = await startLumenForBrowser();
  browser = await launch();
  city = await makeCity(lumen, { name: 'Curitiba', webhookUrl: 'https://hooks.curitiba.pr.gov.example/lumen', code: 'PORTAL-156-CURITIBA' });
  await lumen.cli('partner', 'create', '--tenant', city.tenantId, '--code', CODE, '--scopes', 'canCreateAlerts', '--transport', 'polling', '--polling-url', 'http://127.0.0.1:9/pedidos', '--polling-key-file', secretFile('chave-antiga-0123456789'));
});
afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
  await stub?.close();
});

describe("a polling partner's page", () => {
  it('shows and edits the polling URL, interval and key; refused items read in words, corrected and accepted, or dismissed', async () => {
    const { page, problems } = await openPage(browser, lumen.baseUrl, { as: city.admin, viewport: DESKTOP });
    await page.goto(`${lumen.baseUrl}/console/partners/${CODE}`);
    const settings = page.getByTestId('partner-settings');
    await settings.waitFor();
    expect(await page.getByTestId('polling-url').inputValue()).toBe('http://127.0.0.1:9/pedidos');
    expect(await page.getByTestId('polling-key-set').innerText()).toBe('definida');
    expect(await page.getByTestId('polling-key').inputValue()).toBe('');
    for (const webhookOnly of ['webhook-url', 'redeliver-dead', 'deliveries', 'send-test-event', 'rotate-secret']) expect(await page.getByTestId(webhookOnly).count()).toBe(0);
    const text = await page.locator('main').innerText();
    expect(text).not.toContain('Entregas de webhook');
    expect(text).not.toContain('Reenviar todas as que desistiram');
    expect(text).toContain('URL de consulta do parceiro');
    expect(await page.getByTestId('polling-active').innerText()).toBe('sim');

    // The city-admin points it at the partner's real endpoint, every 45 s, with the partner's new key.
    await page.getByTestId('polling-url').fill(stub.url);
    await page.getByTestId('polling-interval').fill('45');
    await page.getByTestId('polling-key').fill(NEW_KEY);
    await settings.getByRole('button', { name: 'Salvar' }).click();
    await toast(page, 'ok', 'Configuração salva.');
    const saved = (await lumen.admin(city.token, 'GET', `/api/admin/partners/${CODE}`)).body;
    expect(saved).toMatchObject({ pollingUrl: stub.url, pollingIntervalSeconds: 45, pollingKeySet: true, transport: 'polling' });
    expect(await page.getByTestId('polling-key').inputValue()).toBe('');
    expect(await page.getByTestId('polling-url-shown').innerText()).toBe(stub.url);
    await screenshots(page, 'polling-partner');
    await page.setViewportSize(PHONE);
    await noSidewaysScroll(page);
    await page.setViewportSize(DESKTOP);

    // Lumen polls with the key set here; intake refuses both items.
    await page.getByRole('button', { name: 'Consultar agora' }).click();
    await expect.poll(() => stub.calls.map((c) => c.apiKey), { timeout: 20_000 }).toContain(NEW_KEY);
    await expect.poll(async () => (await lumen.admin(city.token, 'GET', `/api/admin/partners/${CODE}/rejected-inbound-items?status=open`)).body.total, { timeout: 20_000 }).toBe(2);
    const items = (await lumen.admin(city.token, 'GET', `/api/admin/partners/${CODE}/rejected-inbound-items?status=open`)).body.items as { id: string; protocolNumber: string }[];
    const emptyId = items.find((i) => i.protocolNumber === 'CWB-156-77001')!.id;
    const treeId = items.find((i) => i.protocolNumber === 'CWB-156-77002')!.id;
    await page.reload();
    const li = page.locator(`[data-item="${emptyId}"]`);
    await li.waitFor();
    const sent = await li.getByTestId('rejected-sent').innerText();
    expect(sent).toContain('+5541998761234');
    expect(sent).toContain('1020 — Centro Cívico');
    expect(sent).toContain('(vazio)');
    expect(sent).toContain('-25.4296, -49.2719');
    const why = await li.getByTestId('rejected-why').innerText();
    expect(why).toContain('Dados do pedido incompletos ou inválidos');
    expect(why).toContain('Rua: está vazio');
    expect(why).toContain('Descrição: está vazio');
    expect(why).not.toMatch(/\/address|\/problem|validation-failed|must/);
    const treeWhy = await page.locator(`[data-item="${treeId}"] [data-testid="rejected-why"]`).innerText();
    expect(treeWhy).toContain('Tipo de ativo: não é válido');

    // Corrected and accepted: it becomes an alert of the partner.
    await li.getByTestId('rejected-correct').click();
    await li.getByTestId('fix-street').fill('Avenida Cândido de Abreu');
    await li.getByTestId('fix-description').fill('Três postes apagados em frente ao Palácio Iguaçu.');
    await li.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'rejected-item-desktop.png') });
    expect(await seriousViolations(page)).toEqual([]);
    await li.getByTestId('rejected-accept').click();
    await toast(page, 'ok', 'Pedido aceito; virou um alerta.');
    await expect.poll(() => li.getByTestId('rejected-retried').innerText()).toMatch(/^aceito em .*\d/);
    const alerts = (await lumen.admin(city.token, 'GET', `/api/admin/alerts?tenantId=${city.tenantId}&text=CWB-156-77001`)).body.items as { description: string; address: { street: string } }[];
    expect(alerts).toHaveLength(1);
    expect(alerts[0]!.description).toBe('Três postes apagados em frente ao Palácio Iguaçu.');

    // The other one is dismissed with a reason.
    const other = page.locator(`[data-item="${treeId}"]`);
    await other.getByTestId('rejected-dismiss').click();
    expect(await other.getByTestId('rejected-dismiss-yes').isDisabled()).toBe(true);
    await other.getByTestId('rejected-dismiss-reason').fill('Árvore: encaminhado à Secretaria do Meio Ambiente.');
    await other.getByTestId('rejected-dismiss-yes').click();
    await toast(page, 'ok', 'Item dispensado.');
    await other.waitFor({ state: 'detached' });
    const dismissed = (await lumen.admin(city.token, 'GET', `/api/admin/partners/${CODE}/rejected-inbound-items?status=all`)).body.items.find((i: { id: string }) => i.id === treeId);
    expect(dismissed).toMatchObject({ dismissReason: 'Árvore: encaminhado à Secretaria do Meio Ambiente.', dismissedAt: expect.any(String) });

    // English: the same page in the operator's other language.
    await page.getByTestId('language').selectOption('en');
    await page.getByText("Partner's polling URL").first().waitFor();
    expect(await page.getByTestId('polling-key-set').innerText()).toBe('set');
    await page.setViewportSize(PHONE);
    await noSidewaysScroll(page);
    expect(problems).toEqual([]);
  });
});
