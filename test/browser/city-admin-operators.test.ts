/**
 * A city-admin manages its own city's operators in the console (issue 23 §4 defect
 * 10), in Chromium, in Curitiba beside Manaus: invites an operator (the password shown
 * once), changes and removes a role, resets a password, disables and enables again;
 * an operator who also works in Manaus shows only the Curitiba role and says in words
 * why it cannot be disabled or reset here; the platform-only control is absent. Both
 * languages, desktop and a 390 px phone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launch, noSidewaysScroll, openPage, PHONE, DESKTOP, screenshots, seriousViolations, toast } from './support/browser.js';
import { makeCity, makeOperator, type City, type Person } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';

let lumen: Lumen;
let browser: Browser;
let cwb: City;
let manaus: City;
let local: Person;
let shared: Person;
let foreign: Person;

const LOCAL = 'joana.kowalczyk.iluminacao@curitiba.pr.gov.br';
const SHARED = 'consorcio.norte-sul.manutencao@iluminacao.example';
const FOREIGN = 'raimundo.nonato@manaus.am.gov.br';
const INVITED = 'ana.paula.wisniewski.plantao@curitiba.pr.gov.br';

async function canSignIn(email: string, password: string): Promise<number> {
  const res = await fetch(`${lumen.baseUrl}/api/admin/session`, { method: 'POST', headers: { 'content-type': 'application/json', origin: lumen.baseUrl }, body: JSON.stringify({ email, password }) });
  return res.status;
}

function card(page: Page, email: string) {
  return page.locator(`[data-testid="operator"][data-email="${email}"]`);
}

beforeAll(async () => {
  lumen = await startLumenForBrowser();
  browser = await launch();
  cwb = await makeCity(lumen, { name: 'Curitiba', webhookUrl: 'https://hooks.curitiba.example/lumen', code: 'CENTRAL-156-CWB' });
  manaus = await makeCity(lumen, { name: 'Manaus', webhookUrl: 'https://hooks.manaus.example/lumen', code: 'CENTRAL-156-MAO' });
  local = await makeOperator(lumen, { email: LOCAL, name: 'Joana Kowalczyk', role: 'viewer', tenantId: cwb.tenantId });
  shared = await makeOperator(lumen, { email: SHARED, name: 'Consórcio Norte-Sul Manutenção', role: 'triager', tenantId: cwb.tenantId });
  await lumen.cli('operator', 'grant', SHARED, '--tenant', manaus.tenantId, '--role', 'city-admin');
  foreign = await makeOperator(lumen, { email: FOREIGN, name: 'Raimundo Nonato', role: 'triager', tenantId: manaus.tenantId });
});
afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
});

describe("A city-admin manages its city's operators", () => {
  it('invites, grants, revokes, resets a password, disables and enables, within its city only', { timeout: 180_000 }, async () => {
    const { page, problems } = await openPage(browser, lumen.baseUrl, { as: cwb.admin });
    await page.goto(`${lumen.baseUrl}/console/operators`);
    await card(page, LOCAL).waitFor();
    const panel = page.getByTestId('operators-panel');
    const text = await panel.innerText();
    // Only Curitiba's operators, only Curitiba's roles: nothing of Manaus, not even its name.
    expect(text).toContain(SHARED);
    expect(text).not.toContain(FOREIGN);
    expect(text).not.toContain('Manaus');
    expect(await card(page, SHARED).getByTestId('grant').count()).toBe(1);
    expect(await card(page, SHARED).getByTestId('grant').getAttribute('data-city')).toBe('Curitiba');
    // Shared with another city: said in words, no reset or disable offered.
    expect(await card(page, SHARED).getByTestId('operator-elsewhere').innerText()).toContain('Também trabalha em cidades que você não administra');
    expect(await card(page, SHARED).getByTestId('operator-reset').count()).toBe(0);
    expect(await card(page, SHARED).getByTestId('operator-disable').count()).toBe(0);
    // The platform-only control is absent.
    await page.getByTestId('operator-invite').locator('summary').click();
    expect(await page.getByTestId('invite-platform-admin').count()).toBe(0);
    expect(await panel.innerText()).not.toContain('administração da plataforma');

    // Invite: the password appears once, and works.
    await page.getByTestId('invite-name').fill('Ana Paula Wiśniewski');
    await page.getByTestId('invite-email').fill(INVITED);
    await page.getByTestId('invite-role').selectOption('triager');
    await page.getByTestId('invite-submit').click();
    await toast(page, 'ok', `${INVITED} foi convidado.`);
    const invitedPassword = await page.getByTestId('operator-new-password').innerText();
    expect(await page.getByTestId('operator-password').innerText()).toContain('Ela aparece só agora');
    expect(await canSignIn(INVITED, invitedPassword)).toBe(200);
    await card(page, INVITED).waitFor();
    await screenshots(page, 'city-admin-operators');
    await page.setViewportSize(DESKTOP);
    expect(await seriousViolations(page)).toEqual([]);

    // Grant: the viewer becomes a triager.
    await card(page, LOCAL).getByTestId('grant-role').selectOption('triager');
    await toast(page, 'ok', 'Papel de Joana Kowalczyk alterado.');
    const joana = (await lumen.admin(cwb.token, 'GET', `/api/admin/operators/${encodeURIComponent(LOCAL)}`)).body;
    expect(joana.grants).toEqual([{ tenantId: cwb.tenantId, tenantName: 'Curitiba', role: 'triager' }]);

    // Revoke: the invited operator's only Curitiba role; gone from this city's list.
    await card(page, INVITED).getByTestId('grant-revoke').click();
    await toast(page, 'ok', 'Papel de Ana Paula Wiśniewski retirado.');
    await expect.poll(() => card(page, INVITED).count()).toBe(0);
    expect((await lumen.admin(cwb.token, 'GET', `/api/admin/operators/${encodeURIComponent(INVITED)}`)).body.grants).toEqual([]);

    // Reset a password: the old one stops, the new one (shown once) works.
    await page.getByRole('button', { name: 'Já anotei' }).click();
    await card(page, LOCAL).getByTestId('operator-reset').click();
    await toast(page, 'ok', 'Nova senha de Joana Kowalczyk criada');
    const newPassword = await page.getByTestId('operator-new-password').innerText();
    expect(await canSignIn(LOCAL, local.password)).toBe(401);
    expect(await canSignIn(LOCAL, newPassword)).toBe(200);

    // Disable (asked once more), then enable again.
    await card(page, LOCAL).getByTestId('operator-disable').click();
    expect(await card(page, LOCAL).innerText()).toContain('Desativar Joana Kowalczyk? As sessões e os tokens dele param na hora.');
    await card(page, LOCAL).getByTestId('operator-disable-confirm').click();
    await toast(page, 'ok', 'Joana Kowalczyk foi desativado.');
    await expect.poll(() => card(page, LOCAL).innerText()).toContain('desativado');
    expect(await canSignIn(LOCAL, newPassword)).toBe(401);
    await card(page, LOCAL).getByTestId('operator-enable').click();
    await toast(page, 'ok', 'Joana Kowalczyk foi reativado.');
    expect(await canSignIn(LOCAL, newPassword)).toBe(200);
    // The shared operator was never touched, and Manaus's roles stand.
    expect(await canSignIn(SHARED, shared.password)).toBe(200);
    expect(await canSignIn(FOREIGN, foreign.password)).toBe(200);
    const sharedRoles = (await lumen.admin(cwb.token, 'GET', `/api/admin/operators/${encodeURIComponent(SHARED)}`)).body.grants.map((g: { tenantName: string; role: string }) => `${g.tenantName}:${g.role}`).sort();
    expect(sharedRoles).toEqual(['Curitiba:triager', 'Manaus:city-admin']);

    // English, and a 390 px phone.
    await page.getByTestId('language').selectOption('en');
    await expect.poll(() => card(page, SHARED).innerText()).toContain('Also works in cities you do not administer');
    expect(await panel.innerText()).not.toMatch(/Desativar|Redefinir|Convidar/);
    await page.setViewportSize(PHONE);
    await noSidewaysScroll(page);
    expect(problems).toEqual([]);
  });
});
