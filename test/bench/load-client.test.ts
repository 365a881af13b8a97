import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childCpuMs, procStat, withChildCpu } from '../../bench/harness/cpu.js';
import { run } from '../../bench/harness/tools.js';
import { findExecutable } from '../../bench/harness/tools.js';
import { parseWrkOutput, runWrk, wrkVersion } from '../../bench/harness/wrk.js';

const wrk = findExecutable('wrk');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/;

describe('process CPU time from /proc', () => {
  it('reads a busy child\'s CPU through the waiting shell', async () => {
    // A child that spins until it has used 300 ms of CPU (however busy the machine): the
    // wrapper reports it, a sleeping one reports ~0.
    const busy = withChildCpu(process.execPath, ['-e', 'const s = process.cpuUsage(); const used = () => { const u = process.cpuUsage(s); return u.user + u.system; }; while (used() < 300_000) {}']);
    const idle = withChildCpu(process.execPath, ['-e', 'setTimeout(() => {}, 300)']);
    const b = childCpuMs((await run(busy.command, busy.args)).stdout);
    const i = childCpuMs((await run(idle.command, idle.args)).stdout);
    expect(b).not.toBeNull();
    expect(b!).toBeGreaterThanOrEqual(250);
    expect(i!).toBeLessThan(b! - 150);
  });

  it('keeps the child\'s exit status', async () => {
    const w = withChildCpu('sh', ['-c', 'exit 3']);
    expect((await run(w.command, w.args)).code).toBe(3);
  });

  it('reads this process\'s own stat', () => {
    const st = procStat(process.pid);
    expect(st?.ownMs).toBeGreaterThan(0);
    expect(procStat(2 ** 30)).toBeNull();
  });
});

describe('wrk as the load client', () => {
  const seen: { keys: string[]; bodies: string[]; methods: Set<string>; apiKeys: Set<string> } = { keys: [], bodies: [], methods: new Set(), apiKeys: new Set() };
  let server: http.Server;
  let url: string;
  let dir: string;

  beforeAll(async () => {
    if (!wrk) throw new Error('wrk is missing: apt-get install wrk (.ci/run installs it)');
    dir = mkdtempSync(path.join(os.tmpdir(), 'lumen-wrk-'));
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.methods.add(req.method ?? '');
        seen.apiKeys.add(String(req.headers['x-api-key']));
        if (req.headers['idempotency-key']) seen.keys.push(String(req.headers['idempotency-key']));
        if (chunks.length) seen.bodies.push(Buffer.concat(chunks).toString('utf8'));
        const status = req.url === '/refuse' ? 422 : 201;
        res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends every request with its own body and a new UUID, and counts what it sent', async () => {
    const r = await runWrk(wrk!, {
      url,
      path: '/api/external/service-orders',
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k-1' },
      body: JSON.stringify({ protocolNumber: 'BENCH-__UNIQUE__', note: 'a "quoted" ] ]] text' }),
      uuidHeader: 'idempotency-key',
      connections: 4,
      seconds: 1,
      scriptDir: dir,
    });
    expect(r.client).toBe('wrk');
    expect(r.non2xx).toBe(0);
    expect(r.errors).toBe(0);
    // wrk counts the answers it read; the server may have taken a few more that were cut at the end.
    expect(r.requests).toBeGreaterThan(100);
    expect(seen.keys.length).toBeGreaterThanOrEqual(r.requests);
    expect(new Set(seen.keys).size).toBe(seen.keys.length);
    for (const k of seen.keys) expect(k).toMatch(UUID);
    const protocols = seen.bodies.map((b) => (JSON.parse(b) as { protocolNumber: string; note: string }).protocolNumber);
    expect(new Set(protocols).size).toBe(protocols.length);
    expect(protocols.every((p) => /^BENCH-[0-9a-f]{8}-\d+-\d+$/.test(p))).toBe(true);
    expect(JSON.parse(seen.bodies[0]!).note).toBe('a "quoted" ] ]] text');
    expect([...seen.methods]).toEqual(['POST']);
    expect([...seen.apiKeys]).toEqual(['k-1']);
    expect(r.latencyMs.p50).toBeGreaterThan(0);
    expect(r.latencyMs.p99).toBeGreaterThanOrEqual(r.latencyMs.p50);
    expect(r.clientCpuMs).not.toBeNull();
  });

  it('reports answers that are not 2xx', async () => {
    const r = await runWrk(wrk!, { url, path: '/refuse', method: 'GET', headers: {}, connections: 1, seconds: 1, scriptDir: dir });
    expect(r.requests).toBeGreaterThan(0);
    expect(r.non2xx).toBe(r.requests);
    expect(r.status2xx).toBe(0);
  });

  it('names its version and refuses output without a result', async () => {
    expect(await wrkVersion(wrk)).toMatch(/^wrk /);
    expect(await wrkVersion(null)).toBe('missing');
    expect(() => parseWrkOutput('Running 1s test\n')).toThrow(/no result/);
  });
});
