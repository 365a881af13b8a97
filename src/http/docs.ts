import partnerPollingDocument from '../../generated/openapi/partner-polling.json' with { type: 'json' };
import type { HttpResult } from './problem.js';

/**
 * Human docs rendered from the published contracts by Redoc, served by Lumen itself:
 * no CDN, no request leaves the page (it works on a closed network).
 */
export function docsPage(specUrl: string, title: string): HttpResult {
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<redoc spec-url="${specUrl}"></redoc>
<script src="/docs/redoc.standalone.js"></script>
</body>
</html>
`;
  return { status: 200, body: html, contentType: 'text/html; charset=utf-8', headers: { 'content-security-policy': "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; worker-src 'self' blob:; font-src 'self' data:" } };
}

/** The pages, and the document each renders. Partner-polling is no surface of Lumen's: its document is served here. */
const PAGES: Readonly<Record<string, { spec: string; title: string }>> = {
  '/docs': { spec: '/api/external/openapi.json', title: 'Lumen partner API' },
  '/docs/': { spec: '/api/external/openapi.json', title: 'Lumen partner API' },
  '/docs/polling': { spec: '/docs/partner-polling.json', title: 'Lumen partner polling endpoint (implemented by the partner)' },
  '/docs/sandbox': { spec: '/api/external/sandbox/openapi.json', title: 'Lumen partner sandbox' },
  '/docs/telemetry': { spec: '/api/telemetry/openapi.json', title: 'Lumen telemetry ingestion' },
  '/docs/open311': { spec: '/open311/v2/openapi.json', title: 'Lumen Open311 GeoReport v2' },
  '/docs/admin': { spec: '/api/admin/openapi.json', title: 'Lumen admin API' },
};

/** A docs page, the polling contract or the Redoc bundle; null for any other path. */
export async function docsRoute(path: string): Promise<HttpResult | null> {
  const page = PAGES[path];
  if (page) return docsPage(page.spec, page.title);
  if (path === '/docs/partner-polling.json') return { status: 200, body: partnerPollingDocument, headers: { 'cache-control': 'no-cache' } };
  return docsAsset(path);
}

let redoc: Buffer | null = null;

/**
 * Redoc's side menu shows a logo fetched from its vendor's CDN (cdn.redoc.ly): the one
 * request the bundle makes to another host. It is replaced by an empty data: URL, which
 * loads nothing, so the image fails and Redoc hides it.
 */
const OUTSIDE_LOGO = 'src:"https://cdn.redoc.ly/redoc/logo-mini.svg"';

export async function docsAsset(path: string): Promise<HttpResult | null> {
  if (path !== '/docs/redoc.standalone.js') return null;
  if (!redoc) {
    const { readAsset } = await import('../lib/assets.js');
    redoc = Buffer.from(readAsset('redoc.standalone.js').toString('utf8').replace(OUTSIDE_LOGO, 'src:"data:,"'), 'utf8');
  }
  return { status: 200, body: redoc, contentType: 'application/javascript; charset=utf-8', headers: { 'cache-control': 'public, max-age=3600' } };
}
