import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Budget } from '../../src/lib/budget.js';
import { countConnections, type ConnectionCount } from '../support/connections.js';
import { recordReliability } from '../support/reliability.js';
import { DEFAULT_OUTBOUND_CONNECTIONS, outboundConnectionsInUse, outboundRequest, OutboundError, setOutboundConnectionLimit } from '../../src/lib/outbound-http.js';

/**
 * The process-wide cap on outbound requests (LUMEN_OUTBOUND_CONNECTIONS) and the budget
 * behind it and behind the attachment and body memory caps: past the cap a request
 * waits for room, and is served, instead of failing.
 */

let server: http.Server;
let base: string;
let connections: ConnectionCount;
/** Answers held back until the test lets them go. */
const held: http.ServerResponse[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/hold') return void held.push(res);
    res.end('ok');
  });
  connections = countConnections(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const res of held.splice(0)) res.end();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
afterEach(() => setOutboundConnectionLimit(DEFAULT_OUTBOUND_CONNECTIONS));

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('outbound requests in progress', () => {
  it('never exceed the cap: the rest wait, then are all served, over at most that many connections', async () => {
    setOutboundConnectionLimit(3);
    connections.resetPeak();
    const requests = Array.from({ length: 12 }, () => outboundRequest({ url: `${base}/hold`, timeoutMs: 10_000, maxResponseBytes: 1024, allowLoopback: true }));
    await until(() => held.length === 3);
    expect(outboundConnectionsInUse()).toEqual({ inUse: 3, waiting: 9, limit: 3 });
    // Let them go one at a time: each answer lets exactly one waiting request in.
    for (let served = 0; served < 12; served++) {
      await until(() => held.length > 0);
      held.shift()!.end('done');
    }
    const answers = await Promise.all(requests);
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
    expect(connections.peak).toBeLessThanOrEqual(3);
    expect(outboundConnectionsInUse()).toEqual({ inUse: 0, waiting: 0, limit: 3 });
    recordReliability('Security and load', {
      item: 'outbound requests past LUMEN_OUTBOUND_CONNECTIONS (cap set to 3)',
      figure: `12 sent at once: ${answers.length} answered, ${connections.peak} connections open at most`,
      detail: 'Every request held by the receiver until let go one at a time: 3 in progress, 9 waiting for a place (none failed), each answer letting one more in (test/unit/outbound-cap.test.ts).',
    });
  });

  it('reuses a connection for the next request sent as soon as an answer arrives: never more connections than requests in flight', async () => {
    const openedBefore = connections.opened;
    // Eight senders, each sending its next request the moment it has its answer, as the
    // webhook pump does with its attempts to one partner.
    const answers: number[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = 0; i < 50; i++) answers.push((await outboundRequest({ url: `${base}/ok`, method: 'POST', body: '{}', timeoutMs: 10_000, maxResponseBytes: 1024, allowLoopback: true })).status);
      }),
    );
    expect(answers).toEqual(Array(400).fill(200));
    expect(connections.opened - openedBefore).toBeLessThanOrEqual(8);
  });

  it('starts the timeout when a request has its place, and lets an aborted one leave the queue', async () => {
    setOutboundConnectionLimit(1);
    const first = outboundRequest({ url: `${base}/hold`, timeoutMs: 10_000, maxResponseBytes: 1024, allowLoopback: true });
    await until(() => held.length === 1);
    const abort = new AbortController();
    const leaving = outboundRequest({ url: `${base}/ok`, timeoutMs: 10_000, maxResponseBytes: 1024, allowLoopback: true, signal: abort.signal }).catch((e: unknown) => e);
    // Waits longer than its own timeout for the place, then still gets its answer.
    const patient = outboundRequest({ url: `${base}/ok`, timeoutMs: 300, maxResponseBytes: 1024, allowLoopback: true });
    abort.abort();
    expect(((await leaving) as OutboundError).kind).toBe('aborted');
    await new Promise((r) => setTimeout(r, 500));
    held.shift()!.end('done');
    expect((await first).status).toBe(200);
    expect((await patient).body.toString()).toBe('ok');
  });
});

describe('Budget', () => {
  it('grants first come first served, cuts a request larger than the whole to the whole, and shrinks', async () => {
    const b = new Budget(10);
    const a = await b.acquire(6);
    const order: string[] = [];
    const big = b.acquire(25).then((l) => (order.push('big'), l));
    const small = b.acquire(1).then((l) => (order.push('small'), l));
    await new Promise((r) => setImmediate(r));
    // The small one fits, but waits behind the big one (no starvation of large requests).
    expect(order).toEqual([]);
    expect(b.waiting).toBe(2);
    a.release();
    const bigLease = await big;
    expect(bigLease.units).toBe(10);
    bigLease.shrink(4);
    const smallLease = await small;
    expect(order).toEqual(['big', 'small']);
    expect(b.inUse).toBe(5);
    bigLease.release();
    bigLease.release();
    smallLease.release();
    expect(b.inUse).toBe(0);
  });
});
