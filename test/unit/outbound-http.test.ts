import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressRefusal, outboundRequest, OutboundError } from '../../src/lib/outbound-http.js';

let server: http.Server;
let base: string;
let hangRelease: (() => void) | null = null;
const stalledBodies: (() => void)[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/ok') return res.end('hello');
    if (req.url === '/big') return res.end(Buffer.alloc(4096));
    if (req.url === '/big-chunked') {
      // No content-length: the size is only known while the body streams.
      for (let i = 0; i < 8; i++) res.write(Buffer.alloc(512));
      return res.end();
    }
    if (req.url === '/chunked') {
      res.write('hel');
      return res.end('lo');
    }
    if (req.url === '/stalled-body') {
      // Headers and part of a declared body, then nothing: only Lumen's own deadline ends it.
      res.writeHead(200, { 'content-length': '10' }).write('abc');
      stalledBodies.push(() => res.end('defghij'));
      return;
    }
    if (req.url === '/hang') {
      hangRelease = () => res.end('late');
      return;
    }
    if (req.url === '/no-content') return res.writeHead(204).end();
    if (req.url === '/to-ok') return res.writeHead(302, { location: '/ok' }).end();
    if (req.url === '/to-private') return res.writeHead(302, { location: 'http://10.1.2.3/x' }).end();
    if (req.url === '/loop') return res.writeHead(302, { location: '/loop' }).end();
    if (req.url === '/echo' && req.method === 'POST') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => res.writeHead(201, { 'content-type': 'text/plain' }).end(Buffer.concat(chunks)));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  hangRelease?.();
  for (const release of stalledBodies) release();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const opts = { timeoutMs: 2000, maxResponseBytes: 1024, allowLoopback: true };

async function kind(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    expect(err).toBeInstanceOf(OutboundError);
    return (err as OutboundError).kind;
  }
}

