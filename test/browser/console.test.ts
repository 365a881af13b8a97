/**
 * The operators' console in Chromium against a real Lumen and database, with a real
 * loopback partner receiver. Each page is checked with axe-core and photographed at a
 * desktop and a phone width into docs/console/.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStub, type StubServer } from '../intake/support.js';
import { launch, openPage, screenshots, seriousViolations } from './support/browser.js';
import { alertsOf, makeCity, sendRequest, type City } from './support/city.js';
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

  it('sign-in page: accessible, in Portuguese by default', async () => {
    const { page, problems, context } = await openPage(browser, lumen.baseUrl);
    await page.goto(`${lumen.baseUrl}/console/inbox`);
    await page.getByRole('heading', { name: 'Entrar no Lumen' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'sign-in');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('the inbox lists Pending alerts; j/k and Enter open one', async () => {
    await sendRequest(lumen, city, { description: 'Poste apagado na esquina' });
    await sendRequest(lumen, city, { description: 'Lâmpada piscando a noite toda', noLocation: true, street: 'Rua Sem Número' });
    const { page, problems, context } = await openPage(browser, lumen.baseUrl, { token: city.token });
    await page.goto(`${lumen.baseUrl}/console/`);
    await page.getByTestId('inbox').waitFor();
    await page.getByText('Lâmpada piscando a noite toda').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'inbox');
    await page.keyboard.press('j');
    await page.keyboard.press('Enter');
    await page.getByTestId('alert-details').waitFor();
    expect(new URL(page.url()).pathname).toMatch(/^\/console\/alerts\/[0-9a-f-]{36}$/);
    await page.goBack();
    await page.getByTestId('inbox').waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });
});
