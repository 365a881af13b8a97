/**
 * The operators' console in Chromium against a real Lumen and database, with a real
 * loopback partner receiver. Each page is checked with axe-core and photographed at a
 * desktop and a phone width into docs/console/.
 */
import { createHmac } from 'node:crypto';
import pg from 'pg';
import type { Browser } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStub, type StubServer } from '../intake/support.js';
import { launch, openPage, screenshots, seriousViolations, signIn } from './support/browser.js';
import { alertsOf, importPoles, lampPng, makeCity, makeOperator, sendRequest, type City } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';

let lumen: Lumen;
let browser: Browser;
let receiver: StubServer;
let receiverStatus = 200;
let city: City;

beforeAll(async () => {
  receiver = await startStub((_req, res) => {
    res.writeHead(receiverStatus).end();
  });
  [lumen, browser] = await Promise.all([startLumenForBrowser(), launch()]);
  city = await makeCity(lumen, { name: 'São Paulo', webhookUrl: `${receiver.url}/hook`, code: 'PORTAL-156-SP' });
  await importPoles(lumen, city);
});

afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
  await receiver?.close();
});

function events(type?: string): any[] {
  return receiver.requests.filter((r) => r.url === '/hook').map((r) => JSON.parse(r.body.toString('utf8'))).filter((e) => !type || e.eventType === type);
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the console', () => {
  it('serves the page with its protections, and the same page for every client route', async () => {
    for (const p of ['/console', '/console/', '/console/inbox', '/console/alerts/123', '/console/partners/X/y']) {
      const res = await fetch(`${lumen.baseUrl}${p}`);
      expect(res.status, p).toBe(200);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).toContain("frame-ancestors 'none'");
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      const html = await res.text();
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    }
    expect((await fetch(`${lumen.baseUrl}/console/assets/nothing.js`)).status).toBe(404);
  });

  it('sign in and out with e-mail and password: a wrong password shows the problem, a deep link survives the sign-in', async () => {
    const { page, problems, context } = await openPage(browser, lumen.baseUrl);
    await page.goto(`${lumen.baseUrl}/console/teams`);
    await page.getByRole('heading', { name: 'Entrar no Lumen' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'sign-in');
    await page.locator('input[name="email"]').fill(city.admin.email);
    await page.locator('input[name="password"]').fill('not-the-password');
    await page.locator('form button[type="submit"]').click();
    await page.getByTestId('signin-error').waitFor();
    await page.locator('input[name="password"]').fill(city.admin.password);
    await page.locator('form button[type="submit"]').click();
    await page.getByTestId('teams').waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/teams');
    const cookies = await context.cookies();
    expect(cookies.find((c) => c.name === 'lumen_session')).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(await page.evaluate('document.cookie')).not.toContain('lumen_session');
    await page.getByRole('button', { name: 'Sair' }).click();
    await page.getByRole('heading', { name: 'Entrar no Lumen' }).waitFor();
    await page.goto(`${lumen.baseUrl}/console/inbox`);
    await page.getByRole('heading', { name: 'Entrar no Lumen' }).waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a viewer sees no action buttons, and the API refuses the action anyway', async () => {
    await sendRequest(lumen, city, { description: 'Visto por quem só lê' });
    const alert = (await alertsOf(lumen, city)).find((a) => a.description === 'Visto por quem só lê')!;
    const viewer = await makeOperator(lumen, { email: 'leitura@sp.example', name: 'Vera Leitura', role: 'viewer', tenantId: city.tenantId });
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: viewer });
    await page.goto(`${lumen.baseUrl}/console/alerts/${alert.id}`);
    await page.getByTestId('alert-details').waitFor();
    await page.getByTestId('timeline').or(page.getByText('Sem registros.')).first().waitFor();
    expect(await page.getByTestId('triage').count()).toBe(0);
    expect(await page.getByTestId('set-location').count()).toBe(0);
    expect(await page.locator('main button').count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Parceiros' }).count()).toBe(0);
    expect(await page.getByTestId('role').textContent()).toBe('leitura');
    // The console is not the guard: the session itself may not discard.
    const session = await context.request.get(`${lumen.baseUrl}/api/admin/session`);
    const csrf = ((await session.json()) as { csrfToken: string }).csrfToken;
    const refused = await context.request.post(`${lumen.baseUrl}/api/admin/alerts/${alert.id}/discard`, { data: {}, headers: { origin: lumen.baseUrl, 'x-csrf-token': csrf } });
    expect(refused.status()).toBe(403);
    expect((await alertsOf(lumen, city)).some((a) => a.id === alert.id)).toBe(true);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('the inbox lists Pending alerts; j/k and Enter open one', async () => {
    // Away from the earlier tests' spot on Rua Augusta: Pending alerts on one spot are one group in the inbox.
    const withPhoto = await sendRequest(lumen, city, { latitude: -23.5612, longitude: -46.6558, description: 'Poste apagado na esquina', photos: [{ filename: 'poste.png', png: lampPng() }] });
    expect(withPhoto.body.alert.attachments[0].success, JSON.stringify(withPhoto.body)).toBe(true);
    await sendRequest(lumen, city, { description: 'Lâmpada piscando a noite toda', noLocation: true, street: 'Rua Sem Número' });
    // One of them past its deadline by three hours.
    const late = (await alertsOf(lumen, city)).find((a) => a.description === 'Lâmpada piscando a noite toda')!;
    const db = new pg.Client({ connectionString: lumen.databaseUrl });
    await db.connect();
    await db.query(`UPDATE alert SET sla_due_at = now() - interval '3 hours' WHERE id = $1`, [late.id]);
    await db.end();
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: city.admin });
    await page.goto(`${lumen.baseUrl}/console/`);
    await page.getByTestId('inbox').waitFor();
    await page.getByText('Lâmpada piscando a noite toda').waitFor();
    // The photo's thumbnail comes from the admin API with the session cookie.
    const thumb = page.locator('img.thumb[alt="poste.png"]');
    await thumb.waitFor();
    await expect.poll(() => thumb.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(96);
    // Each row says in words how long ago it came and how long is left (the city's 24 h deadline).
    const row = page.getByTestId('inbox').locator('li', { hasText: 'Poste apagado na esquina' });
    expect(await row.innerText()).toMatch(/recebido há \d+ min[\s\S]*prazo em (24 h|23 h)/);
    const lateRow = page.getByTestId('inbox').locator('li', { hasText: 'Lâmpada piscando a noite toda' });
    expect(await lateRow.innerText()).toMatch(/recebido há \d+ min[\s\S]*atrasado há 3 h/);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'inbox');
    // Most urgent first, then by age: move to the second row and open it.
    const second = await page.locator('.inbox-row').nth(1).getAttribute('data-alert-id');
    // j then Enter at once, as a fast operator types them: Enter opens the row j moved to.
    await page.keyboard.press('j');
    await page.keyboard.press('Enter');
    await page.getByTestId('alert-details').waitFor();
    expect(new URL(page.url()).pathname).toBe(`/console/alerts/${second}`);
    expect(new URL(page.url()).pathname).toMatch(/^\/console\/alerts\/[0-9a-f-]{36}$/);
    await page.goBack();
    await page.getByTestId('inbox').waitFor();
    // Back on the inbox, the row opened is still the focused one; j goes on from there.
    await page.locator(`.inbox-row[data-alert-id="${second}"][aria-current="true"]`).waitFor();
    const third = await page.locator('.inbox-row').nth(2).getAttribute('data-alert-id');
    await page.keyboard.press('j');
    await page.locator(`.inbox-row[data-alert-id="${third}"][aria-current="true"]`).waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });

  it('the working day: locate on the map, pick a pole, create an order, link the suggested duplicate, start, complete with a note that reaches the partner', { timeout: 120_000 }, async () => {
    await sendRequest(lumen, city, { description: 'Poste 4471 apagado', noLocation: true, street: 'Rua da Consolação' });
    const pending = await alertsOf(lumen, city);
    const lost = pending.find((a) => a.description === 'Poste 4471 apagado')!;
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: city.admin });

    await page.goto(`${lumen.baseUrl}/console/alerts/${lost.id}`);
    await page.getByTestId('alert-details').waitFor();
    await page.getByText('Sem localização: clique no mapa').waitFor();
    // A click on the map picks a point; typed coordinates move it to the exact spot.
    await page.getByTestId('map').click({ position: { x: 200, y: 150 } });
    await page.getByTestId('set-location').waitFor();
    await page.getByText('Digitar as coordenadas').click();
    await page.getByRole('spinbutton', { name: 'Latitude' }).fill('-23.5573');
    await page.getByRole('spinbutton', { name: 'Longitude' }).fill('-46.6602');
    await page.getByRole('button', { name: 'Marcar no mapa' }).click();
    await page.getByTestId('set-location').click();
    await page.getByTestId('toast-ok').filter({ hasText: 'Localização gravada.' }).waitFor();
    const located = (await lumen.admin(city.token, 'GET', `/api/admin/alerts/${lost.id}`)).body;
    expect([located.geolocated, located.locationSource, located.latitude]).toEqual([true, 'operator', -23.5573]);

    // The poles around the new location, with their telegestor state; a click picks one.
    const poleMarker = page.locator('path.marker-pole-unknown');
    await poleMarker.first().waitFor();
    expect(await poleMarker.count()).toBeGreaterThan(1);
    await poleMarker.last().click({ force: true });
    const picked = (await page.getByTestId('picked-pole').locator('strong').textContent())!;
    expect(picked).toMatch(/^AUG-/);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'alert');

    await page.getByTestId('create-team').selectOption(city.teamId);
    await page.getByTestId('create-order').click();
    // The toast names the new order and links to it (the page moves on to the next alert).
    await page.getByTestId('toast-ok').filter({ hasText: /^Ordem OS-\d{4}-\d{5} criada para o alerta/ }).getByRole('link').click();
    await page.getByTestId('order-details').waitFor();
    const orderId = new URL(page.url()).pathname.split('/').pop()!;
    const order = (await lumen.admin(city.token, 'GET', `/api/admin/service-orders/${orderId}`)).body;
    expect(order.status).toBe('ASSIGNED');
    const poles = (await lumen.admin(city.token, 'GET', `/api/admin/tenants/${city.tenantId}/poles?near=-23.5573,-46.6602&radius=500`)).body.items as { id: string; code: string }[];
    expect(poles.find((p) => p.id === order.poleId)?.code).toBe(picked);
    await until('ServiceOrder.Created at the partner', () => events('ServiceOrder.Created').length >= 1 || undefined);

    // A neighbour reports the same lamp: the alert page suggests the order, one click links it.
    await sendRequest(lumen, city, { description: 'Mesmo poste apagado (vizinho)' });
    const dup = (await alertsOf(lumen, city)).find((a) => a.description === 'Mesmo poste apagado (vizinho)')!;
    await page.goto(`${lumen.baseUrl}/console/alerts/${dup.id}`);
    const suggestion = page.getByTestId('duplicates').locator('li').filter({ hasText: order.number });
    await suggestion.waitFor();
    await suggestion.getByRole('button', { name: 'Vincular' }).click();
    await page.getByTestId('toast-ok').filter({ hasText: `Alerta vinculado à ordem ${order.number}.` }).waitFor();

    await page.goto(`${lumen.baseUrl}/console/orders/${orderId}`);
    await page.getByTestId('order-alerts').getByText('Mesmo poste apagado (vizinho)').waitFor();
    await page.getByTestId('start').click();
    await page.getByTestId('toast-ok').filter({ hasText: 'Ordem iniciada.' }).waitFor();
    // Complete, at the top, leads to the one completion form (note, materials, photos).
    await page.getByTestId('complete').click();
    await expect.poll(() => page.evaluate<string>('document.activeElement?.dataset.testid ?? ""')).toBe('completion-note');
    await page.keyboard.type('Lâmpada trocada por LED 100 W.');
    await page.getByTestId('completion-submit').click();
    await page.getByTestId('toast-ok').filter({ hasText: 'Ordem concluída.' }).waitFor();
    await expect.poll(() => page.getByTestId('order-actions').count()).toBe(0);
    const completed = await until('ServiceOrder.Completed at the partner', () => {
      const e = events('ServiceOrder.Completed');
      return e.length >= 2 ? e : undefined;
    });
    expect(completed.map((e) => e.note)).toEqual(['Lâmpada trocada por LED 100 W.', 'Lâmpada trocada por LED 100 W.']);
    expect(completed.map((e) => e.alert.status).sort()).toEqual(['Resolved', 'Resolved']);
    await page.getByTestId('timeline').getByText('Lâmpada trocada por LED 100 W.').first().waitFor();
    // Two alerts, two events of each kind: each names its alert, so none reads as a repeat.
    for (const n of [lost.alertNumber, dup.alertNumber]) await page.getByTestId('timeline').getByText(`Evento ao parceiro ${city.partnerCode}: ordem concluída (alerta nº ${n})`).waitFor();
    // The assignment's note names the team once ('Equipe São Paulo 01', not 'equipe Equipe São Paulo 01').
    expect(await page.getByTestId('timeline').innerText()).toContain('Equipe São Paulo 01');
    expect(await page.getByTestId('timeline').innerText()).not.toMatch(/equipe Equipe/i);
    // Events sent: the order's own deliveries, read by order (not the partner's newest few), in words.
    const sent = page.getByTestId('deliveries');
    await expect.poll(() => sent.locator('tr[data-event-type="ServiceOrder.Completed"]').count(), { timeout: 15_000 }).toBe(2);
    expect(await sent.locator('tr[data-event-type="ServiceOrder.Created"]').count()).toBe(2);
    expect(await sent.innerText()).not.toMatch(/ServiceOrder\.|succeeded|pending/);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'order');

    await page.goto(`${lumen.baseUrl}/console/orders`);
    await page.getByTestId('orders-board').getByText(order.number).waitFor();
    await page.getByRole('button', { name: 'Tabela' }).click();
    await page.getByTestId('orders-table').getByText(order.number).waitFor();
    expect(new URL(page.url()).search).toBe('?view=table');
    await page.goBack();
    await page.getByTestId('orders-board').waitFor();
    await page.goForward();
    await page.getByTestId('orders-table').waitFor();
    await page.goBack();
    await page.getByTestId('orders-board').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'orders');
    // The city map shows every pole of the city at once, counted in clusters (the map's
    // own test is test/browser/city-map.test.ts).
    await sendRequest(lumen, city, { description: 'Outro poste da Augusta' });
    await page.goto(`${lumen.baseUrl}/console/map`);
    await page.getByTestId('map').waitFor();
    await page.locator('.pole-cluster, path.pole-dot').first().waitFor();
    await expect.poll(async () => Number(await page.getByTestId('citymap-total').innerText())).toBeGreaterThan(0);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'map');
    expect(problems).toEqual([]);
    await context.close();
  });

  it("a city-admin adds a reason, maps the partner's code to it and applies it to the waiting alerts", async () => {
    await sendRequest(lumen, city, { description: 'Código do parceiro sem mapeamento', reasonCode: 'LAMP-OFF' });
    const alert = (await alertsOf(lumen, city)).find((a) => a.description === 'Código do parceiro sem mapeamento')!;
    expect(alert.reasonCode).toBe('EXTERNAL_OTHER');
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: city.admin });
    await page.goto(`${lumen.baseUrl}/console/teams`);
    await page.getByTestId('reason-code').fill('LAMP_OUT');
    await page.getByTestId('reason-name-pt').fill('Lâmpada apagada');
    await page.getByTestId('reason-name-en').fill('Lamp out');
    await page.getByRole('button', { name: 'Adicionar motivo' }).click();
    await page.getByTestId('reasons').getByText('LAMP_OUT').waitFor();
    await page.goto(`${lumen.baseUrl}/console/partners/${city.partnerCode}`);
    const row = page.locator('[data-testid="reason-mapping"] tr[data-code="LAMP-OFF"]');
    await row.waitFor();
    await row.getByTestId('mapping-select-input').fill('LAMP_OUT');
    // The city's reasons arrive after the page (the first option, "no reason", is there
    // before them): Enter picks the reason found once it is shown.
    await row.getByTestId('mapping-select').getByRole('option', { name: /\(LAMP_OUT\)/ }).waitFor();
    await row.getByTestId('mapping-select-input').press('Enter');
    await row.getByTestId('mapping-save').click();
    await page.getByTestId('toast-ok').filter({ hasText: 'Mapeamento de LAMP-OFF salvo.' }).waitFor();
    await row.getByTestId('mapping-apply').click();
    await page.getByTestId('toast-ok').filter({ hasText: '1 alerta reclassificado.' }).waitFor();
    expect((await lumen.admin(city.token, 'GET', `/api/admin/alerts/${alert.id}`)).body.reasonCode).toBe('LAMP_OUT');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a failed action shows the problem; discarding sends the note to the partner', async () => {
    await sendRequest(lumen, city, { description: 'Trote: endereço inexistente' });
    const alert = (await alertsOf(lumen, city)).find((a) => a.description === 'Trote: endereço inexistente')!;
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: city.admin });
    await page.goto(`${lumen.baseUrl}/console/alerts/${alert.id}`);
    await page.getByTestId('triage').waitFor();
    // An order the city does not have: the problem, and the alert stays.
    await page.getByTestId('link-order').fill('OS-1999-99999');
    await page.getByTestId('link').click();
    const error = page.getByTestId('toast-error');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/OS-1999-99999|ordem/i);
    await page.getByTestId('discard-note').fill('Endereço não existe na cidade.');
    await page.getByTestId('discard').click();
    await page.getByTestId('discard-yes').click();
    await page.getByTestId('toast-ok').filter({ hasText: `Alerta nº ${alert.alertNumber} descartado.` }).waitFor();
    const cancelled = await until('Alert.Cancelled at the partner', () => events('Alert.Cancelled').find((e) => e.protocolNumber === alert.protocolNumber));
    expect(cancelled.note).toBe('Endereço não existe na cidade.');
    expect((await lumen.admin(city.token, 'GET', `/api/admin/alerts/${alert.id}`)).body.status).toBe('Cancelled');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a city-admin sends a test event: the receiver gets a signed Test.Ping and the delivery log shows it succeeded; a triager has no such button', async () => {
    const triager = await makeOperator(lumen, { email: 'triagem@sp.example', name: 'Tiago Triagem', role: 'triager', tenantId: city.tenantId });
    const asTriager = await openPage(browser, lumen.baseUrl, { as: triager });
    await asTriager.page.goto(`${lumen.baseUrl}/console/partners/${city.partnerCode}`);
    await asTriager.page.getByTestId('redeliver-dead').waitFor();
    expect(await asTriager.page.getByTestId('send-test-event').count()).toBe(0);
    expect(asTriager.problems).toEqual([]);
    await asTriager.context.close();

    const before = receiver.requests.length;
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: city.admin });
    await page.goto(`${lumen.baseUrl}/console/partners/${city.partnerCode}`);
    await page.getByTestId('partner-settings').waitFor();
    await page.getByTestId('send-test-event').click();
    await page.getByTestId('toast-ok').filter({ hasText: 'Evento de teste enviado' }).waitFor();
    const ping = await until('the Test.Ping at the receiver', () => receiver.requests.slice(before).find((r) => r.url === '/hook' && r.headers['x-lumen-event-type'] === 'Test.Ping'));
    const raw = ping.body.toString('utf8');
    const body = JSON.parse(raw) as { eventId: string; eventType: string; partnerCode: string };
    expect(body).toMatchObject({ eventType: 'Test.Ping', partnerCode: city.partnerCode });
    expect(ping.headers['x-lumen-signature']).toBe(`sha256=${createHmac('sha256', 'segredo-de-teste-0123456789').update(ping.body).digest('hex')}`);
    expect(new Webhook(`whsec_${Buffer.from('segredo-de-teste-0123456789').toString('base64')}`).verify(raw, ping.headers as Record<string, string>)).toMatchObject({ eventId: body.eventId });
    await page.locator('[data-testid="deliveries"] tr[data-event-type="Test.Ping"][data-status="succeeded"]').first().waitFor({ timeout: 20_000 });
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a city-admin rotates a key (the old one is refused at once) and redelivers dead deliveries once the receiver is back', async () => {
    receiverStatus = 503;
    await sendRequest(lumen, city, { description: 'Entrega que vai falhar' });
    const alert = (await alertsOf(lumen, city)).find((a) => a.description === 'Entrega que vai falhar')!;
    expect((await lumen.admin(city.token, 'POST', `/api/admin/alerts/${alert.id}/discard`, {})).status).toBe(200);
    await until('a dead delivery', async () => {
      const log = await lumen.admin(city.token, 'GET', `/api/admin/partners/${city.partnerCode}/webhook-deliveries?status=dead`);
      return log.body.deliveries.length > 0 || undefined;
    });
    receiverStatus = 200;
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: city.admin });
    await page.goto(`${lumen.baseUrl}/console/partners`);
    await page.getByTestId('partners').getByRole('link', { name: city.partnerCode }).click();
    await page.getByTestId('partner-settings').waitFor();
    await page.getByTestId('delivery-status').selectOption('dead');
    const dead = page.locator('[data-testid="deliveries"] tr[data-status="dead"]');
    await dead.first().waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'partner');
    await page.getByTestId('redeliver-dead').click();
    await page.getByTestId('toast-ok').filter({ hasText: 'entregas reagendadas.' }).waitFor();
    await until('the redelivery delivered', async () => {
      const log = await lumen.admin(city.token, 'GET', `/api/admin/partners/${city.partnerCode}/webhook-deliveries?status=succeeded`);
      return log.body.deliveries.some((d: any) => d.redeliveryOf !== null) || undefined;
    });

    const oldKey = city.apiKey;
    await page.getByTestId('rotate-key').getByTestId('rotate').click();
    await page.getByTestId('rotate-key').getByTestId('rotate-confirm').click();
    const newKey = (await page.getByTestId('rotate-key').getByTestId('new-secret').textContent())!;
    expect(newKey).toMatch(/^lmn_(live|test)_/);
    const probe = (key: string) => fetch(`${lumen.baseUrl}/api/external/health`, { headers: { 'x-api-key': key } }).then((r) => r.status);
    expect(await probe(oldKey)).toBe(401);
    expect(await probe(newKey)).toBe(200);
    // Again, with an overlap: the key just issued keeps working for the hour chosen, and the page says until when.
    await page.reload();
    await page.getByTestId('partner-settings').waitFor();
    await page.getByTestId('rotate-key').getByTestId('rotate').click();
    await page.getByTestId('key-overlap').selectOption('3600');
    await page.getByTestId('rotate-key').getByText('continua funcionando pelo prazo escolhido').waitFor();
    await page.getByTestId('rotate-key').getByTestId('rotate-confirm').click();
    const overlapped = (await page.getByTestId('rotate-key').getByTestId('new-secret').textContent())!;
    expect(await probe(newKey)).toBe(200);
    expect(await probe(overlapped)).toBe(200);
    city.apiKey = overlapped;
    await page.getByTestId('rotate-secret').getByTestId('rotate').click();
    await page.getByTestId('rotate-secret').getByTestId('rotate-confirm').click();
    expect(await page.getByTestId('rotate-secret').getByTestId('new-secret').textContent()).toMatch(/^whsec_/);
    await page.reload();
    await page.getByTestId('partner-settings').waitFor();
    expect(await page.getByTestId('rotate-key').getByTestId('new-secret').count()).toBe(0); // shown once only
    expect(await page.getByTestId('previous-key').textContent()).toMatch(new RegExp(`^${newKey.slice(0, 17)}… funciona até \\d{2}/\\d{2}/\\d{4}`));
    expect(problems).toEqual([]);
    await context.close();
  });

  it('an alert that does not exist, or belongs to no city the operator can see, shows not found', async () => {
    const other = await makeCity(lumen, { name: 'Campinas', webhookUrl: `${receiver.url}/campinas`, code: 'PORTAL-156-CPS' });
    await sendRequest(lumen, other, { description: 'Pedido de Campinas' });
    const foreign = (await alertsOf(lumen, other))[0]!;
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: city.admin });
    expect(await page.getByTestId('tenant-switcher').locator('option').allTextContents()).toEqual(['São Paulo']);
    await page.goto(`${lumen.baseUrl}/console/alerts/${foreign.id}`);
    await page.getByTestId('not-found').waitFor();
    expect(await page.getByText('Pedido de Campinas').count()).toBe(0);
    await page.goto(`${lumen.baseUrl}/console/alerts/00000000-0000-4000-8000-000000000000`);
    await page.getByTestId('not-found').waitFor();
    await page.goto(`${lumen.baseUrl}/console/no-such-page`);
    await page.getByTestId('not-found').waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });

  it('partner-supplied text is shown as text: no script, handler or javascript: URL runs', async () => {
    const payloads = {
      description: '<script>window.__xss = 1; alert("xss")</script><img src=x onerror="window.__xss=2;alert(2)">',
      street: '<img src=x onerror=alert(3)>Rua',
      reference: 'javascript:alert(4)',
      requesterName: '\u202Eevil\u202C <svg onload=alert(5)>',
    };
    const sent = await sendRequest(lumen, city, { ...payloads, latitude: -23.5535, longitude: -46.6631, photos: [{ filename: '"><img src=x onerror=alert(6)>.png', png: lampPng(24) }] });
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    const alert = (await alertsOf(lumen, city)).find((a) => a.description === payloads.description)!;
    expect(alert, JSON.stringify((await alertsOf(lumen, city)).map((a) => a.description))).toBeDefined();
    const { page, problems, dialogs, context } = await openPage(browser, lumen.baseUrl, { as: city.admin });
    await page.goto(`${lumen.baseUrl}/console/inbox`);
    await page.getByTestId('inbox').getByText(payloads.description).waitFor();
    await page.goto(`${lumen.baseUrl}/console/alerts/${alert.id}`);
    await page.getByTestId('alert-details').getByText(payloads.description).waitFor();
    await page.getByTestId('alert-details').getByText('javascript:alert(4)').waitFor();
    expect(await page.getByTestId('photos').locator('img').getAttribute('alt')).toBe('"><img src=x onerror=alert(6)>.png');
    expect(await page.evaluate('window.__xss === undefined')).toBe(true);
    expect(await page.locator('main img[src="x"], main svg[onload], main a[href^="javascript:"]').count()).toBe(0);
    await page.goto(`${lumen.baseUrl}/console/map`);
    await page.getByTestId('map').waitFor();
    expect(dialogs).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('teams, audit and operators pages are accessible; English is one switch away', async () => {
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: city.admin });
    await page.goto(`${lumen.baseUrl}/console/teams`);
    await page.getByTestId('teams').waitFor();
    await page.getByTestId('team-name').fill('Equipe Noturna');
    await page.getByRole('button', { name: 'Salvar' }).click();
    await page.getByTestId('teams').getByText('Equipe Noturna').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'teams');
    await page.goto(`${lumen.baseUrl}/console/audit`);
    await page.getByTestId('audit').waitFor();
    // Every detail of the day's entries (redeliveries, the test event, a mapping applied, keys, teams) is named in words.
    await page.getByTestId('audit').getByText('Mapeamento de motivo aplicado aos pendentes').first().waitFor();
    expect(await page.getByTestId('audit').innerText()).not.toContain('Outro dado');
    // A team whose name says it is a team is not called 'Equipe Equipe Noturna'.
    expect(await page.getByTestId('audit').innerText()).toContain('Equipe criada · Equipe Noturna');
    expect(await page.getByTestId('audit').innerText()).not.toContain('Equipe Equipe');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'audit');
    await page.goto(`${lumen.baseUrl}/console/operators`);
    await page.getByRole('heading', { name: 'Operadores e tokens' }).waitFor();
    await page.getByTestId('tokens').or(page.getByText('Nenhum token.')).first().waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByTestId('language').selectOption('en');
    await page.getByRole('heading', { name: 'Operators and tokens' }).waitFor();
    expect(await page.evaluate('document.documentElement.lang')).toBe('en');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a platform admin sees every city and the operators', async () => {
    await lumen.cli('tenant', 'create', '--name', 'Santos');
    const root = await makeOperator(lumen, { email: 'plataforma@lumen.example', name: 'Paula Plataforma', role: 'platform-admin' });
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { as: root });
    const cities = await page.getByTestId('tenant-switcher').locator('option').allTextContents();
    expect(cities).toEqual(expect.arrayContaining(['São Paulo', 'Santos']));
    await page.goto(`${lumen.baseUrl}/console/operators`);
    await page.getByTestId('operators').getByText(city.admin.email).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'operators');
    expect(problems).toEqual([]);
    await context.close();
  });
});
