import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboundConnectionsInUse } from '../../src/lib/outbound-http.js';
import { attachmentMemory } from '../../src/services/attachments/index.js';
import { recordReliability } from '../support/reliability.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { intakeBody, JPEG, postJson, startIntakeApp, startStub, type IntakeTestApp, type StubServer } from './support.js';

/**
 * One city's slow photo hosts never hold another city's intake back: of the process's
 * attachment memory and outbound places, one city may hold LUMEN_TENANT_BUDGET_SHARE
 * percent (50 here and by default). City A posts requests whose photos never finish
 * arriving until the test lets them; city B's request with one fast photo is answered
 * meanwhile, with its photo stored.
 */
let t: IntakeTestApp;
let host: StubServer;
const held: http.ServerResponse[] = [];

beforeAll(async () => {
  // Room for four downloads at once (5 MiB each), two per city.
  t = await startIntakeApp({ LUMEN_ATTACHMENT_MEMORY: '20MiB', LUMEN_OUTBOUND_CONNECTIONS: '8', LUMEN_TENANT_BUDGET_SHARE: '50' });
  host = await startStub((req, res) => {
    if (req.url?.startsWith('/slow/')) {
      // The headers and a first byte at once, the rest never (until released): a drip.
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      res.write(JPEG.subarray(0, 1));
      held.push(res);
      return;
    }
    res.writeHead(200, { 'content-type': 'image/jpeg' }).end(JPEG);
  });
});
afterAll(async () => {
  for (const res of held) res.destroy();
  await host?.close();
  await t?.stop();
});

describe('per-city shares of the process budgets', () => {
  it('answers a city’s fast photo while another city’s slow hosts fill their own share', async () => {
    const cityA = await makeTenant(t.rt, { name: 'Curitiba' });
    const cityB = await makeTenant(t.rt, { name: 'Manaus' });
    const a = await makePartner(t.rt, { tenantId: cityA.id });
    const b = await makePartner(t.rt, { tenantId: cityB.id });
    const slow = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ type: 'photo', contentType: 'image/jpeg', filename: `${i}.jpg`, url: `${host.url}/slow/${tag}-${i}.jpg` }));
    // City A: two requests of four slow photos each (more than the whole budget).
    const pendingA = [postJson(t, a.apiKey, intakeBody('SLOW-1', { attachments: slow(4, 'a1') })), postJson(t, a.apiKey, intakeBody('SLOW-2', { attachments: slow(4, 'a2') }))];
    // Wait until A holds its whole share (two downloads under way), by a deadline.
    const memory = attachmentMemory(t.rt.config);
    const deadline = Date.now() + 10_000;
    while (held.length < 2 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    expect(held.length).toBe(2);
    expect(memory.heldBy(cityA.id)).toBe(memory.shareCapacity);

    // City B meanwhile: one fast photo, answered and stored while A still waits on its hosts.
    const started = Date.now();
    const answer = await postJson(t, b.apiKey, intakeBody('FAST-1', { attachments: [{ type: 'photo', contentType: 'image/jpeg', filename: 'f.jpg', url: `${host.url}/fast.jpg` }] }));
    const ms = Date.now() - started;
    expect(answer.status).toBe(201);
    expect(answer.body.alert.attachments.map((x: { success: boolean }) => x.success)).toEqual([true]);
    expect(held.length).toBe(2);
    expect(outboundConnectionsInUse().inUse).toBe(2);

    // A's hosts finish: every photo of A arrives, in its share, two at a time.
    const finish = setInterval(() => {
      for (const res of held.splice(0)) res.end(JPEG.subarray(1));
    }, 5);
    const [a1, a2] = (await Promise.all(pendingA)) as [Awaited<(typeof pendingA)[0]>, Awaited<(typeof pendingA)[0]>];
    clearInterval(finish);
    expect([a1.status, a2.status]).toEqual([201, 201]);
    for (const r of [a1, a2]) expect(r.body.alert.attachments.map((x: { success: boolean }) => x.success)).toEqual(Array(4).fill(true));
    recordReliability('Abuse and faults', {
      item: 'cross-city intake latency under a slow-host flood',
      figure: `${ms} ms for city B's request with one photo while city A's downloads dripped (its share of 2 of 4 downloads full, 6 more waiting)`,
      detail: 'test/intake/tenant-budgets.test.ts (LUMEN_TENANT_BUDGET_SHARE 50%)',
    });
  });
});
