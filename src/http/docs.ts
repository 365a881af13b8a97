import partnerPollingDocument from '../../generated/openapi/partner-polling.json' with { type: 'json' };
import guides from '../../generated/docs/guides.json' with { type: 'json' };
import type { HttpResult } from './problem.js';

/**
 * The documentation Lumen serves itself, at /docs: an index of every published contract
 * (rendered by Redoc) and every guide (docs/*.md and the changelog, rendered at
 * `npm run generate`), plus the partner kit as an npm tarball. No CDN, no request leaves
 * a page: it all works on a closed network.
 */

const CSP = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; worker-src 'self' blob:; font-src 'self' data:";

function escapeHtml(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

/** The strip on top of every served page: back to the index. */
const BACK = '<nav class="lumen-docs-nav" style="font: 14px/1.4 system-ui, sans-serif; padding: 8px 16px; background: #12324a; position: sticky; top: 0; z-index: 10"><a href="/docs" style="color: #fff">← Lumen documentation: every contract and guide</a></nav>';

function html(title: string, body: string, head = ''): HttpResult {
  const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body { margin: 0; padding: 0; }</style>
${head}</head>
<body>
${body}
</body>
</html>
`;
  return { status: 200, body: page, contentType: 'text/html; charset=utf-8', headers: { 'content-security-policy': CSP } };
}

/** A contract rendered by Redoc, under the strip back to the index. */
export function docsPage(specUrl: string, title: string): HttpResult {
  return html(title, `${BACK}\n<redoc spec-url="${specUrl}"></redoc>\n<script src="/docs/redoc.standalone.js"></script>`);
}

interface Contract {
  readonly path: string;
  readonly spec: string;
  readonly title: string;
  readonly summary: string;
}

/** The published contracts, each a page. Partner-polling is no surface of Lumen's: its document is served here. */
export const CONTRACTS: readonly Contract[] = [
  { path: '/docs/partner', spec: '/api/external/openapi.json', title: 'Lumen partner API', summary: 'Send requests, read poles and service orders, receive events by webhook or polling.' },
  { path: '/docs/sandbox', spec: '/api/external/sandbox/openapi.json', title: 'Lumen partner sandbox', summary: 'Try the partner API against demo data with a test key.' },
  { path: '/docs/polling', spec: '/docs/partner-polling.json', title: 'Lumen partner polling endpoint (implemented by the partner)', summary: 'The endpoint a partner exposes when Lumen fetches its requests.' },
  { path: '/docs/open311', spec: '/open311/v2/openapi.json', title: 'Lumen Open311 GeoReport v2', summary: 'GeoReport v2 for FixMyStreet-style clients.' },
  { path: '/docs/telemetry', spec: '/api/telemetry/openapi.json', title: 'Lumen telemetry ingestion', summary: 'Telegestor reports from the city’s telemetry systems.' },
  { path: '/docs/admin', spec: '/api/admin/openapi.json', title: 'Lumen admin API', summary: 'What the operators’ console uses: triage, orders, partners, operators.' },
];

/** Guides a partner developer reads first; every other guide is listed under operations. */
const PARTNER_GUIDES = ['partner-guide', 'webhooks', 'rate-limits', 'sync', 'sandbox', 'partner-kit', 'open311', 'changelog'];

interface Guide {
  readonly slug: string;
  readonly title: string;
  readonly source: string;
  readonly html: string;
}
const GUIDES = guides as readonly Guide[];
const GUIDE_BY_SLUG = new Map(GUIDES.map((g) => [g.slug, g]));

function guideUrl(g: Guide): string {
  return g.slug === 'changelog' ? '/docs/changelog' : `/docs/guides/${g.slug}`;
}

const GUIDE_STYLE = `<style>
main { max-width: 920px; margin: 0 auto; padding: 16px 20px 64px; font: 16px/1.55 system-ui, sans-serif; color: #1c2733; }
main pre { background: #f3f5f7; padding: 12px; overflow-x: auto; border-radius: 4px; }
main code { font-size: 0.92em; }
main table { border-collapse: collapse; display: block; overflow-x: auto; }
main th, main td { border: 1px solid #d5dbe1; padding: 4px 8px; vertical-align: top; }
main h1 { font-size: 1.8em; } main li { margin: 4px 0; }
</style>`;

function indexPage(): HttpResult {
  const item = (href: string, title: string, note: string) => `<li><a href="${href}">${escapeHtml(title)}</a>${note ? ` — ${escapeHtml(note)}` : ''}</li>`;
  const partnerGuides = PARTNER_GUIDES.map((s) => GUIDE_BY_SLUG.get(s)).filter((g): g is Guide => g !== undefined);
  const others = GUIDES.filter((g) => !PARTNER_GUIDES.includes(g.slug));
  const body = `<main>
<h1>Lumen documentation</h1>
<p>Everything here is served by this Lumen instance itself: no page loads anything from another host.</p>
<h2>Contracts (OpenAPI 3.1)</h2>
<ul>
${CONTRACTS.map((c) => item(c.path, c.title, `${c.summary} JSON: ${c.spec}`)).join('\n')}
</ul>
<h2>Guides for partner developers</h2>
<ul>
${partnerGuides.map((g) => item(guideUrl(g), g.title, '')).join('\n')}
</ul>
<h2>Downloads</h2>
<ul>
${item('/docs/partner-kit.tgz', 'Partner kit (npm tarball)', 'typed client, sync, events and webhook-verification loops: npm install <this URL>')}
</ul>
<h2>Guides for city operations and deployment</h2>
<ul>
${others.map((g) => item(guideUrl(g), g.title, '')).join('\n')}
</ul>
</main>`;
  return html('Lumen documentation', body, GUIDE_STYLE);
}

function guidePage(g: Guide): HttpResult {
  return html(g.title, `${BACK}\n<main>\n${g.html}</main>`, GUIDE_STYLE);
}

/** A docs page, the polling contract, the partner kit or the Redoc bundle; null for any other path. */
export async function docsRoute(path: string): Promise<HttpResult | null> {
  if (path === '/docs' || path === '/docs/') return indexPage();
  const contract = CONTRACTS.find((c) => c.path === path);
  if (contract) return docsPage(contract.spec, contract.title);
  if (path === '/docs/partner-polling.json') return { status: 200, body: partnerPollingDocument, headers: { 'cache-control': 'no-cache' } };
  if (path === '/docs/changelog') return guidePage(GUIDE_BY_SLUG.get('changelog')!);
  const guide = /^\/docs\/guides\/([a-z0-9-]+)$/.exec(path);
  if (guide && guide[1] !== 'changelog' && GUIDE_BY_SLUG.has(guide[1]!)) return guidePage(GUIDE_BY_SLUG.get(guide[1]!)!);
  if (path === '/docs/partner-kit.tgz') return partnerKit();
  return docsAsset(path);
}

let kit: Buffer | null | undefined;

/**
 * The partner kit as `npm pack` made it (scripts/build-partner-kit.ts), carried by the
 * executable; a partner installs it with `npm install <lumen>/docs/partner-kit.tgz`.
 * In development it is served once `npm run build:kit` has made it.
 */
async function partnerKit(): Promise<HttpResult | null> {
  if (kit === undefined) {
    const { readAsset } = await import('../lib/assets.js');
    try {
      kit = readAsset('partner-kit.tgz');
    } catch {
      kit = null;
    }
  }
  if (!kit) return null;
  return { status: 200, body: kit, contentType: 'application/gzip', headers: { 'cache-control': 'no-cache', 'content-disposition': 'attachment; filename="lumen-partner-kit.tgz"' } };
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
