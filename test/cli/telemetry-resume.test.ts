/**
 * `lumen telemetry ingest` on a long file: progress on stderr, and a run that is
 * interrupted says which lines are applied and how to resume, and the resumed run
 * finishes the file.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestTelemetryFile } from '../../src/services/city-data/index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeCityPole, makeTenant } from '../support/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

const DEVICES = 5;
const line = (i: number) => JSON.stringify({ deviceIdentifier: `TG-R${i % DEVICES}`, online: true, relayOn: i % 2 === 0, reportedAt: new Date(Date.UTC(2026, 2, 14, 0, 0, 0) + i * 1000).toISOString() });

async function cityWithDevices() {
  const tenant = await makeTenant(t.rt);
  for (let d = 0; d < DEVICES; d++) await makeCityPole(t.rt, { tenantId: tenant.id, device: `TG-R${d}` });
  return tenant.id;
}

describe('telemetry ingest: progress, stop and resume', { timeout: 60_000 }, () => {
  it('a stopped run reports the last applied line; resuming from it applies the rest', async () => {
    const tenantId = await cityWithDevices();
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'lumen-tel-')), 'reports.ndjson');
    writeFileSync(file, Array.from({ length: 4500 }, (_, i) => line(i + 1)).join('\n') + '\n');
    const stop = new AbortController();
    const seen: number[] = [];
    const first = await ingestTelemetryFile(t.rt, tenantId, file, {
      signal: stop.signal,
      onProgress: (s) => {
        seen.push(s.doneThroughLine);
        if (s.doneThroughLine >= 2000) stop.abort();
      },
    });
    expect(seen).toEqual([1000, 2000]);
    expect(first).toMatchObject({ stopped: true, doneThroughLine: 2000, received: 2000 });

    const rest = await ingestTelemetryFile(t.rt, tenantId, file, { skipLines: first.doneThroughLine });
    expect(rest).toMatchObject({ stopped: false, doneThroughLine: 4500, received: 2500, lines: 2500 });
    // The newest report of every device is the file's last for it.
    const states = await t.rt.db.selectFrom('telegestor').select(['identifier', 'last_communication_at']).where('tenant_id', '=', tenantId).orderBy('identifier').execute();
    expect(states.map((s) => s.last_communication_at!.toISOString())).toEqual(
      Array.from({ length: DEVICES }, (_, d) => new Date(Date.UTC(2026, 2, 14) + (4500 - ((4500 - d) % DEVICES)) * 1000).toISOString()),
    );
  });

  it('the command prints progress, and on SIGINT says which lines are applied and how to resume', async () => {
    const tenantId = await cityWithDevices();
    // node --import tsx (not the tsx wrapper, which answers SIGINT itself): the signal reaches Lumen.
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'telemetry', 'ingest', '--tenant', tenantId, '-'], {
      env: { ...t.env, LUMEN_LOG_LEVEL: 'warn', PATH: process.env.PATH ?? '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    const progressed = new Promise<void>((resolve) =>
      child.stderr.on('data', (c: Buffer) => {
        stderr += c.toString();
        if (/lines 1\.\.\d+ applied/.test(stderr)) resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.stdin.write(Array.from({ length: 2500 }, (_, i) => line(i + 1)).join('\n') + '\n');
    await Promise.race([progressed, exited]);
    child.kill('SIGINT');
    // The run notices the signal at the next line it reads.
    child.stdin.write(line(2501) + '\n');
    child.stdin.end();
    expect(await exited).toBe(130);
    const stopped = /stopped: lines 1\.\.(\d+) are applied; resume with: lumen telemetry ingest --tenant \S+ --skip-lines (\d+) -/.exec(stderr);
    expect(stopped, stderr).not.toBeNull();
    // Stopped at a batch boundary inside what was sent, and the resume point is that line.
    expect([1000, 2000]).toContain(Number(stopped![1]));
    expect(stopped![2]).toBe(stopped![1]);
    const applied = await t.rt.db.selectFrom('telegestor').select('last_communication_at').where('tenant_id', '=', tenantId).execute();
    expect(Math.max(...applied.map((a) => a.last_communication_at!.getTime()))).toBe(Date.UTC(2026, 2, 14) + Number(stopped![1]) * 1000);
  });
});
