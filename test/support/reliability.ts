/**
 * The figures behind RELIABILITY.md. A test that proves a reliability or
 * security property records what it did (requests sent, cases tried, faults
 * injected, losses found, durations) here; `npm run reliability:report`
 * (scripts/reliability-report.ts) turns every recorded line into the document.
 *
 * One JSON line per row, appended to `.tmp/reliability/<section>.jsonl` at the
 * repository root. Each row is written with a single O_APPEND write well under
 * the size the kernel appends atomically, so parallel test files (separate
 * processes) never interleave lines. A later row with the same section and item
 * replaces an earlier one in the report, so re-running a file refreshes its
 * figures instead of duplicating them.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

export interface ReliabilityRow {
  /** What was measured or proved, e.g. "intake requests acknowledged then found". */
  item: string;
  /** The figure, as it should read in the report, e.g. "2 400 of 2 400" or "0". */
  figure: string;
  /** How it was obtained, in a sentence. */
  detail?: string;
}

/** Where the recorded lines live (repository-root relative `.tmp/reliability`). */
export const RELIABILITY_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../.tmp/reliability');

/** Largest line written at once; longer details are cut so a line stays one atomic append. */
const MAX_LINE_BYTES = 3500;

function sectionFile(section: string): string {
  const slug = section
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .toLowerCase();
  if (!slug) throw new Error(`reliability section name has no letters or digits: ${JSON.stringify(section)}`);
  return path.join(RELIABILITY_DIR, `${slug}.jsonl`);
}

/** Append one row to the section's file (creating the folder on first use). */
export function recordReliability(section: string, row: ReliabilityRow): void {
  if (!row.item || !row.figure) throw new Error('a reliability row needs an item and a figure');
  const entry = {
    section,
    item: row.item,
    figure: row.figure,
    ...(row.detail ? { detail: row.detail } : {}),
    recordedAt: new Date().toISOString(),
    file: currentTestFile(),
  };
  let line = `${JSON.stringify(entry)}\n`;
  if (Buffer.byteLength(line) > MAX_LINE_BYTES && entry.detail) {
    entry.detail = `${entry.detail.slice(0, 1000)}…`;
    line = `${JSON.stringify(entry)}\n`;
  }
  mkdirSync(RELIABILITY_DIR, { recursive: true });
  appendFileSync(sectionFile(section), line, { flag: 'a' });
}

/** The test file that is running, relative to the repository root. */
function currentTestFile(): string | undefined {
  const file = expect.getState().testPath;
  return file ? path.relative(path.resolve(RELIABILITY_DIR, '../..'), file) : undefined;
}
