import { describe, expect, it } from 'vitest';
import { parseTrustedProxies, TrustedProxies } from '../../src/lib/trusted-proxies.js';

describe('the client behind trusted proxies', () => {
  const proxies = new TrustedProxies(['10.0.0.0/8', '127.0.0.1', 'fd00::/8']);

  it('believes forwarding headers only from a trusted peer, from the right, skipping trusted hops', () => {
    expect(proxies.clientOf('10.1.2.3', { 'x-forwarded-for': '198.51.100.7' })).toBe('198.51.100.7');
    // The client wrote the leftmost entries itself: the rightmost untrusted one is the client.
    expect(proxies.clientOf('10.1.2.3', { 'x-forwarded-for': '1.2.3.4, 198.51.100.7, 10.9.9.9' })).toBe('198.51.100.7');
    expect(proxies.clientOf('::ffff:127.0.0.1', { 'x-forwarded-for': '203.0.113.5' })).toBe('203.0.113.5');
    // A peer that is not trusted is the client, whatever it claims.
    expect(proxies.clientOf('198.51.100.20', { 'x-forwarded-for': '203.0.113.5' })).toBe('198.51.100.20');
    expect(proxies.clientOf('::ffff:198.51.100.20', {})).toBe('198.51.100.20');
    // Forwarded (RFC 7239) wins over X-Forwarded-For; IPv6 in brackets with a port; garbage stops the walk.
    expect(proxies.clientOf('10.0.0.1', { forwarded: 'for=192.0.2.60;proto=https, for="[2001:db8::17]:4711"', 'x-forwarded-for': '1.1.1.1' })).toBe('2001:db8::17');
    expect(proxies.clientOf('10.0.0.1', { 'x-forwarded-for': 'unknown, 10.0.0.2' })).toBe('10.0.0.1');
    expect(proxies.clientOf('10.0.0.1', { 'x-forwarded-for': '203.0.113.9:5555' })).toBe('203.0.113.9');
    // Only trusted hops: the peer.
    expect(proxies.clientOf('10.0.0.1', { 'x-forwarded-for': '10.0.0.2' })).toBe('10.0.0.1');
    expect(new TrustedProxies([]).clientOf('10.0.0.1', { 'x-forwarded-for': '203.0.113.5' })).toBe('10.0.0.1');
  });

  it('reads LUMEN_TRUSTED_PROXIES and names a bad entry', () => {
    expect(parseTrustedProxies('10.0.0.0/8, fd00::/8 ,127.0.0.1')).toEqual({ cidrs: ['10.0.0.0/8', 'fd00::/8', '127.0.0.1'] });
    expect(parseTrustedProxies('')).toEqual({ cidrs: [] });
    expect(parseTrustedProxies('10.0.0.0/8,proxy.internal')).toEqual({ problem: expect.stringContaining('"proxy.internal"') });
  });
});
