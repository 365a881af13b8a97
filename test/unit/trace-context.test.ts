/**
 * Outbound `traceparent` values: a new span id for every call (drawn from the pooled
 * random bytes), the current trace kept, a new trace outside one.
 */
import { describe, expect, it } from 'vitest';
import { outboundTraceparent, parseTraceparent, randomHex, withTrace } from '../../src/lib/trace-context.js';

describe('outbound trace context', () => {
  it('draws distinct random ids of the asked length across refills of the pool', () => {
    const seen = new Set<string>();
    // 24 bytes a delivery, well past one 4 KB pool.
    for (let i = 0; i < 1000; i++) {
      const id = randomHex(i % 2 === 0 ? 16 : 8);
      expect(id).toMatch(i % 2 === 0 ? /^[0-9a-f]{32}$/ : /^[0-9a-f]{16}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(1000);
    expect(() => randomHex(5000)).toThrow(RangeError);
  });

  it('starts a trace outside a request and continues the request’s trace inside one', () => {
    const a = parseTraceparent(outboundTraceparent());
    const b = parseTraceparent(outboundTraceparent());
    expect(a).not.toBeNull();
    expect(b).not.toBeNull();
    expect(a!.traceId).not.toBe(b!.traceId);
    expect(a!.flags).toBe('00');

    const incoming = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', parentId: '00f067aa0ba902b7', flags: '01' };
    const inside = withTrace(incoming, () => [outboundTraceparent(), outboundTraceparent()].map((t) => parseTraceparent(t)!));
    for (const t of inside) expect(t).toMatchObject({ traceId: incoming.traceId, flags: '01' });
    expect(inside[0]!.parentId).not.toBe(inside[1]!.parentId);
    expect(inside[0]!.parentId).not.toBe(incoming.parentId);
  });
});
