import type { Config } from '../config.js';
import { AppError } from '../lib/errors.js';
import { ASSET_PREFIX, consoleFiles } from '../console/index.js';
import type { HttpResult } from './problem.js';

/** Every path of the console: its assets, and the page for any client route (deep links). */
export function isConsolePath(p: string): boolean {
  return p === '/console' || p.startsWith('/console/');
}

/** The origin a tile template fetches from, for the CSP ({s} subdomains as a wildcard). */
function tileSource(template: string | null): string {
  if (!template) return '';
  const u = new URL(template.replaceAll('{s}', 'SUBDOMAIN').replace(/\{[^}]+\}/g, '0'));
  return ` ${u.protocol}//${u.host.replace('SUBDOMAIN', '*')}`;
}

/**
 * The page's protections: scripts only from Lumen itself (no inline script, no eval),
 * never framed, no MIME sniffing, no referrer leaving with an alert's URL. Styles set
 * through the CSSOM (Leaflet's positioning) are not inline style and need no exception.
 */
function securityHeaders(config: Config): Record<string, string> {
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: blob:${tileSource(config.mapTileUrl)}`,
    "connect-src 'self'",
    "font-src 'self'",
    // The web app manifest and the service worker (offline use in the street).
    "manifest-src 'self'",
    "worker-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
  return {
    'content-security-policy': csp,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
  };
}

/** The service worker's path: at the console's root, so its scope is the whole console. */
const WORKER_PATH = '/console/sw.js';
const MANIFEST_PATH = '/console/manifest.webmanifest';
const THEME = '#14213d';

/** The web app manifest: the console installs as "Lumen", opening on the crew's orders. */
function webManifest(svgIcon: string, icons: Readonly<Record<string, string>>): Record<string, unknown> {
  return {
    name: 'Lumen — Console de operação',
    short_name: 'Lumen',
    lang: 'pt-BR',
    id: '/console/',
    start_url: '/console/orders',
    scope: '/console/',
    display: 'standalone',
    background_color: THEME,
    theme_color: THEME,
    icons: [
      { src: ASSET_PREFIX + svgIcon, sizes: 'any', type: 'image/svg+xml' },
      { src: ASSET_PREFIX + icons['icon-192'], sizes: '192x192', type: 'image/png' },
      { src: ASSET_PREFIX + icons['icon-512'], sizes: '512x512', type: 'image/png' },
      { src: ASSET_PREFIX + icons['icon-maskable-512'], sizes: '512x512', type: 'image/png', purpose: 'maskable' },
    ],
  };
}

function escapeAttribute(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** GET /console/... : an asset by its hashed name, else the one page (the client routes). */
export async function consolePage(p: string, config: Config): Promise<HttpResult> {
  const built = await consoleFiles();
  const headers = securityHeaders(config);
  if (p.startsWith(ASSET_PREFIX)) {
    const file = built.files.get(p.slice(ASSET_PREFIX.length));
    if (!file) throw new AppError('not-found', { resource: p });
    return { status: 200, body: file.body, contentType: file.type, headers: { ...headers, 'cache-control': 'public, max-age=31536000, immutable' } };
  }
  if (p === WORKER_PATH) {
    // The worker carries the shell's names: a new build is a new worker, which drops the old shell.
    const shell = [...built.files.keys()].filter((name) => name !== built.worker).sort().map((name) => ASSET_PREFIX + name);
    const body = Buffer.concat([Buffer.from(`self.LUMEN_SHELL=${JSON.stringify(shell)};\n`), built.files.get(built.worker)!.body]);
    return { status: 200, body, contentType: 'text/javascript; charset=utf-8', headers: { ...headers, 'cache-control': 'no-cache' } };
  }
  if (p === MANIFEST_PATH) {
    return { status: 200, body: JSON.stringify(webManifest(built.icon, built.appIcons)), contentType: 'application/manifest+json; charset=utf-8', headers: { ...headers, 'cache-control': 'no-cache' } };
  }
  // What the page needs from the server's configuration travels in a meta element:
  // no inline script, and the values are attribute-escaped.
  const settings = JSON.stringify({ tileUrl: config.mapTileUrl, tileAttribution: config.mapTileAttribution, mapsUrl: config.mapsUrlTemplate });
  const html = `<!doctype html>
<html lang="pt-BR">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="lumen-console" content="${escapeAttribute(settings)}">
<title>Lumen</title>
<link rel="icon" href="${ASSET_PREFIX}${built.icon}" type="image/svg+xml">
<link rel="manifest" href="${MANIFEST_PATH}">
<link rel="apple-touch-icon" href="${ASSET_PREFIX}${built.appIcons['icon-192']}">
<meta name="theme-color" content="${THEME}">
<link rel="stylesheet" href="${ASSET_PREFIX}${built.style}">
<script type="module" src="${ASSET_PREFIX}${built.script}"></script>
</head>
<body>
<div id="app"></div>
<noscript>O console do Lumen precisa de JavaScript. / Lumen's console needs JavaScript.</noscript>
</body>
</html>
`;
  return { status: 200, body: html, contentType: 'text/html; charset=utf-8', headers: { ...headers, 'cache-control': 'no-cache' } };
}
