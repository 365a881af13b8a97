/**
 * Bundles the console (web/) with esbuild into memory: one JavaScript module, one
 * stylesheet (Leaflet's CSS included) and the images they reference, every name
 * carrying a content hash so browsers may keep them for good. Used by
 * scripts/build.ts (the files travel inside the executable as one asset) and, in
 * development, by the server at the first request for /console.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ConsoleFile, ConsoleFiles } from './files.js';

/** Where the bundle's files are served from. */
export const ASSET_PREFIX = '/console/assets/';

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/** The manifest's PNG icons, in src/console/web/icons/. */
export const APP_ICONS = ['icon-192', 'icon-512', 'icon-maskable-512'] as const;

export async function bundleConsole(repoRoot: string): Promise<ConsoleFiles> {
  // esbuild is a build-time tool: loaded only here, never inside the executable.
  const { build } = await import('esbuild');
  const outdir = path.join(repoRoot, 'dist/console-assets');
  const result = await build({
    absWorkingDir: repoRoot,
    entryPoints: { console: path.join(repoRoot, 'src/console/web/main.tsx'), sw: path.join(repoRoot, 'src/console/web/sw.ts') },
    outdir,
    write: false,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    publicPath: ASSET_PREFIX.replace(/\/$/, ''),
    jsx: 'automatic',
    jsxImportSource: 'preact',
    // SWR is written for React; Preact's compat layer is the same API in 4 KB.
    alias: { react: 'preact/compat', 'react-dom': 'preact/compat', 'react/jsx-runtime': 'preact/jsx-runtime' },
    loader: { '.png': 'file', '.svg': 'file' },
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const files = new Map<string, ConsoleFile>();
  let script = '';
  let style = '';
  let icon = '';
  let worker = '';
  for (const out of result.outputFiles) {
    const name = path.relative(outdir, out.path);
    const ext = path.extname(name);
    const type = TYPES[ext];
    if (!type) throw new Error(`the console bundle produced ${name}, of a type the server does not serve`);
    files.set(name, { body: Buffer.from(out.contents), type });
    if (ext === '.js' && name.startsWith('console-')) script = name;
    if (ext === '.js' && name.startsWith('sw-')) worker = name;
    if (ext === '.css') style = name;
    if (name.startsWith('favicon-')) icon = name;
  }
  // The app icons of the manifest (drawn by scripts/console-icons.ts, committed), named by content like the rest.
  const appIcons: Record<string, string> = {};
  for (const base of APP_ICONS) {
    const body = readFileSync(path.join(repoRoot, 'src/console/web/icons', `${base}.png`));
    const name = `${base}-${createHash('sha256').update(body).digest('hex').slice(0, 8).toUpperCase()}.png`;
    files.set(name, { body, type: 'image/png' });
    appIcons[base] = name;
  }
  if (!script || !style || !icon || !worker) throw new Error('the console bundle lacks its script, stylesheet, icon or service worker');
  return { files, script, style, icon, worker, appIcons };
}
