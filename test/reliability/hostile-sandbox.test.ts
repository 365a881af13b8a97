/**
 * Hostile bodies against the partner sandbox (openapi/sandbox.yaml): schema-generated
 * requests, valid and mutated, from a sandbox partner and from a real city's partner.
 * Oracle: a documented status with a body that matches the document, never a 5xx; a
 * refused request changes no table; a real city's key never changes anything.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPartner } from '../../src/services/partners/index.js';
import { createSandboxPartner } from '../../src/services/sandbox/index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeTenant } from '../support/factories.js';
import { recordReliability } from '../support/reliability.js';
import { intakeBody, postJson } from '../intake/support.js';
import { HostileClient, mutationArb, operationsOf, requestSchema, serialise, serverLog, snapshotDiff, tableSnapshotQuery, Tally, valueArb, violation } from './hostile-support.js';

const SECTION = 'Hostile and broken input';
const RUNS = 300;
const PROTOCOLS = Array.from({ length: 6 }, (_, i) => `SBH-${i}`);

const op = operationsOf('sandbox').get('triggerSandboxEvent')!;

let t: TestApp;
let client: HostileClient;
let snapshot: () => Promise<Record<string, string>>;
let sandboxKey: string;
let realKey: string;
beforeAll(async () => {
  t = await startTestApp({ env: { LUMEN_RATE_LIMIT_PER_MINUTE: '10000000' } });
  client = new HostileClient(t.baseUrl);
  snapshot = await tableSnapshotQuery(t.rt.pool);
  sandboxKey = (await createSandboxPartner(t.rt, { code: 'hostile-sandbox', scopes: 'canCreateServiceOrders', transport: 'polling' })).partner.apiKey;
  const city = await makeTenant(t.rt, { intakePolicy: 'manual' });
  realKey = (await createPartner(t.rt, { tenantId: city.id, code: 'hostile-real', scopes: 'canCreateServiceOrders', transport: 'polling' })).apiKey;
  for (const p of PROTOCOLS) {
    expect((await postJson(t, sandboxKey, intakeBody(p))).status).toBe(201);
    expect((await postJson(t, realKey, intakeBody(p))).status).toBe(201);
  }
});
afterAll(async () => {
  client?.close();
  await t?.stop();
});

describe('POST /api/external/sandbox/events under hostile input', { timeout: 120_000 }, () => {
  it('answers schema-generated bodies, valid and mutated, with a documented status; refusals and real cities change nothing', async () => {
    const started = Date.now();
    const tally = new Tally();
    let refusals = 0;
    const body = valueArb('sandbox', requestSchema(op), { byProperty: { protocolNumber: fc.constantFrom(...PROTOCOLS, 'UNKNOWN') } });
    await fc.assert(
      fc.asyncProperty(body, fc.option(mutationArb(), { freq: 3 }), fc.boolean(), async (value, mutate, real) => {
        const m = mutate ? mutate(value as never) : { value, description: 'unmutated' };
        const before = await snapshot();
        const answer = await client.send({ method: 'POST', path: op.path, headers: { 'content-type': 'application/json', 'x-api-key': real ? realKey : sandboxKey }, body: serialise(m.value) });
        tally.add(answer.status);
        const wrong = violation(op, answer);
        if (wrong) throw new Error(`${serverLog(t, answer)}\n${m.description}: ${wrong}`);
        if (answer.status >= 400 || real) {
          const changed = snapshotDiff(before, await snapshot());
          if (changed.length > 0) throw new Error(`${m.description} (${real ? 'real city' : 'sandbox'}): answered ${answer.status} but tables changed: ${changed.join(', ')}`);
          if (answer.status >= 400) refusals++;
        }
        if (real) expect(answer.status, answer.text).toBeGreaterThanOrEqual(400);
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
    expect(tally.serverErrors).toBe(0);
    recordReliability(SECTION, {
      item: 'partner sandbox: hostile event requests',
      figure: `${RUNS} requests (schema-generated, valid and mutated; half with a real city's key): ${tally.summary()}, 0 5xx, ${refusals} refusals that changed nothing`,
      detail: `Real cities' keys never changed anything. ${((Date.now() - started) / 1000).toFixed(0)} s.`,
    });
  });
});
