import { PLATFORM_ACCESS } from '../../src/services/operators/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pollingContract from '../../generated/openapi/partner-polling.json' with { type: 'json' };
import { findPollState } from '../../src/db/repositories/partner-poll.repository.js';
import { reconcilePartnerPolls } from '../../src/services/partner-poll/service.js';
import { getPartnerPollStatus } from '../../src/services/partner-poll/status.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePollingPartner, pagedPartner, request, requests, startPartnerStub, type PartnerStub } from './support.js';

let t: TestApp;
const stubs: PartnerStub[] = [];
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await Promise.all(stubs.map((s) => s.close()));
  await t?.stop();
});

async function stub(...args: Parameters<typeof startPartnerStub>) {
  const s = await startPartnerStub(...args);
  stubs.push(s);
  return s;
}

/** Alerts of a partner with their order, by protocolNumber. */
async function alertsOf(externalSystemId: string) {
  return t.rt.db
    .selectFrom('alert')
    .leftJoin('service_order', 'service_order.id', 'alert.service_order_id')
    .select(['alert.protocol_number', 'alert.status', 'alert.description', 'alert.requester_name', 'alert.service_order_id', 'service_order.number'])
    .where('alert.external_system_id', '=', externalSystemId)
    .orderBy('alert.protocol_number')
    .execute();
}

const cursorOf = async (id: string) => (await findPollState(t.rt.db, id))?.cursor?.toISOString() ?? null;

