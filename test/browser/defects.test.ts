/**
 * The operators' console where it used to mislead, in Chromium against a city far from
 * São Paulo with two partners: the inbox's partner-reason filter, the orders table's
 * deadlines, priority, status filter and sorting, the "partner problems" badge and the
 * way to a partner's delivery log (and what a viewer is offered there), a retried photo
 * URL showing what the retry found, and the reason-mapping table after a save.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { secretFile } from '../support/app.js';
import { launch, openPage, screenshots, seriousViolations } from './support/browser.js';
import { alertsOf, lampPng, makeCity, makeOperator, sendRequest, type City, type Person } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';

let lumen: Lumen;
let browser: Browser;
let city: City;
/** The city's second partner (its own key and code). */
let other: City;
let triager: Person;
let viewer: Person;
/** A photo host that fails until told to serve the photo. */
let photos: http.Server;
let photosUrl: string;
let photoWorks = false;

async function until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  photos = http.createServer((req, res) => {
    if (photoWorks) res.writeHead(200, { 'content-type': 'image/png' }).end(lampPng(64));
    else res.writeHead(503).end('busy');
  });
  await new Promise<void>((r) => photos.listen(0, '127.0.0.1', r));
  photosUrl = `http://127.0.0.1:${(photos.address() as AddressInfo).port}`;
  lumen = await startLumenForBrowser({ LUMEN_ATTACHMENT_RETRY_DELAY_MS: '0', LUMEN_ATTACHMENT_TOTAL_TIMEOUT_MS: '3000', LUMEN_ATTACHMENT_ATTEMPT_TIMEOUT_MS: '1000' });
  browser = await launch();
  city = await makeCity(lumen, { name: 'Porto Alegre', webhookUrl: 'https://hooks.portoalegre.rs.gov.example/lumen', code: 'PORTAL-CIDADAO-PORTO-ALEGRE-156' });
  const second = await lumen.cli(
    'partner',
    'create',
    '--tenant',
    city.tenantId,
    '--code',
    'APLICATIVO-ILUMINA-POA-COMUNIDADES',
    '--scopes',
    'canCreateAlerts',
    '--webhook-url',
    'https://ilumina.poa.example/webhooks/lumen',
    '--webhook-secret-file',
    secretFile('segredo-do-aplicativo-0123456789'),
  );
  other = { ...city, partnerCode: 'APLICATIVO-ILUMINA-POA-COMUNIDADES', apiKey: second.apiKey as string };
  triager = await makeOperator(lumen, { email: 'central.de.triagem.iluminacao@portoalegre.rs.gov.example', name: 'Central de Triagem da Iluminação de Porto Alegre', role: 'triager', tenantId: city.tenantId });
  viewer = await makeOperator(lumen, { email: 'ouvidoria.servicos.urbanos@portoalegre.rs.gov.example', name: 'Ouvidoria de Serviços Urbanos', role: 'viewer', tenantId: city.tenantId });
  const at = (i: number) => ({ street: 'Avenida Borges de Medeiros', latitude: -30.0346 + i * 0.0005, longitude: -51.2177 });
  await sendRequest(lumen, city, { ...at(0), reasonCode: 'LAMPADA_APAGADA', description: 'Lâmpada apagada em frente ao Mercado Público.' });
  await sendRequest(lumen, city, { ...at(1), reasonCode: 'LAMPADA_APAGADA', description: 'Lâmpada apagada na esquina da Rua dos Andradas.' });
  await sendRequest(lumen, city, { ...at(2), reasonCode: 'POSTE_CAIDO', description: 'Poste caído depois do temporal.' });
  await sendRequest(lumen, other, { ...at(3), reasonCode: 'ACESA_DE_DIA', description: 'Luminária acesa durante o dia inteiro.' });
  // A photo by URL the host refuses: after its attempts it waits as a failed URL.
  const res = await fetch(`${lumen.baseUrl}/api/external/service-orders`, {
    method: 'POST',
    headers: { 'x-api-key': city.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      protocolNumber: '156-FOTO-POA-1',
      assetType: 'POLE',
      requestedAt: new Date(Date.now() - 3_600_000).toISOString(),
      requester: { name: 'Maria da Graça Nogueira', phone: '+5551987654321' },
      lampType: 'LED',
      address: { street: 'Rua José do Patrocínio', number: '820', neighborhood: 'Cidade Baixa', latitude: -30.0412, longitude: -51.2239 },
      problem: { description: 'Poste piscando a noite toda, foto no link.' },
      attachments: [{ type: 'photo', url: `${photosUrl}/fotos/poste-piscando.png`, filename: 'poste-piscando.png', contentType: 'image/png' }],
    }),
  });
  expect(res.status).toBeLessThan(300);
  await until('the failed photo URL', async () => ((await lumen.admin(city.token, 'GET', `/api/admin/tenants/${city.tenantId}/attachment-failures`)).body.items as unknown[]).length === 1);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
  await new Promise((r) => photos?.close(r));
});

