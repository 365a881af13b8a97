/**
 * Open311 reads its own bodies, but within the server's body-memory budget
 * (LUMEN_BODY_MEMORY) like every other surface: a form post that holds the whole
 * budget makes the partner API's next body wait until it ends.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner } from '../support/factories.js';

let t: TestApp;
beforeAll(async () => {
  // One request in progress per key makes "the post is admitted" visible (a second one is 429).
  t = await startTestApp({ env: { LUMEN_BODY_MEMORY: '1MiB', LUMEN_INTAKE_CONCURRENCY_PER_KEY: '1', LUMEN_RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(async () => {
  await t?.stop();
});

describe('Open311 bodies and the body-memory budget', () => {
  it('holds the budget while its body is read, so another surface\'s body waits for it', { timeout: 60_000 }, async () => {
    const open311 = await makePartner(t.rt, { scopes: ['canCreateServiceOrders'], transport: 'polling' });
    const partner = await makePartner(t.rt, { scopes: ['canCreateServiceOrders'], transport: 'polling' });

    // A form post declaring 400 kB (three times that is more than the whole 1 MiB) that sends a few bytes and stalls.
    const stall = () => {
      const req = http.request(`${t.baseUrl}/open311/v2/requests.json?api_key=${open311.apiKey}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '400000' },
      });
      const post = { req, answered: false };
      req.on('response', (res) => {
        post.answered = true;
        res.resume();
      });
      req.on('error', () => {});
      req.write('service_code=');
      return post;
    };
    let stalled = stall();

    // Admitted (a second post of the key is refused) means its body memory is held: both happen in one step.
    // A probe that reaches the server first holds the key's one slot and the stalled post is
    // the one refused: it is then answered, and posted again.
    let admitted = false;
    // On a loaded machine that can take a while: the bound is a deadline, not a count.
    const deadline = Date.now() + 25_000;
    while (!admitted && Date.now() < deadline) {
      if (stalled.answered) {
        stalled.req.destroy();
        stalled = stall();
      }
      const again = await t.fetch(`/open311/v2/requests.json?api_key=${open311.apiKey}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'service_code=X' });
      admitted = again.status === 429;
    }
    expect(admitted).toBe(true);

    let answered = false;
    const waiting = t.fetch('/api/external/service-orders', { method: 'POST', apiKey: partner.apiKey, json: { protocolNumber: 'X' } }).then((res) => {
      answered = true;
      return res;
    });
    // Later requests without a body (same partner, same checks) pass it while it waits for room.
    for (let i = 0; i < 5; i++) expect((await t.fetch('/api/external/health', { apiKey: partner.apiKey })).status).toBe(200);
    expect(answered).toBe(false);

    stalled.req.destroy();
    const res = await waiting;
    expect(res.status).toBe(422);
  });
});
