/**
 * Builds the partner kit (src/partner-kit/) into dist/partner-kit/ and dist/partner-kit.tgz: one ES module with
 * its dependencies bundled (index.js), its type declarations (types/), and a
 * package.json, so a partner can `npm install ./dist/partner-kit` (or copy the folder)
 * and import { createLumenClient } from '@lumen/partner-kit'. Part of `npm run build`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(repo, 'dist/partner-kit');
const { version } = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')) as { version: string };

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

process.stdout.write('partner kit: bundling src/partner-kit/index.ts\n');
await build({
  entryPoints: [path.join(repo, 'src/partner-kit/index.ts')],
  outfile: path.join(out, 'index.js'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  legalComments: 'inline',
  logLevel: 'warning',
});

process.stdout.write('partner kit: type declarations\n');
execFileSync(
  path.join(repo, 'node_modules/.bin/tsc'),
  [
    ...['src/partner-kit/index.ts', 'src/partner-kit/fetch-types.d.ts'],
    ...['--declaration', '--emitDeclarationOnly', '--outDir', path.join(out, 'types'), '--rootDir', repo],
    ...['--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2023', '--lib', 'es2023', '--types', 'node', '--strict', '--skipLibCheck'],
  ],
  { cwd: repo, stdio: 'inherit' },
);

writeFileSync(
  path.join(out, 'package.json'),
  JSON.stringify(
    {
      name: '@lumen/partner-kit',
      version,
      description: "Typed client of Lumen's partner API, with its sync, events and webhook-verification loops",
      type: 'module',
      main: './index.js',
      types: './types/src/partner-kit/index.d.ts',
      exports: { '.': { types: './types/src/partner-kit/index.d.ts', default: './index.js' } },
      engines: { node: '>=20' },
    },
    null,
    2,
  ) + '\n',
);
// The same folder as an npm tarball: what /docs/partner-kit.tgz serves (the executable
// carries it), installable with `npm install <lumen>/docs/partner-kit.tgz`.
const tarball = path.join(repo, 'dist/partner-kit.tgz');
rmSync(tarball, { force: true });
const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', path.dirname(tarball)], { cwd: out, encoding: 'utf8' }).trim().split('\n').pop()!;
renameSync(path.join(path.dirname(tarball), packed), tarball);
process.stdout.write(`partner kit: ${path.relative(repo, out)}/ (import from ${path.relative(repo, path.join(out, 'index.js'))}) and ${path.relative(repo, tarball)}\n`);
