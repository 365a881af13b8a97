import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';

let mock: ChildProcess | undefined;
afterAll(() => {
  // The npm process leads its own group: npm, tsx, the front server and Prism go together.
  if (mock?.pid) process.kill(-mock.pid, 'SIGTERM');
});

/** Resolves with the line the mock prints once it serves; rejects when it exits first. */
function started(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const line = out.split('\n').find((l) => l.startsWith('mock: '));
      if (line) resolve(line);
    });
    child.once('exit', (code) => reject(new Error(`the mock exited (${code}) before serving:\n${out}`)));
  });
}

describe('npm run mock', { timeout: 90_000 }, () => {
  it('serves on the port given after --, and answers malformed JSON with 400 instead of hanging', async () => {
    const port = await freePort();
    mock = spawn('npm', ['run', '--silent', 'mock', '--', '-p', String(port)], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    mock.stderr!.resume();
    expect(await started(mock)).toContain(`http://127.0.0.1:${port}`);

    const health = await fetch(`http://127.0.0.1:${port}/api/external/health`, { headers: { 'x-api-key': 'any' }, signal: AbortSignal.timeout(10_000) });
    expect(health.status).toBe(200);
    expect(((await health.json()) as { status: string }).status).toBe('ok');

    const malformed = await fetch(`http://127.0.0.1:${port}/api/external/service-orders`, {
      method: 'POST',
      headers: { 'x-api-key': 'any', 'content-type': 'application/json' },
      body: '{"protocolNumber":',
      signal: AbortSignal.timeout(10_000),
    });
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await malformed.json()) as { type: string }).type).toBe('urn:lumen:problem:malformed-json');

    // Well-formed bodies still reach Prism, which checks them against the contract.
    const wrong = await fetch(`http://127.0.0.1:${port}/api/external/service-orders`, {
      method: 'POST',
      headers: { 'x-api-key': 'any', 'content-type': 'application/json' },
      body: JSON.stringify({ protocolNumber: 'X' }),
      signal: AbortSignal.timeout(10_000),
    });
    expect(wrong.status).toBe(422);
  });
});
