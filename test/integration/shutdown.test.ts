import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { startTestApp } from '../support/app.js';
import { makePartner } from '../support/factories.js';

describe('graceful shutdown', () => {
  it('stops accepting, lets an in-flight request finish, then closes', async () => {
    const t = await startTestApp();
    const p = await makePartner(t.rt, { scopes: ['canCreateServiceOrders'] });
    const body = JSON.stringify({ hello: 'world' });
    const socket = net.connect(t.app.address.port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    const response = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (c) => (text += c.toString()));
      socket.on('close', () => resolve(text));
    });
    // Headers and half of the body: the request is in flight, its handler waits for the rest.
    socket.write(`POST /api/external/service-orders HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${p.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
    // Wait until the server is handling the request.
    await expect.poll(() => t.app.http.inFlight, { timeout: 5000 }).toBe(1);

    let stopped = false;
    const stopping = t.app.stop().then(() => (stopped = true));
    await expect.poll(() => t.app.http.draining).toBe(true);
    // New connections are refused while draining.
    const refused = await new Promise<boolean>((resolve) => {
      const c = net.connect(t.app.address.port, '127.0.0.1');
      c.once('connect', () => {
        c.destroy();
        resolve(false);
      });
      c.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
    expect(stopped).toBe(false);

    socket.end(body.slice(5));
    const text = await response;
    expect(text).toMatch(/^HTTP\/1\.1 \d{3}/);
    expect(text).toContain('x-request-id');
    await stopping;
    expect(stopped).toBe(true);
    await t.db.drop();
  });

  it('drops at once a request whose client left before its body arrived, instead of waiting out the body timeout', async () => {
    // The default body timeout (60 s) stays: a request left waiting for it would also
    // keep a stopped process alive that long.
    const t = await startTestApp();
    const p = await makePartner(t.rt, { scopes: ['canCreateServiceOrders'] });
    const socket = net.connect(t.app.address.port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    // Headers and the start of a body, then the client goes while its key is checked.
    socket.write(`POST /api/external/service-orders HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${p.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"pro`);
    socket.destroy();
    await expect.poll(() => t.logs.lines.some((l) => l.includes('request abandoned by the client')), { timeout: 10_000 }).toBe(true);
    expect(t.app.http.inFlight).toBe(0);
    expect(t.logs.text).not.toContain('unhandled error');
    await t.app.stop();
    await t.db.drop();
  });
});
