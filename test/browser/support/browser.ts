/**
 * The machine's Chromium through playwright-core (no browser download): pages that
 * record every console error, script dialog and failed same-origin request, axe-core
 * run inside the page, and screenshots at a desktop and a 390 px phone width.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect, vi } from 'vitest';

// A walk through the console takes 10-25 s alone and twice that beside other files on
// two cores: every browser test file gets the timeout of `npm run test:browser`, also
// inside `npm test` (where the rest keep 30 s). Its waits for what a page shows
// (expect.poll) get 15 s instead of vitest's 1 s: a page that loads its script and asks
// two things of the server took longer than 1 s on a loaded CI machine (the map's
// supply-fault legend, once).
vi.setConfig({ testTimeout: 120_000, expect: { poll: { timeout: 15_000 } } });

/**
 * Debian's Chromium headless shell (package chromium-headless-shell: the same engine
 * without the desktop browser around it) when the machine has it, else Debian's full
 * Chromium in headless mode. The shell took a fifth less CPU on the same three files
 * (82-85 s against 100-116 s on two cores), which is what the suite waits on there.
 */
export const CHROMIUM = process.env.LUMEN_CHROMIUM ?? (existsSync('/usr/bin/chromium-headless-shell') ? '/usr/bin/chromium-headless-shell' : '/usr/bin/chromium');
export const SCREENSHOTS = path.resolve('docs/console');
export const DESKTOP = { width: 1366, height: 860 };
export const PHONE = { width: 390, height: 844 };

export async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`No Chromium at ${CHROMIUM}: install the machine's package (Debian: apt-get install -y chromium-headless-shell, or chromium; .ci/run does) or point LUMEN_CHROMIUM at one. Nothing is downloaded.`);
  }
  // --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export interface Watched {
  page: Page;
  context: BrowserContext;
  /** Console errors, page errors and dialogs (an XSS payload that ran would show here). */
  problems: string[];
  dialogs: string[];
}

/**
 * A new tab (a browser context of its own: its own cookies). With `as`, the operator
 * signs in through the sign-in page first; otherwise the tab starts signed out.
 */
export async function openPage(browser: Browser, baseUrl: string, opts: { as?: { email: string; password: string }; viewport?: { width: number; height: number } } = {}): Promise<Watched> {
  const context = await browser.newContext({ viewport: opts.viewport ?? DESKTOP, locale: 'pt-BR', timezoneId: 'America/Sao_Paulo' });
  const page = await context.newPage();
  const problems: string[] = [];
  const dialogs: string[] = [];
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    // The unreachable tile server of the tests (a closed network) is expected.
    if (/127\.0\.0\.1:9\/|ERR_CONNECTION_REFUSED/.test(m.text() + (m.location().url ?? ''))) return;
    // The API's 4xx answers are part of the flow (401 before sign-in, 404 for a foreign
    // id, 409 for a lost race); the page shows them. Chromium logs each as an error.
    if (m.text().startsWith('Failed to load resource') && new URL(m.location().url || baseUrl).pathname.startsWith('/api/')) return;
    problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('requestfailed', (r) => {
    // ERR_ABORTED: a request cut short by the test's own next navigation.
    if (r.failure()?.errorText === 'net::ERR_ABORTED') return;
    if (r.url().startsWith(baseUrl) && !r.url().includes('/api/')) problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText ?? ''}`);
  });
  if (opts.as) await signIn(page, baseUrl, opts.as);
  return { page, context, problems, dialogs };
}

/** Email and password on the sign-in page; resolves when the inbox is shown. */
export async function signIn(page: Page, baseUrl: string, who: { email: string; password: string }): Promise<void> {
  await page.goto(`${baseUrl}/console/sign-in`);
  await page.locator('input[name="email"]').fill(who.email);
  await page.locator('input[name="password"]').fill(who.password);
  await page.locator('form button[type="submit"]').click();
  await page.locator('.page h1').first().waitFor();
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** axe-core inside the page; the violations that are serious or critical. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Injected through the DevTools protocol, not a <script> tag: the page's CSP allows no inline script.
  await page.evaluate(axeSource);
  const result = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] })`)) as {
    violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
  };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
}

/** docs/console/<name>-desktop.png and <name>-phone.png. */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const size = page.viewportSize() ?? DESKTOP;
  await page.setViewportSize(DESKTOP);
  await settle(page);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-desktop.png`), fullPage: false });
  await page.setViewportSize(PHONE);
  await settle(page);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-phone.png`), fullPage: true });
  await page.setViewportSize(size);
}

/** Fonts loaded and layout done after a resize (Leaflet redraws on resize). */
async function settle(page: Page): Promise<void> {
  await page.evaluate('window.scrollTo(0, 0)');
  await page.evaluate('document.fonts.ready.then(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))))');
}

/** Waits for a toast that says `text` (an earlier one may still be on screen); its text. */
export async function toast(page: Page, kind: 'ok' | 'error', text: string | RegExp): Promise<string> {
  const one = page.getByTestId(`toast-${kind}`).filter({ hasText: text }).last();
  await one.waitFor();
  return one.innerText();
}

/** The page is no wider than the window (a phone never pans sideways). */
export async function noSidewaysScroll(page: Page): Promise<void> {
  expect((await page.evaluate('document.documentElement.scrollWidth')) as number).toBeLessThanOrEqual(page.viewportSize()!.width);
}
