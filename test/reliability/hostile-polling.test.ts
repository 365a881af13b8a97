/**
 * Hostile items from a partner's polling endpoint (interface 4.5): the same mutations as
 * the POST suite, plus what only a raw JSON answer can carry (NUL in a property name,
 * nesting 100 000 levels deep). Every item is judged like a POST: the valid ones become
 * alerts, the others are refused and listed for operators; a hostile item never fails
 * the poll or stalls the cursor.
 */
import { PLATFORM_ACCESS } from '../../src/services/operators/index.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcilePartnerPolls } from '../../src/services/partner-poll/service.js';
import { getPartnerPollStatus } from '../../src/services/partner-poll/status.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { recordReliability } from '../support/reliability.js';
import { makePollingPartner, request, startPartnerStub, type PartnerStub } from '../polling/support.js';
import { mutationArb, serialise } from './hostile-support.js';

const SECTION = 'Hostile and broken input';
const BATCHES = 12;
const PER_BATCH = 8;

let t: TestApp;
let stub: PartnerStub;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await stub?.close();
  await t?.stop();
});

describe('partner polling under hostile items', { timeout: 120_000 }, () => {
  it('refuses hostile items one by one, takes the valid ones, and never stalls the cursor', async () => {
    const started = Date.now();
    const base = Date.parse('2026-03-14T12:00:00.000Z');
    // Batches of mutated items (seeded: the same run every time), then the raw ones.
    const mutated = fc.sample(fc.tuple(fc.constantFrom(...Array.from({ length: 40 }, (_, i) => i)), mutationArb()), { numRuns: BATCHES * PER_BATCH, seed: 9 });
    const bodies: string[] = [];
    for (let b = 0; b < BATCHES; b++) {
      const items = mutated.slice(b * PER_BATCH, (b + 1) * PER_BATCH).map(([, mutate], i) => mutate(request(`HOSTILE-${b}-${i}`, new Date(base + (b * PER_BATCH + i) * 1000).toISOString()) as never).value);
      const valid = request(`VALID-${b}`, new Date(base + (b * PER_BATCH + PER_BATCH) * 1000).toISOString());
      bodies.push(serialise({ items: [...items, valid], nextSince: valid.requestedAt, hasMore: true }));
    }
    const last = new Date(base + 10_000_000).toISOString();
    const deep = `{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const raw = [
      `{"protocolNumber":"NUL-VALUE","assetType":"POLE","requestedAt":"${last}","requester":{"name":"Maria\\u0000Souza"},"address":{"street":"Rua A","latitude":-23.5,"longitude":-46.6},"problem":{"description":"d"}}`,
      `{"protocolNumber":"NUL-KEY","assetType":"POLE","requestedAt":"${last}","requester":{"name":"Maria"},"address":{"street":"Rua A","latitude":-23.5,"longitude":-46.6},"problem":{"description":"d"},"extra\\u0000key":1}`,
      `{"protocolNumber":"DEEP","assetType":"POLE","requestedAt":"${last}","requester":{"name":"Maria"},"address":{"street":"Rua A","latitude":-23.5,"longitude":-46.6},"problem":{"description":"d"},"extra":${deep}}`,
      JSON.stringify(request('VALID-LAST', last)),
    ];
    bodies.push(`{"items":[${raw.join(',')}],"nextSince":"${last}","hasMore":false}`);

    // A faithful partner: the batch after the one whose nextSince Lumen sends back (a poll that failed gets the same batch again).
    const cursors = [null, ...bodies.slice(0, -1).map((b) => (JSON.parse(b.slice(b.lastIndexOf('"nextSince"') - 1).replace(/^,/, '{')) as { nextSince: string }).nextSince)];
    stub = await startPartnerStub((call) => {
      const i = cursors.indexOf(call.since);
      return { body: i >= 0 ? bodies[i]! : `{"items":[],"hasMore":false}`, headers: { 'content-type': 'application/json' } };
    });
    const partner = await makePollingPartner(t.rt, stub.url, { interval: 180 });
    await reconcilePartnerPolls(t.rt);
    await expect
      .poll(async () => (await getPartnerPollStatus(t.rt, PLATFORM_ACCESS, partner.code)).cursor, { timeout: 30_000, interval: 200, message: 'the cursor reached the end' })
      .toBe(last)
      .catch(async (err: unknown) => {
        const st = await getPartnerPollStatus(t.rt, PLATFORM_ACCESS, partner.code);
        throw new Error(`${String(err)}\n${JSON.stringify(stub.calls.map((c) => c.at - stub.calls[0]!.at))}\n${JSON.stringify(st.lastError)}\n${t.logs.lines.filter((l) => !/"msg":"request"/.test(l)).slice(-30).join('\n').slice(0, 20000)}`);
      });

    const status = await getPartnerPollStatus(t.rt, PLATFORM_ACCESS, partner.code);
    expect(status.lastError).toBeNull();
    // Each batch was read once: no poll failed and read it again.
    expect(stub.calls.map((c) => c.since)).toEqual(cursors);
    const items = BATCHES * (PER_BATCH + 1) + raw.length;
    expect(status.totals.itemsAccepted + status.totals.itemsRejected).toBe(items);
    const rejected = await t.rt.db.selectFrom('rejected_inbound_item').select(['protocol_number', 'problem_code']).where('external_system_id', '=', partner.id).execute();
    expect(rejected.map((r) => r.protocol_number)).toEqual(expect.arrayContaining(['NUL-VALUE', 'NUL-KEY', 'DEEP']));
    const alerts = await t.rt.db.selectFrom('alert').select('protocol_number').where('external_system_id', '=', partner.id).execute();
    const numbers = alerts.map((a) => a.protocol_number);
    expect(numbers).toEqual(expect.arrayContaining([...Array.from({ length: BATCHES }, (_, b) => `VALID-${b}`), 'VALID-LAST']));
    expect(numbers).not.toContain('NUL-VALUE');
    recordReliability(SECTION, {
      item: 'partner polling: hostile items in a partner\'s batches',
      figure: `${items} items in ${bodies.length} batches: ${status.totals.itemsAccepted} accepted, ${status.totals.itemsRejected} refused and listed, each batch read once (0 failed polls), cursor at the end`,
      detail: `The POST suite's mutations applied to polled items, plus NUL in a value and in a property name and nesting 100 000 levels deep in raw JSON. ${((Date.now() - started) / 1000).toFixed(0)} s.`,
    });
  });
});