describe('outbound HTTP', () => {
  it('fetches and posts on loopback when allowed', async () => {
    const res = await outboundRequest({ ...opts, url: `${base}/ok` });
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('hello');
    const post = await outboundRequest({ ...opts, url: `${base}/echo`, method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
    expect(post.status).toBe(201);
    expect(post.body.toString()).toBe('{"a":1}');
  });

  it('refuses plain http, loopback names and literals when loopback is not allowed', async () => {
    expect(await kind(outboundRequest({ ...opts, allowLoopback: false, url: `${base}/ok` }))).toBe('insecure-scheme');
    expect(await kind(outboundRequest({ ...opts, allowLoopback: false, url: `https://127.0.0.1:1/x` }))).toBe('blocked-address');
    expect(await kind(outboundRequest({ ...opts, allowLoopback: false, url: `https://localhost:1/x` }))).toBe('blocked-address');
    expect(await kind(outboundRequest({ ...opts, allowLoopback: false, url: `https://[::1]:1/x` }))).toBe('blocked-address');
    expect(await kind(outboundRequest({ ...opts, allowLoopback: false, url: `https://169.254.169.254/latest/meta-data` }))).toBe('blocked-address');
    expect(await kind(outboundRequest({ ...opts, allowLoopback: true, url: `http://10.0.0.8/x` }))).toBe('blocked-address');
    expect(await kind(outboundRequest({ ...opts, url: `ftp://x/y` }))).toBe('insecure-scheme');
    expect(await kind(outboundRequest({ ...opts, url: `not a url` }))).toBe('invalid-url');
  });

  it('classifies every non-public range and passes public addresses', () => {
    for (const a of ['10.1.1.1', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', 'fd00:ec2::254', 'fe80::1', '::ffff:10.0.0.1']) {
      expect(addressRefusal(a, true), a).not.toBeNull();
    }
    expect(addressRefusal('127.0.0.1', false)).toMatch(/loopback/);
    expect(addressRefusal('::ffff:127.0.0.1', false)).toMatch(/loopback/);
    expect(addressRefusal('127.0.0.1', true)).toBeNull();
    for (const a of ['8.8.8.8', '200.160.2.3', '2001:4860:4860::8888']) expect(addressRefusal(a, false), a).toBeNull();
  });

  // One row per form: every special-purpose range of the IANA registries, the spellings
  // of IPv4 inside IPv6, and the public addresses that must pass.
  it.each([
    // IPv4 special-purpose
    ['0.0.0.0', 'unspecified'], ['10.0.0.1', 'private'], ['100.64.0.1', 'shared (CGN)'], ['127.0.0.1', 'loopback'],
    ['169.254.169.254', 'link-local / cloud metadata'], ['172.16.0.1', 'private'], ['192.0.0.1', 'IETF protocol assignments'],
    ['192.0.2.1', 'TEST-NET-1'], ['192.31.196.1', 'AS112'], ['192.52.193.1', 'AMT'], ['192.88.99.1', '6to4 relay anycast'],
    ['192.168.1.1', 'private'], ['192.175.48.1', 'direct delegation AS112'], ['198.18.0.1', 'benchmarking'],
    ['198.51.100.1', 'TEST-NET-2'], ['203.0.113.1', 'TEST-NET-3'], ['224.0.0.1', 'multicast'], ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    // IPv4 inside IPv6: mapped in every spelling, the deprecated compatible form, translation prefixes
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'], ['::ffff:7f00:1', 'IPv4-mapped loopback (hex)'], ['::ffff:0:0', 'IPv4-mapped unspecified'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'], ['::ffff:a9fe:a9fe', 'IPv4-mapped metadata (hex)'],
    ['::127.0.0.1', 'IPv4-compatible loopback'], ['::7f00:1', 'IPv4-compatible loopback (hex)'], ['::a9fe:a9fe', 'IPv4-compatible metadata'],
    ['::8.8.8.8', 'IPv4-compatible public (deprecated form)'], ['64:ff9b::a9fe:a9fe', 'NAT64 well-known prefix'], ['64:ff9b:1::1', 'local-use NAT64'],
    ['2002:a9fe:a9fe::1', '6to4'], ['2001::1', 'Teredo'], ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    // IPv6 special-purpose
    ['::', 'unspecified'], ['::1', 'loopback'], ['100::1', 'discard-only'], ['2001:2::1', 'benchmarking'], ['2001:10::1', 'ORCHID'],
    ['2001:20::1', 'ORCHIDv2'], ['2001:db8::1', 'documentation'], ['3fff::1', 'documentation (2024)'], ['5f00::1', 'segment routing'],
    ['fc00::1', 'unique local'], ['fd00:ec2::254', 'unique local (cloud metadata)'], ['fe80::1', 'link-local'], ['fe80::1%eth0', 'link-local with zone'],
    ['fec0::1', 'deprecated site-local'], ['ff02::1', 'multicast'],
  ])('refuses %s (%s)', (address) => {
    expect(addressRefusal(address, false)).not.toBeNull();
    if (!/^(127\.|::1$|::ffff:127|::ffff:7f00)/.test(address)) expect(addressRefusal(address, true)).not.toBeNull();
  });

  it.each(['8.8.8.8', '200.160.2.3', '::ffff:8.8.8.8', '::ffff:808:808', '2001:4860:4860::8888', '2804:14c:65d3::1'])('passes the public address %s', (address) => {
    expect(addressRefusal(address, false)).toBeNull();
  });

  it('enforces the time and size bounds', async () => {
    expect(await kind(outboundRequest({ ...opts, url: `${base}/big` }))).toBe('too-large');
    expect(await kind(outboundRequest({ ...opts, url: `${base}/big-chunked` }))).toBe('too-large');
    expect((await outboundRequest({ ...opts, url: `${base}/chunked` })).body.toString()).toBe('hello');
    expect(await kind(outboundRequest({ ...opts, timeoutMs: 150, url: `${base}/hang` }))).toBe('timeout');
    expect(await kind(outboundRequest({ ...opts, timeoutMs: 150, url: `${base}/stalled-body` }))).toBe('timeout');
  });

  it("stops at the caller's abort, before sending or mid-answer, and the origin's next request still gets its answer", async () => {
    const early = new AbortController();
    early.abort();
    expect(await kind(outboundRequest({ ...opts, url: `${base}/ok`, signal: early.signal }))).toBe('aborted');
    const late = new AbortController();
    const before = stalledBodies.length;
    const stalled = outboundRequest({ ...opts, url: `${base}/stalled-body`, signal: late.signal });
    // The answer's headers and first bytes have arrived when the server holds the rest back.
    await new Promise<void>((resolve) => {
      const check = () => (stalledBodies.length > before ? resolve() : setImmediate(check));
      check();
    });
    late.abort();
    expect(await kind(stalled)).toBe('aborted');
    const after = await outboundRequest({ ...opts, url: `${base}/ok` });
    expect([after.status, after.body.toString()]).toEqual([200, 'hello']);
  });

  it('answers a 204 with an empty body', async () => {
    const r = await outboundRequest({ ...opts, url: `${base}/no-content`, method: 'POST', body: '{}' });
    expect(r.status).toBe(204);
    expect(r.body.length).toBe(0);
  });

  it('returns redirects as answers by default and re-checks every followed hop', async () => {
    const plain = await outboundRequest({ ...opts, url: `${base}/to-ok` });
    expect(plain.status).toBe(302);
    const followed = await outboundRequest({ ...opts, url: `${base}/to-ok`, maxRedirects: 3 });
    expect(followed.body.toString()).toBe('hello');
    expect(await kind(outboundRequest({ ...opts, url: `${base}/to-private`, maxRedirects: 3 }))).toBe('blocked-address');
    expect(await kind(outboundRequest({ ...opts, url: `${base}/loop`, maxRedirects: 3 }))).toBe('too-many-redirects');
  });
});
