/**
 * Intake requests in progress per key: past the limit, 429 with Retry-After before the
 * body is read, so one partner cannot hold the memory of many large requests at once.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { intakeBody } from '../intake/support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_INTAKE_CONCURRENCY_PER_KEY: '1' } });
});
afterAll(async () => {
  await t?.stop();
});

const post = (apiKey: string, body: unknown) => t.fetch('/api/external/service-orders', { method: 'POST', apiKey, json: body });

describe('intake requests in progress per key', () => {
  it('refuses a second request of the same key while one is in progress, before reading its body; other keys go on', { timeout: 60_000 }, async () => {
    const tenant = await makeTenant(t.rt);
    const a = await makePartner(t.rt, { tenantId: tenant.id });
    const b = await makePartner(t.rt, { tenantId: tenant.id });
    const url = new URL(`${t.baseUrl}/api/external/service-orders`);
    // A request whose body is still arriving: admitted, waiting for the rest. Its headers
    // may reach the server while one of the requests below holds the key's place: then it
    // is the one refused (429 before its body arrived) and a new one takes its turn.
    const startSlow = (n: number) => {
      const body = Buffer.from(JSON.stringify(intakeBody(`SLOW-${n}`)));
      const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length, 'x-api-key': a.apiKey } });
      const answer = new Promise<number>((resolve, reject) => req.on('response', (res) => (res.resume(), resolve(res.statusCode ?? 0))).on('error', reject));
      const state = { req, body, answer, ended: null as number | null };
      void answer.then((status) => (state.ended = status), () => (state.ended = -1));
      req.write(body.subarray(0, 10));
      return state;
    };
    let slow = startSlow(1);
    // The slow request is in progress once the server holds its place: each round trip of a
    // second request is the wait, until one is refused.
    // On a loaded machine that can take a while: the bound is a deadline, not a count.
    let refused: Response | undefined;
    const deadline = Date.now() + 25_000;
    for (let i = 0; !refused && Date.now() < deadline; i++) {
      if (slow.ended !== null) {
        expect(slow.ended, 'a slow request that lost the race was refused, not failed').toBe(429);
        slow = startSlow(i + 2);
      }
      const r = await post(a.apiKey, intakeBody(`FAST-${i}`));
      if (r.status === 429) refused = r;
      else expect(r.status).toBe(201);
    }
    expect(slow.ended, 'the slow request was still waiting for its body').toBeNull();
    expect(refused, 'a second request of the same key was refused').toBeDefined();
    expect(refused!.headers.get('retry-after')).toBe('1');
    // The limit that applied, not the minute quota (which still has room).
    expect(refused!.headers.get('ratelimit-policy')).toMatch(/^"in-progress";q=\d+$/);
    expect(refused!.headers.get('ratelimit')).toBe('"in-progress";r=0;t=1');
    expect(await refused!.json()).toMatchObject({ type: 'urn:lumen:problem:rate-limited', status: 429 });
    expect((await post(b.apiKey, intakeBody('OTHER-KEY'))).status).toBe(201);

    slow.req.end(slow.body.subarray(10));
    expect(await slow.answer).toBe(201);
    expect((await post(a.apiKey, intakeBody('AFTER'))).status).toBe(201);
  });
});
