import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('npm run reliability:report', () => {
  it('writes one table per section from the recorded lines, the latest figure of an item winning, with the machine', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'lumen-reliability-'));
    const line = (section: string, item: string, figure: string, at: string) => JSON.stringify({ section, item, figure, detail: 'how | it was done', recordedAt: at, file: 'test/x.test.ts' });
    writeFileSync(
      path.join(dir, 'faults.jsonl'),
      [line('Faults: kill -9', 'acknowledged requests lost', '3', '2026-01-01T00:00:00.000Z'), line('Faults: kill -9', 'acknowledged requests lost', '0', '2026-01-02T00:00:00.000Z'), 'not json'].join('\n'),
    );
    writeFileSync(path.join(dir, 'conformance.jsonl'), `${line('Conformance to the published contract', 'partner.yaml', '0 violations', '2026-01-01T00:00:00.000Z')}\n`);
    const out = path.join(dir, 'RELIABILITY.md');
    await run(path.resolve('node_modules/.bin/tsx'), ['scripts/reliability-report.ts', '--dir', dir, '--out', out]);
    const text = readFileSync(out, 'utf8');
    expect(text).toMatch(/^# Reliability/);
    expect(text).toMatch(/- CPU: \d+ × /);
    expect(text).toContain('- Node.js: v');
    expect(text).toMatch(/- Database: .*PostgreSQL/);
    // Conformance comes before faults, whatever the file names.
    expect(text.indexOf('## Conformance to the published contract')).toBeLessThan(text.indexOf('## Faults: kill -9'));
    expect(text).toContain('| acknowledged requests lost | 0 | how \\| it was done |');
    expect(text).not.toContain('| acknowledged requests lost | 3 |');
  });

  it('fails when nothing was recorded', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'lumen-reliability-'));
    await expect(run(path.resolve('node_modules/.bin/tsx'), ['scripts/reliability-report.ts', '--dir', dir, '--out', path.join(dir, 'R.md')])).rejects.toMatchObject({ code: 1 });
  });
});
