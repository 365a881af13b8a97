import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { recordReliability } from '../support/reliability.js';

let t: TestApp;
let cert: Buffer;

beforeAll(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lumen-tls-'));
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  cert = readFileSync(certFile);
  t = await startTestApp({ env: { LUMEN_TLS_CERT_FILE: certFile, LUMEN_TLS_KEY_FILE: keyFile } });
});
afterAll(async () => {
  await t?.stop();
});

function get(options: https.RequestOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    https.get({ host: '127.0.0.1', port: t.app.address.port, path: '/livez', ca: cert, agent: false, ...options }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
}

describe('TLS termination', () => {
  it('serves HTTPS with TLS 1.2 and 1.3', async () => {
    expect(await get({ minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' })).toBe(200);
    expect(await get({ minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' })).toBe(200);
  });

  it('refuses a client that offers only TLS 1.1 (a client that a TLS 1.1 server accepts)', async () => {
    const keyFile = t.env.LUMEN_TLS_KEY_FILE!;
    // Control: the same client does connect to a server that still allows TLS 1.1.
    const legacy = tls.createServer({ cert, key: readFileSync(keyFile), minVersion: 'TLSv1', ciphers: 'DEFAULT@SECLEVEL=0' }, (s) => s.end());
    await new Promise<void>((r) => legacy.listen(0, '127.0.0.1', r));
    const control = await connectTls1_1((legacy.address() as { port: number }).port);
    legacy.close();
    expect(control).toBe('connected with TLSv1.1');
    expect(await connectTls1_1(t.app.address.port)).toMatch(/^refused/);
    recordReliability('Security: rate limits and TLS', { item: 'TLS termination by lumen serve', figure: 'TLS 1.2 and 1.3 served; a TLS 1.1-only client refused', detail: 'the same client connects to a server that allows TLS 1.1 (control)' });
  });
});

function connectTls1_1(port: number): Promise<string> {
  return new Promise<string>((resolve) => {
      const socket = tls.connect({ host: '127.0.0.1', port, ca: cert, minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' }, () => {
        resolve(`connected with ${socket.getProtocol()}`);
        socket.destroy();
      });
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(`refused: ${err.code ?? err.message}`));
  });
}
