import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Request and job traffic may go through a transaction-pooling PgBouncer
 * (docs/operations.md): no session state may outlive a transaction there. Session
 * features are allowed only in the files that run on the direct connection
 * (LUMEN_DIRECT_DATABASE_URL), each for the reason given.
 */
const SRC = path.resolve(import.meta.dirname, '../../src');

const ALLOWED: Record<string, { pattern: RegExp; files: string[] }> = {
  'session advisory lock': { pattern: /pg_(try_)?advisory_(un)?lock(_shared)?\s*\(/, files: ['db/migrator.ts'] }, // migrations: direct pool
  'LISTEN': { pattern: /[`'"]LISTEN\s/, files: ['jobs/channel-listener.ts'] }, // its own direct client
  'temporary table': { pattern: /CREATE\s+TEMP(ORARY)?\s+TABLE/i, files: ['db/repositories/city-data/pole-import.repository.ts'] }, // CLI: direct pool
  // SET (SQL keywords are upper case in src/) outside a transaction-local set_config(..., true): pole import (CLI, direct pool) only,
  // the embedded server's own upgrade (a client of its own; the embedded database has no pooler), and `SET jit = off` as each
  // connection opens (db/database.ts): a planner setting only, the same for every Lumen session, so one left on a pooled server
  // connection changes nothing another Lumen client would not set itself
  'session SET': { pattern: /[`'"]\s*(SET|RESET)\s+(?!LOCAL\b)[a-z_]+/, files: ['db/database.ts', 'db/embedded/cluster.ts', 'services/city-data/pole-import/service.ts'] },
  'session set_config': { pattern: /set_config\([^)]*,\s*false\s*\)/, files: ['services/city-data/pole-import/service.ts'] },
  'named prepared statement': { pattern: /\bname:\s*['"`][^'"`]+['"`]\s*,\s*text:/, files: [] },
};

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p) : /\.ts$/.test(e.name) ? [p] : [];
  });
}

describe('session state in src/ (PgBouncer transaction pooling)', () => {
  const files = walk(SRC).map((f) => ({ rel: path.relative(SRC, f).split(path.sep).join('/'), text: fs.readFileSync(f, 'utf8') }));
  for (const [what, rule] of Object.entries(ALLOWED)) {
    it(`uses ${what} only where a direct connection runs it`, () => {
      const found = files.filter((f) => rule.pattern.test(f.text)).map((f) => f.rel);
      expect(found.sort()).toEqual(rule.files.filter((f) => found.includes(f)).sort());
    });
  }
  it('finds what it looks for (the rules are not vacuous)', () => {
    for (const [what, rule] of Object.entries(ALLOWED)) {
      for (const f of rule.files) expect(rule.pattern.test(fs.readFileSync(path.join(SRC, f), 'utf8')), `${what} in ${f}`).toBe(true);
    }
  });
});
