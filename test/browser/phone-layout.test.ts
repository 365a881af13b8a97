/**
 * Every console route at 390×844, in Portuguese and English, with long data (long e-mails,
 * event types, addresses, team and partner names) in Manaus, far from São Paulo: the page
 * never scrolls sideways (scrollWidth ≤ innerWidth) and no text is squeezed into a column
 * a letter wide, no part of a table card's cell falls into its label's column, and no map's
 * scale is under its attribution. Routes from src/console/web/router.tsx's list (app.tsx's
 * Routes).
 * Screenshots: docs/console/phone-*.png.
 */
import path from 'node:path';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launch, openPage, PHONE, SCREENSHOTS } from './support/browser.js';
import { alertsOf, makeCity, makeOperator, sendRequest, type City, type Person } from './support/city.js';
import { startLumenForBrowser, type Lumen } from './support/lumen.js';

let lumen: Lumen;
let browser: Browser;
let manaus: City;
let boss: Person;
const LONG_STREET = 'Avenida Presidente Getúlio Dornelles Vargas (antiga Estrada do Aleixo), trecho entre a Rua Ramos Ferreira e o Igarapé do Mindu';
const LONG_TEAM = 'Equipe de Manutenção Noturna da Zona Centro-Sul e Adrianópolis — Turno Estendido 24 horas';
const routes: { name: string; path: string }[] = [];

beforeAll(async () => {
  lumen = await startLumenForBrowser();
  browser = await launch();
  // A partner code at its longest, a webhook nobody answers: the delivery log fills with failed attempts.
  manaus = await makeCity(lumen, { name: 'Manaus', webhookUrl: 'http://127.0.0.1:9/hooks/lumen-manaus-prefeitura-secretaria-municipal-de-infraestrutura', code: 'PORTAL-156-MANAUS-SEMINF-ILUMINACAO-PUBLICA' });
  await makeCity(lumen, { name: 'Porto Alegre', webhookUrl: 'https://hooks.portoalegre.example/lumen', code: 'PORTAL-POA-156' });
  boss = await makeOperator(lumen, { email: 'coordenacao.geral.iluminacao.publica.e.manutencao@seminf.manaus.am.gov.example', name: 'Coordenação Geral de Iluminação Pública e Manutenção Preventiva', role: 'platform-admin' });
  await makeOperator(lumen, { email: 'maria.aparecida.dos.santos.ferreira.eletricista.noturna@seminf.manaus.am.gov.example', name: 'Maria Aparecida dos Santos Ferreira', role: 'triager', tenantId: manaus.tenantId });
  const team = await lumen.cli('team', 'create', '--tenant', manaus.tenantId, '--name', LONG_TEAM);
  const polesCsv = path.join(mkdtempSync(path.join(os.tmpdir(), 'lumen-phone-')), 'poles.csv');
  writeFileSync(polesCsv, `code,address,neighborhood,latitude,longitude,active,device_identifier\nMAO-ADRIANOPOLIS-000001,"${LONG_STREET}",Adrianópolis,-3.101200,-60.012300,true,TG-MAO-ADRIANOPOLIS-000001\n`);
  await lumen.cli('pole', 'import', '--tenant', manaus.tenantId, polesCsv);
  await sendRequest(lumen, manaus, { street: LONG_STREET, latitude: -3.1012, longitude: -60.0123, requesterName: 'Francisca das Chagas Nascimento de Albuquerque Cavalcanti', description: 'Poste apagado há uma semana; a rua fica completamente escura e os moradores voltam do trabalho a pé depois das 22h.' });
  await sendRequest(lumen, manaus, { street: LONG_STREET, latitude: -3.1013, longitude: -60.0124, description: 'Lâmpada acesa durante o dia inteiro.' });
  const [first, second] = await alertsOf(lumen, manaus);
  const made = await lumen.admin(manaus.token, 'POST', `/api/admin/alerts/${first.id}/create-order`, { teamId: team.id, poleId: 'MAO-ADRIANOPOLIS-000001' });
  expect(made.status).toBe(201);
  // Moves that send events (and fill the audit log and the delivery log).
  expect((await lumen.admin(manaus.token, 'POST', `/api/admin/service-orders/${made.body.id}/start`, { note: 'Equipe a caminho; previsão de chegada às 21h.' })).status).toBe(200);
  const plan = await lumen.admin(manaus.token, 'PUT', `/api/admin/service-orders/${made.body.id}/planned-visit`, { startsAt: new Date(Date.now() - 5 * 3600_000).toISOString(), endsAt: new Date(Date.now() - 3600_000).toISOString() });
  expect(plan.status).toBe(200);
  const boss2 = await lumen.admin(manaus.token, 'PUT', `/api/admin/teams/${team.id}/members/${encodeURIComponent(boss.email)}`);
  // A platform admin holds no grant on the city: not a member (422), the crew member is.
  expect(boss2.status).toBe(422);
  expect((await lumen.admin(manaus.token, 'PUT', `/api/admin/teams/${team.id}/members/${encodeURIComponent('maria.aparecida.dos.santos.ferreira.eletricista.noturna@seminf.manaus.am.gov.example')}`)).status).toBe(200);
  routes.push(
    { name: 'inbox', path: '/inbox' },
    { name: 'alert', path: `/alerts/${second.id}` },
    { name: 'alert-linked', path: `/alerts/${first.id}` },
    { name: 'orders', path: '/orders' },
    { name: 'order', path: `/orders/${made.body.id}` },
    { name: 'map', path: '/map' },
    { name: 'pole', path: '/poles/MAO-ADRIANOPOLIS-000001' },
    { name: 'partners', path: '/partners' },
    { name: 'partner', path: `/partners/${manaus.partnerCode}` },
    { name: 'teams', path: '/teams' },
    { name: 'operators', path: '/operators' },
    { name: 'audit', path: '/audit' },
    { name: 'reports', path: '/reports' },
    { name: 'my-team', path: '/my-team' },
    { name: 'not-found', path: '/nothing-here' },
  );
});
afterAll(async () => {
  await browser?.close();
  await lumen?.stop();
});

