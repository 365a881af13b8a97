/**
 * lumen serve on the embedded database, with real processes: a postmaster killed
 * with SIGKILL is started again (/readyz comes back); one that cannot come back
 * makes /livez fail, so that an orchestrator restarts Lumen.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { LogSink } from '../support/app.js';

const dirs: string[] = [];
const running: { rt: Runtime; app: RunningApp }[] = [];
afterAll(async () => {
  for (const r of running) {
    await r.app.stop().catch(() => {});
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function serveEmbedded(extra: Record<string, string>) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'lumen-supervise-'));
  dirs.push(dataDir);
  const env = { LUMEN_DATA_DIR: dataDir, LUMEN_ENVIRONMENT: 'test', PORT: '0', HOST: '127.0.0.1', LUMEN_EMBEDDED_RESTART_DELAY_MS: '50', ...extra };
  const logs = new LogSink();
  const rt = await openRuntime(loadConfig(env), createLogger('info', logs), { migrate: true, work: true, poolSize: 4 });
  const app = await startApp(rt);
  running.push({ rt, app });
  const base = `http://127.0.0.1:${app.address.port}`;
  const postmaster = () => Number(readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  return { dataDir, base, logs, postmaster };
}

/** Polls a condition with a bound (no fixed sleeps). */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const status = (url: string) => fetch(url).then((r) => r.status, () => 0);

describe('supervision of the embedded PostgreSQL', { timeout: 120_000 }, () => {
  it('starts a killed postmaster again: /readyz comes back, /livez stays 200', async () => {
    const s = await serveEmbedded({});
    expect(await status(`${s.base}/readyz`)).toBe(200);
    const first = s.postmaster();
    process.kill(first, 'SIGKILL');
    await until('readyz 503 after the kill', async () => (await status(`${s.base}/readyz`)) === 503);
    expect(await status(`${s.base}/livez`)).toBe(200);
    await until('readyz 200 again', async () => (await status(`${s.base}/readyz`)) === 200);
    await until('the restart logged', async () => s.logs.lines.some((l) => l.includes('the embedded PostgreSQL is running again')));
    expect(s.postmaster()).not.toBe(first);
    expect(s.logs.lines.some((l) => l.includes('the embedded PostgreSQL is gone; starting it again'))).toBe(true);
    expect(await status(`${s.base}/livez`)).toBe(200);
  });

  it('makes /livez fail with the cause, no path, while the server cannot come back, and recovers by itself once the cause is gone', async () => {
    const s = await serveEmbedded({ LUMEN_EMBEDDED_RESTART_ATTEMPTS: '2' });
    // A configuration the server refuses to start with.
    const auto = path.join(s.dataDir, 'postgres', 'postgresql.auto.conf');
    const original = readFileSync(auto, 'utf8');
    writeFileSync(auto, 'shared_buffers = nonsense\n');
    process.kill(s.postmaster(), 'SIGKILL');
    await until('livez 503', async () => (await status(`${s.base}/livez`)) === 503);
    const body = (await (await fetch(`${s.base}/livez`)).json()) as { status: string; reason: string };
    expect(body).toMatchObject({ status: 'failing', reason: expect.stringMatching(/could not be started again after \d+ attempt\(s\), still trying: .*refuses a setting: invalid value for parameter "shared_buffers": "nonsense"/) });
    // Unauthenticated: it names no path of the machine.
    expect(body.reason).not.toContain(s.dataDir);
    expect(body.reason).not.toMatch(/\/(tmp|work|home|var)\//);
    expect(s.logs.lines.some((l) => l.includes('starting the embedded PostgreSQL again failed'))).toBe(true);
    // The cause fixed: it keeps trying and comes back without a restart of Lumen.
    writeFileSync(auto, original);
    await until('livez 200 again', async () => (await status(`${s.base}/livez`)) === 200);
    await until('readyz 200 again', async () => (await status(`${s.base}/readyz`)) === 200);
  });
});
