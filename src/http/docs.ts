import type { HttpResult } from './problem.js';

/**
 * Human docs rendered from the published contract by Redoc, served by Lumen itself
 * (no CDN: the page works on a closed network).
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

let redoc: Buffer | null = null;

export async function docsAsset(path: string): Promise<HttpResult | null> {
  if (path !== '/docs/redoc.standalone.js') return null;
  if (!redoc) {
    const { readAsset } = await import('../lib/assets.js');
    redoc = readAsset('redoc.standalone.js');
  }
  return { status: 200, body: redoc, contentType: 'application/javascript; charset=utf-8', headers: { 'cache-control': 'public, max-age=3600' } };
}