/** What sticks out past the right edge (the first few, innermost first), to say where a page is too wide. */
const WIDE = `Array.from(document.querySelectorAll('body *'))
  .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 0.5 && !el.closest('.table-wrap, .board, .leaflet-container, .sidenav'))
  .reverse().slice(0, 4)
  .map((el) => el.tagName + '.' + (el.className || '') + '[' + (el.getAttribute('data-testid') || '') + '] ' + Math.round(el.getBoundingClientRect().right))`;

/** Text squeezed into a box narrower than two letters (a word printed one letter per line). */
const SQUEEZED = `Array.from(document.querySelectorAll('main td, main dd, main li, main p, main span, main a, main th, main h2'))
  .filter((el) => !el.closest('thead, .sr-only'))
  .filter((el) => { const r = el.getBoundingClientRect(); const text = (el.textContent || '').trim(); return r.width > 0 && r.width < 22 && text.length > 2 && getComputedStyle(el).position !== 'absolute'; })
  .map((el) => el.tagName + ': ' + (el.textContent || '').trim().slice(0, 40))`;

/** In a table shown as cards, a cell is a grid of its column's name and its content: a second loose part of the content falls into the name's column. */
const STRAY = `Array.from(document.querySelectorAll('.table-cards td:not([data-label=""])'))
  .filter((td) => getComputedStyle(td).display === 'grid')
  .flatMap((td) => Array.from(td.childNodes)
    .filter((n) => n.nodeType === 1 || (n.nodeType === 3 && (n.textContent || '').trim() !== ''))
    .filter((n) => { let r; if (n.nodeType === 1) r = n.getBoundingClientRect(); else { const g = document.createRange(); g.selectNode(n); r = g.getBoundingClientRect(); } return r.width > 0 && r.left - td.getBoundingClientRect().left < 90; })
    .map((n) => td.getAttribute('data-label') + ': ' + (n.textContent || '').trim().slice(0, 30)))`;

/** A map's scale under its attribution (a narrow map's attribution runs along most of its bottom). */
const MAP_OVERLAP = `Array.from(document.querySelectorAll('.leaflet-container')).filter((map) => {
  const a = map.querySelector('.leaflet-control-attribution'), s = map.querySelector('.leaflet-control-scale');
  if (!a || !s) return false;
  const x = a.getBoundingClientRect(), y = s.getBoundingClientRect();
  return x.width > 0 && y.width > 0 && x.left < y.right && y.left < x.right && x.top < y.bottom && y.top < x.bottom;
}).length`;

describe('Every console page on a 390 px phone', () => {
  it('never scrolls sideways and never squeezes words, in Portuguese and English', { timeout: 300_000 }, async () => {
    const w = await openPage(browser, lumen.baseUrl, { as: boss, viewport: PHONE });
    const { page } = w;
    await page.getByTestId('tenant-switcher').selectOption({ label: 'Manaus' });
    // On no team of the city: no "my team today" in the navigation.
    expect(await page.locator('.sidenav a[href="/console/my-team"]').count()).toBe(0);
    const failures: string[] = [];
    for (const lang of ['pt-BR', 'en'] as const) {
      await page.getByTestId('language').selectOption(lang);
      for (const r of routes) {
        await page.goto(`${lumen.baseUrl}/console${r.path}`);
        await page.locator('main h1').first().waitFor();
        await page.waitForLoadState('networkidle');
        await page.locator('[role="status"]', { hasText: lang === 'en' ? 'Loading' : 'Carregando' }).waitFor({ state: 'detached' });
        const sizes = (await page.evaluate('[document.documentElement.scrollWidth, window.innerWidth]')) as [number, number];
        if (sizes[0] > sizes[1]) failures.push(`${lang} ${r.path}: scrollWidth ${sizes[0]} > ${sizes[1]} (${((await page.evaluate(WIDE)) as string[]).join(' | ')})`);
        const squeezed = (await page.evaluate(SQUEEZED)) as string[];
        if (squeezed.length) failures.push(`${lang} ${r.path}: squeezed ${squeezed.slice(0, 3).join(' | ')}`);
        const stray = (await page.evaluate(STRAY)) as string[];
        if (stray.length) failures.push(`${lang} ${r.path}: in a label's column ${stray.slice(0, 3).join(' | ')}`);
        if ((await page.evaluate(MAP_OVERLAP)) as number) failures.push(`${lang} ${r.path}: the map's scale is under its attribution`);
        if (r.name === 'alert') expect(await page.getByTestId('tel').getAttribute('href')).toBe('tel:+5511987654321');
        if (r.name === 'my-team') expect(await page.getByTestId('my-team-none').count()).toBe(1);
        if (lang === 'pt-BR' && ['audit', 'partner', 'order', 'alert-linked', 'operators', 'teams'].includes(r.name)) {
          await page.evaluate('window.scrollTo(0, 0)');
          await page.screenshot({ path: path.join(SCREENSHOTS, `phone-${r.name}.png`), fullPage: true });
        }
      }
    }
    expect(failures).toEqual([]);
    expect(w.problems).toEqual([]);
    await w.context.close();
  });
});