describe('partner polling: every request becomes an alert exactly once', () => {
  it('reads every page at once while hasMore is true, and creates one alert and one order per request', async () => {
    const all = requests('PAGE', 450);
    const s = await stub(pagedPartner(() => all));
    const p = await makePollingPartner(t.rt, s.url, { interval: 30 });
    await reconcilePartnerPolls(t.rt);
    await expect.poll(async () => (await alertsOf(p.id)).length, { timeout: 60_000, interval: 250 }).toBe(450);
    const last = all.at(-1)!.requestedAt as string;
    await expect.poll(() => cursorOf(p.id), { timeout: 10_000 }).toBe(last);
    // Three pages (200, 200 + the inclusive repeat, the rest), read one right after the other.
    expect(s.calls.map((c) => c.since)).toEqual([null, all[199]!.requestedAt, all[398]!.requestedAt]);
    expect(s.calls.every((c) => c.limit === '200')).toBe(true);
    expect(s.calls[2]!.at - s.calls[0]!.at).toBeLessThan(30_000);
    const alerts = await alertsOf(p.id);
    expect(new Set(alerts.map((a) => a.protocol_number)).size).toBe(450);
    expect(alerts.every((a) => a.status === 'Linked' && a.number)).toBe(true);
    expect(new Set(alerts.map((a) => a.service_order_id)).size).toBe(450);
    const status = await getPartnerPollStatus(t.rt, PLATFORM_ACCESS, p.code);
    // 450 new requests; the two inclusive repeats are resends, accepted without a second alert.
    expect(status.totals.itemsAccepted).toBe(452);
    expect(status.lastBatch).toMatchObject({ items: 52, accepted: 52, rejected: 0 });
    // Caught up is written when the run ends, just after the last page moved the cursor.
    await expect.poll(async () => (await getPartnerPollStatus(t.rt, PLATFORM_ACCESS, p.code)).lastCaughtUpAt, { timeout: 10_000 }).not.toBeNull();
  });

  it('never creates a second alert for duplicates in a batch or for requests sent again; a changed resend updates the alert', async () => {
    const a = request('DUP-1', '2026-03-14T12:00:00.000Z');
    const b = request('DUP-2', '2026-03-14T12:01:00.000Z');
    const batches = [
      { items: [a, a, b], nextSince: '2026-03-14T12:01:00.000Z' },
      // The same requests again (a partner that re-sends), one of them changed.
      { items: [a, { ...b, problem: { description: 'Poste piscando a noite toda.' } }], nextSince: '2026-03-14T12:01:00.000Z' },
    ];
    const s = await stub((call) => ({ json: batches[call.n - 1] ?? { items: [] } }));
    const p = await makePollingPartner(t.rt, s.url, { interval: 1 });
    await reconcilePartnerPolls(t.rt);
    await expect.poll(() => s.calls.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(3);
    await expect.poll(async () => (await getPartnerPollStatus(t.rt, PLATFORM_ACCESS, p.code)).totals.itemsAccepted, { timeout: 10_000 }).toBe(5);
    const alerts = await alertsOf(p.id);
    expect(alerts.map((x) => x.protocol_number)).toEqual(['DUP-1', 'DUP-2']);
    expect(alerts[1]!.description).toBe('Poste piscando a noite toda.');
    const orders = await t.rt.db.selectFrom('service_order').select('id').where('tenant_id', '=', p.tenantId).execute();
    expect(orders).toHaveLength(2);
  });

  it('uses the largest requestedAt as the cursor when the partner gives no nextSince (bare array, requests, data)', async () => {
    const batches: unknown[] = [
      [request('ARR-1', '2026-03-14T09:00:00.000-03:00'), request('ARR-2', '2026-03-14T12:30:00.000Z')],
      { requests: [request('REQ-1', '2026-03-14T13:00:00.000Z')], hasMore: false },
      { data: [request('DAT-1', '2026-03-14T13:30:00.000Z')] },
    ];
    const s = await stub((call) => ({ json: batches[call.n - 1] ?? [] }));
    const p = await makePollingPartner(t.rt, s.url, { interval: 1 });
    await reconcilePartnerPolls(t.rt);
    await expect.poll(() => s.calls.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(4);
    expect(s.calls.slice(0, 4).map((c) => c.since)).toEqual([null, '2026-03-14T12:30:00.000Z', '2026-03-14T13:00:00.000Z', '2026-03-14T13:30:00.000Z']);
    expect((await alertsOf(p.id)).map((x) => x.protocol_number)).toEqual(['ARR-1', 'ARR-2', 'DAT-1', 'REQ-1']);
  });

  it('keeps a malformed item as a rejected inbound item and stores the rest of the batch', async () => {
    const bad = { ...request('MAL-2', '2026-03-14T12:02:00.000Z'), assetType: 'TREE', address: { number: '10' } };
    const noProtocol = { assetType: 'POLE', requestedAt: '2026-03-14T12:03:00.000Z' };
    const batch = { items: [request('MAL-1', '2026-03-14T12:01:00.000Z'), bad, noProtocol, 'not an object', request('MAL-3', '2026-03-14T12:04:00.000Z')], nextSince: '2026-03-14T12:04:00.000Z' };
    const s = await stub((call) => ({ json: call.n <= 2 ? batch : { items: [] } }));
    const p = await makePollingPartner(t.rt, s.url, { interval: 1 });
    await reconcilePartnerPolls(t.rt);
    // Read twice (the second time as a partner re-sending the same batch).
    await expect.poll(() => s.calls.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(3);
    expect(s.calls[1]!.since).toBe('2026-03-14T12:04:00.000Z');
    expect((await alertsOf(p.id)).map((x) => x.protocol_number)).toEqual(['MAL-1', 'MAL-3']);
    expect(await cursorOf(p.id)).toBe('2026-03-14T12:04:00.000Z');

    const out = await t.cli('inbound', 'rejected', '--partner', p.code, '--json');
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const page = JSON.parse(out.stdout) as { total: number; items: { protocolNumber: string | null; problemCode: string; reasons: { pointer: string; message: string }[]; item: unknown; timesSeen: number; resolvedAt: string | null }[] };
    expect(page.total).toBe(3);
    const byProtocol = new Map(page.items.map((i) => [i.protocolNumber, i]));
    const mal2 = byProtocol.get('MAL-2')!;
    expect(mal2.problemCode).toBe('validation-failed');
    expect(mal2.item).toEqual(bad);
    expect(mal2.timesSeen).toBe(2);
    expect(mal2.resolvedAt).toBeNull();
    expect(mal2.reasons.map((r) => r.pointer)).toEqual(expect.arrayContaining(['/assetType', '/address/street']));
    expect(page.items.filter((i) => i.protocolNumber === null)).toHaveLength(2);
    expect(page.items.find((i) => i.item === 'not an object')).toBeDefined();

    const human = await t.cli('inbound', 'rejected', '--partner', p.code);
    expect(human.stdout).toContain('MAL-2');
    expect(human.stdout).toContain('/assetType');

    const status = await getPartnerPollStatus(t.rt, PLATFORM_ACCESS, p.code);
    expect(status.openRejectedItems).toBe(3);
    expect(status.lastBatch).toMatchObject({ items: 0 });
    expect(status.totals).toMatchObject({ itemsAccepted: 4, itemsRejected: 6 });
  });

  it('settles a rejected item once the partner sends a valid version of it', async () => {
    const bad = { ...request('FIX-1', '2026-03-14T12:00:00.000Z'), requester: {} };
    const good = request('FIX-1', '2026-03-14T12:00:00.000Z');
    const s = await stub((call) => ({ json: { items: [call.n === 1 ? bad : good], nextSince: '2026-03-14T12:00:00.000Z' } }));
    const p = await makePollingPartner(t.rt, s.url, { interval: 1 });
    await reconcilePartnerPolls(t.rt);
    await expect.poll(async () => (await alertsOf(p.id)).length, { timeout: 15_000 }).toBe(1);
    const open = JSON.parse((await t.cli('inbound', 'rejected', '--partner', p.code, '--status', 'open', '--json')).stdout) as { total: number };
    expect(open.total).toBe(0);
    const resolved = JSON.parse((await t.cli('inbound', 'rejected', '--partner', p.code, '--status', 'resolved', '--json')).stdout) as { total: number; items: { protocolNumber: string; resolvedAt: string }[] };
    expect(resolved.items).toEqual([expect.objectContaining({ protocolNumber: 'FIX-1', resolvedAt: expect.any(String) })]);
  });

  it('takes polled requests in as alerts waiting for triage under the manual policy', async () => {
    const s = await stub((call) => ({ json: call.n === 1 ? [request('MAN-1', '2026-03-14T12:00:00.000Z')] : [] }));
    const p = await makePollingPartner(t.rt, s.url, { interval: 1, intakePolicy: 'manual' });
    await reconcilePartnerPolls(t.rt);
    await expect.poll(async () => (await alertsOf(p.id)).length, { timeout: 15_000 }).toBe(1);
    expect((await alertsOf(p.id))[0]).toMatchObject({ protocol_number: 'MAN-1', status: 'Pending', service_order_id: null });
  });

  it('reads every example of the partner-polling contract (what `npm run mock:partner` answers)', async () => {
    const examples = (pollingContract as any).paths['/lumen/requests'].get.responses['200'].content['application/json'].examples as Record<string, { value: { items: { protocolNumber: string }[] } }>;
    const bodies = Object.values(examples).map((e) => e.value);
    expect(bodies.length).toBeGreaterThanOrEqual(3);
    const s = await stub((call) => ({ json: bodies[call.n - 1] ?? { items: [] } }));
    const p = await makePollingPartner(t.rt, s.url, { interval: 1 });
    await reconcilePartnerPolls(t.rt);
    const expected = bodies.flatMap((b) => b.items.map((i) => i.protocolNumber)).sort();
    await expect.poll(async () => (await alertsOf(p.id)).map((a) => a.protocol_number), { timeout: 30_000 }).toEqual(expected);
    // A batch is stored before the cursor moves past it (nothing lost in a crash between
    // the two), so the last batch's alerts can be read while the cursor is still moving.
    await expect.poll(async () => (await getPartnerPollStatus(t.rt, PLATFORM_ACCESS, p.code)).cursor, { timeout: 30_000 }).toBe('2026-03-14T16:45:27.000Z');
    const status = await getPartnerPollStatus(t.rt, PLATFORM_ACCESS, p.code);
    expect(status.totals.itemsRejected).toBe(0);
    expect((await alertsOf(p.id)).map((a) => a.protocol_number)).toEqual(expected);
  });
});
