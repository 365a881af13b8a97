import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Capability boundaries: code outside a capability imports it through its
 * index.ts only. A capability is a folder of src/services/, or a folder of src/
 * with an index.ts that is not one of the layers (cli, http, handlers, db, jobs, lib).
 */
const SRC = path.resolve(import.meta.dirname, '../../src');
const LAYERS = new Set(['cli', 'http', 'handlers', 'db', 'jobs', 'lib']);

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p) : /\.tsx?$/.test(e.name) ? [p] : [];
  });
}

export function capabilityRoots(src: string): string[] {
  const services = path.join(src, 'services');
  const inServices = fs
    .readdirSync(services, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => path.join(services, e.name));
  const topLevel = fs
    .readdirSync(src, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== 'services' && !LAYERS.has(e.name) && fs.existsSync(path.join(src, e.name, 'index.ts')))
    .map((e) => path.join(src, e.name));
  return [...inServices, ...topLevel];
}

/** Relative module specifiers of a file: static imports and re-exports, side-effect imports, dynamic import(). */
export function relativeSpecifiers(source: string): string[] {
  const found: string[] = [];
  const patterns = [/\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]/g, /\bimport\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g, /^\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/gm];
  for (const re of patterns) for (const m of source.matchAll(re)) found.push(m[1]!);
  return found;
}

/** Imports that reach behind another capability's index.ts, as `file -> target` lines. */
export function deepImports(src: string): string[] {
  const roots = capabilityRoots(src);
  const rootOf = (file: string) => roots.find((r) => file.startsWith(r + path.sep));
  const bad: string[] = [];
  for (const file of walk(src)) {
    const own = rootOf(file);
    for (const spec of relativeSpecifiers(fs.readFileSync(file, 'utf8'))) {
      const target = path.resolve(path.dirname(file), spec).replace(/\.js$/, '.ts');
      const root = rootOf(target);
      if (!root || root === own) continue;
      if (target !== path.join(root, 'index.ts')) bad.push(`${path.relative(src, file)} -> ${path.relative(src, target)}`);
    }
  }
  return bad;
}

/**
 * Layers services must not reach up into: data flows downhill (cli/http/handlers/jobs →
 * services → db/lib). A service enqueues through the JobPort that AppDeps provides and
 * scans JSON with lib/openapi.ts; importing app-deps.ts (which names the Jobs class) would
 * close the circle jobs → services → app-deps → jobs again.
 */
const UPHILL = ['jobs', 'http', 'handlers', 'cli'];

/** Imports from src/services/ into a layer above it (or app-deps.ts), as `file -> target` lines. */
export function uphillImports(src: string): string[] {
  const services = path.join(src, 'services');
  const above = UPHILL.map((d) => path.join(src, d));
  const bad: string[] = [];
  for (const file of walk(services)) {
    for (const spec of relativeSpecifiers(fs.readFileSync(file, 'utf8'))) {
      const target = path.resolve(path.dirname(file), spec).replace(/\.js$/, '.ts');
      if (above.some((d) => target.startsWith(d + path.sep)) || target === path.join(src, 'app-deps.ts')) bad.push(`${path.relative(src, file)} -> ${path.relative(src, target)}`);
    }
  }
  return bad;
}

describe('services import nothing above them', () => {
  it('no file of src/services imports src/jobs, src/http, src/handlers, src/cli or app-deps.ts', () => {
    expect(uphillImports(SRC)).toEqual([]);
  });

  it('catches an uphill import, also a type-only or dynamic one (the check itself works)', () => {
    const tmp = fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR ?? '/tmp'), 'lumen-uphill-'));
    try {
      for (const [p, text] of Object.entries({
        'services/a/index.ts': "import { enqueue } from '../../jobs/x.job.js';\nexport const f = enqueue;\n",
        'services/a/scan.ts': "import type { X } from '../../http/openapi.js';\nexport type Y = X;\n",
        'services/b/index.ts': "import type { AppDeps } from '../../app-deps.js';\nconst lazy = () => import('../../handlers/h.js');\nexport { lazy };\nexport type D = AppDeps;\n",
        'services/b/ok.ts': "import { g } from '../../lib/g.js';\nimport type { ServiceDeps } from '../deps.js';\nexport { g };\nexport type S = ServiceDeps;\n",
        'jobs/x.job.ts': "import { f } from '../services/a/index.js';\nexport const enqueue = f;\n",
      })) {
        fs.mkdirSync(path.dirname(path.join(tmp, p)), { recursive: true });
        fs.writeFileSync(path.join(tmp, p), text);
      }
      expect(uphillImports(tmp).sort()).toEqual([
        'services/a/index.ts -> jobs/x.job.ts',
        'services/a/scan.ts -> http/openapi.ts',
        'services/b/index.ts -> app-deps.ts',
        'services/b/index.ts -> handlers/h.ts',
      ]);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('capability boundaries', () => {
  it('finds the capabilities', () => {
    const names = capabilityRoots(SRC).map((r) => path.relative(SRC, r));
    expect(names).toEqual(expect.arrayContaining(['services/intake', 'services/events', 'services/city-data', 'services/operations']));
    for (const root of capabilityRoots(SRC)) expect(fs.existsSync(path.join(root, 'index.ts')), `${root}/index.ts`).toBe(true);
  });

  it('no code imports a file behind another capability’s index.ts', () => {
    expect(deepImports(SRC)).toEqual([]);
  });

  it('catches a deep import (the check itself works)', () => {
    const tmp = fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR ?? '/tmp'), 'lumen-boundaries-'));
    try {
      for (const [p, text] of Object.entries({
        'services/a/index.ts': "export { f } from './impl.js';\n",
        'services/a/impl.ts': 'export const f = 1;\n',
        'services/b/index.ts': "import { f } from '../a/impl.js';\nexport const g = f;\n",
        'handlers/h.ts': "import { f } from '../services/a/index.js';\nconst lazy = () => import('../services/b/impl.js');\nexport { f, lazy };\n",
        'services/b/impl.ts': 'export const h = 1;\n',
      })) {
        fs.mkdirSync(path.dirname(path.join(tmp, p)), { recursive: true });
        fs.writeFileSync(path.join(tmp, p), text);
      }
      expect(deepImports(tmp).sort()).toEqual(['handlers/h.ts -> services/b/impl.ts', 'services/b/index.ts -> services/a/impl.ts']);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