describe('console defects', () => {
  it('filters the inbox by the code the partner sent, and still lists every code of the city after a choice', async () => {
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: triager });
    await page.goto(`${lumen.baseUrl}/console/inbox`);
    const select = page.getByTestId('inbox-partner-reason');
    const options = async () => (await select.locator('option').allTextContents()).slice(1);
    await expect.poll(options).toEqual(['ACESA_DE_DIA', 'LAMPADA_APAGADA', 'POSTE_CAIDO']);
    await select.selectOption('LAMPADA_APAGADA');
    await page.waitForURL(/partnerReason=LAMPADA_APAGADA/);
    const rows = page.getByTestId('inbox').locator('[data-alert-id]');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await page.getByTestId('inbox').innerText()).toContain('Mercado Público');
    expect(await options()).toEqual(['ACESA_DE_DIA', 'LAMPADA_APAGADA', 'POSTE_CAIDO']);
    await select.selectOption('ACESA_DE_DIA');
    await expect.poll(() => rows.count()).toBe(1);
    // One partner chosen: its own codes only.
    await select.selectOption('');
    await page.getByRole('combobox', { name: 'Parceiro', exact: true }).selectOption(city.partnerCode);
    await expect.poll(options).toEqual(['LAMPADA_APAGADA', 'POSTE_CAIDO']);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('says an overdue order is overdue in words, shows its priority and alerts, filters by status and sorts by the headers', async () => {
    const pending = await alertsOf(lumen, city);
    const lamp = pending.filter((a) => a.partnerReasonCode === 'LAMPADA_APAGADA');
    const late = await lumen.admin(city.token, 'POST', `/api/admin/alerts/${lamp[0].id}/create-order`, {});
    expect((await lumen.admin(city.token, 'POST', `/api/admin/alerts/${lamp[1].id}/link`, { serviceOrderId: late.body.id })).status).toBe(200);
    const onTime = await lumen.admin(city.token, 'POST', `/api/admin/alerts/${pending.find((a) => a.partnerReasonCode === 'POSTE_CAIDO').id}/create-order`, {});
    const db = new pg.Client({ connectionString: lumen.databaseUrl });
    await db.connect();
    await db.query(`UPDATE service_order SET sla_due_at = now() - interval '5 hours' WHERE id = $1`, [late.body.id]);
    await db.end();

    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: triager });
    await page.goto(`${lumen.baseUrl}/console/orders?view=table`);
    const table = page.getByTestId('orders-table');
    const row = (number: string) => table.locator('tbody tr').filter({ hasText: number });
    await row(late.body.number).waitFor();
    expect(await row(late.body.number).getByTestId('order-due').innerText()).toBe('atrasada há 5 h');
    expect(await row(onTime.body.number).getByTestId('order-due').innerText()).toMatch(/^vence em \d+ (h|d|min)$/);
    expect(await row(late.body.number).innerText()).toContain('2 alertas');
    expect(await row(onTime.body.number).innerText()).toContain('1 alerta');
    expect(await table.locator('thead').innerText()).toMatch(/Prioridade[\s\S]*Alertas/i);
    expect(await row(late.body.number).innerText()).toMatch(/Baixa|Média|Alta|Crítica/);
    // Sorted by deadline (the default): the late order first; by number: newest first.
    expect(await table.locator('th[aria-sort="ascending"]').textContent()).toContain('Prazo');
    await expect.poll(() => table.locator('tbody tr').first().innerText()).toContain(late.body.number);
    await page.getByTestId('orders-sort-opened').click();
    await page.waitForURL(/sort=opened/);
    await expect.poll(() => table.locator('tbody tr').first().innerText()).toContain(onTime.body.number);
    expect(await table.locator('th[aria-sort="descending"]').textContent()).toContain('Nº');
    await page.getByTestId('orders-sort-priority').click();
    await page.waitForURL(/sort=priority/);
    // The status filter: none completed; both open.
    await page.getByTestId('orders-status').selectOption('COMPLETED');
    await page.getByText('Nenhuma ordem.').waitFor();
    await page.getByTestId('orders-status').selectOption('OPEN');
    await expect.poll(() => table.locator('tbody tr').count()).toBe(2);
    const text = await page.locator('main').innerText();
    for (const raw of ['OPEN', 'Critical', 'undefined', 'NaN']) expect(text).not.toContain(raw);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'orders-table');
    expect(problems).toEqual([]);
    await context.close();
  });

  it("leads a triager from the badge to the partner concerned and its dead deliveries; a viewer is offered no retry", async () => {
    // The orders' events go to a webhook nobody answers: they die after their retries.
    await until('a dead delivery', async () => ((await lumen.admin(city.token, 'GET', `/api/admin/partners/${city.partnerCode}/webhook-deliveries?status=dead`)).body.deliveries as unknown[]).length > 0, 60_000);
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: triager });
    await page.goto(`${lumen.baseUrl}/console/inbox`);
    await page.getByTestId('partner-problems').click();
    await page.waitForURL(/\/console\/partners\?problems=1/);
    const partners = page.getByTestId('partners');
    const concerned = partners.locator(`tr[data-partner="${city.partnerCode}"]`);
    await concerned.waitFor();
    await expect.poll(() => concerned.getByTestId('photos-count').innerText()).toBe('1');
    await concerned.getByTestId('dead-count').waitFor();
    expect(await partners.locator('tbody tr').count()).toBe(1);
    expect(await partners.locator('thead').innerText()).toMatch(/Entregas esgotadas[\s\S]*Itens recusados[\s\S]*Fotos que falharam/i);
    await screenshots(page, 'partners-problems');
    await concerned.getByTestId('dead-count').click();
    await page.waitForURL(/deliveries=dead/);
    expect(await page.getByTestId('delivery-status').inputValue()).toBe('dead');
    await page.locator('[data-testid="deliveries"] tr[data-status="dead"]').first().waitFor();
    await page.getByTestId('redeliver-dead').waitFor();
    expect(problems).toEqual([]);
    await context.close();

    const asViewer = await openPage(browser, lumen.baseUrl, { as: viewer });
    await asViewer.page.goto(`${lumen.baseUrl}/console/partners/${city.partnerCode}`);
    await asViewer.page.getByTestId('attachment-failures').waitFor();
    expect(await asViewer.page.getByRole('button', { name: 'Tentar de novo' }).count()).toBe(0);
    expect(await asViewer.page.getByRole('button', { name: 'Dispensar' }).count()).toBe(0);
    expect(await asViewer.page.getByTestId('redeliver-dead').count()).toBe(0);
    expect(await asViewer.page.getByRole('link', { name: 'Parceiros' }).count()).toBe(0);
    expect(asViewer.problems).toEqual([]);
    await asViewer.context.close();
  });

  it('shows what a retried photo URL found: failed again with more attempts, then stored', async () => {
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: triager });
    await page.goto(`${lumen.baseUrl}/console/partners/${city.partnerCode}`);
    const row = page.getByTestId('attachment-failures').locator('tbody tr').first();
    await row.waitFor();
    const before = Number(await row.getByTestId('failure-attempts').innerText());
    expect(await row.getByTestId('failure-retried').innerText()).toBe('—');
    await row.getByRole('button', { name: 'Tentar de novo' }).click();
    await page.getByTestId('toast-ok').filter({ hasText: /Falhou de novo/ }).waitFor();
    await expect.poll(() => row.getByTestId('failure-retried').innerText()).toMatch(/^falhou de novo em .*\d/);
    expect(Number(await row.getByTestId('failure-attempts').innerText())).toBeGreaterThan(before);
    photoWorks = true;
    await row.getByRole('button', { name: 'Tentar de novo' }).click();
    await page.getByTestId('toast-ok').filter({ hasText: 'A foto foi baixada e guardada.' }).waitFor();
    await expect.poll(() => row.getByTestId('failure-result').innerText()).toBe('Foto guardada');
    expect(await row.getByTestId('failure-retried').innerText()).toMatch(/^guardada em .*\d/);
    expect(await row.getByRole('button', { name: 'Tentar de novo' }).count()).toBe(0);
    await screenshots(page, 'partner-retried');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('shows what a retried refused item found, when, and how many times it was seen', async () => {
    const code = 'CONSULTA-PEDIDOS-PORTO-ALEGRE-156';
    const made = await lumen.cli('partner', 'create', '--tenant', city.tenantId, '--code', code, '--scopes', 'canCreateAlerts', '--transport', 'polling', '--polling-url', 'http://127.0.0.1:9/pedidos', '--polling-key-file', secretFile('chave-de-consulta-0123456789'));
    // An item the partner's endpoint returned and intake refused (no asset type, no address).
    const item = { protocolNumber: '156-RECUSADO-POA-1' };
    const db = new pg.Client({ connectionString: lumen.databaseUrl });
    await db.connect();
    const inserted = await db.query<{ id: string }>(
      `INSERT INTO rejected_inbound_item (external_system_id, tenant_id, protocol_number, item, item_hash, problem_code, reasons)
       VALUES ($1, $2, $3, $4, $5, 'validation-failed', $6) RETURNING id`,
      [made.id, city.tenantId, item.protocolNumber, JSON.stringify(item), createHash('sha256').update(JSON.stringify(item)).digest(), JSON.stringify([{ pointer: '/assetType', message: 'obrigatório' }])],
    );
    await db.end();
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: triager });
    await page.goto(`${lumen.baseUrl}/console/partners/${code}`);
    const li = page.locator(`[data-item="${inserted.rows[0]!.id}"]`);
    await li.waitFor();
    expect(await li.getByTestId('rejected-seen').innerText()).toBe('recebido 1 vez');
    expect(await li.getByTestId('rejected-retried').count()).toBe(0);
    await li.getByRole('button', { name: 'Tentar de novo' }).click();
    await page.getByTestId('toast-ok').filter({ hasText: /Recusado de novo|O item foi aceito/ }).waitFor();
    await expect.poll(() => li.getByTestId('rejected-retried').innerText()).toMatch(/^(recusado de novo|aceito) em .*\d/);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('keeps the reason-mapping rows in place after a save; apply is the main action only while something would change', async () => {
    expect((await lumen.admin(city.token, 'POST', `/api/admin/tenants/${city.tenantId}/reasons`, { code: 'POLE_DOWN', namePt: 'Poste caído', nameEn: 'Pole down', priority: 'Critical', slaHours: 4 })).status).toBe(201);
    await sendRequest(lumen, city, { reasonCode: 'POSTE_CAIDO', street: 'Avenida Ipiranga', latitude: -30.0515, longitude: -51.2123, description: 'Outro poste caído na Avenida Ipiranga.' });
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: city.admin });
    await page.goto(`${lumen.baseUrl}/console/partners/${city.partnerCode}`);
    const table = page.getByTestId('reason-mapping');
    const order = () => table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-code')));
    await table.locator('tr[data-code="POSTE_CAIDO"]').waitFor();
    const first = await order();
    expect(first).toEqual(['LAMPADA_APAGADA', 'POSTE_CAIDO']);
    const row = table.locator('tr[data-code="POSTE_CAIDO"]');
    await row.getByTestId('mapping-select-input').fill('POLE_DOWN');
    // The city's reasons arrive after the page: Enter picks the first one shown.
    await row.getByTestId('mapping-select').locator('[role="option"]').first().waitFor();
    await row.getByTestId('mapping-select-input').press('Enter');
    await row.getByTestId('mapping-save').click();
    await page.getByTestId('toast-ok').filter({ hasText: 'Mapeamento de POSTE_CAIDO salvo.' }).waitFor();
    const apply = row.getByTestId('mapping-apply');
    await apply.waitFor();
    expect(await order()).toEqual(first);
    expect(await apply.getAttribute('class')).not.toContain('secondary');
    expect(await apply.isDisabled()).toBe(false);
    await apply.click();
    await page.getByTestId('toast-ok').filter({ hasText: /reclassificad/ }).waitFor();
    await expect.poll(() => apply.isDisabled()).toBe(true);
    expect(await apply.getAttribute('class')).toContain('secondary');
    expect(await order()).toEqual(first);
    expect(problems).toEqual([]);
    await context.close();
  });
});
