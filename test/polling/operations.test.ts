import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPollState } from '../../src/db/repositories/partner-poll.repository.js';
import { reconcilePartnerPolls } from '../../src/services/partner-poll/service.js';
import { secretFile, startTestApp, type TestApp, cliJson } from '../support/app.js';
import { makePartner } from '../support/factories.js';
import { makePollingPartner, request, startPartnerStub, type PartnerStub } from './support.js';

let t: TestApp;
let token: string;
const stubs: PartnerStub[] = [];
beforeAll(async () => {
  t = await startTestApp();
  token = json(await t.cli('admin-token', 'create', '--name', 'polling-desk', '--json')).token as string;
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

const json = cliJson;

const admin = (path: string, init: RequestInit = {}) => t.fetch(`/api/admin${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) } });

describe('operating partner polling', () => {
  it('lumen partner status shows cursor, last success, last error and lag; poll-now --wait polls at once', async () => {
    let fail = false;
    const s = await stub((call) => (fail ? { status: 503, body: 'maintenance window' } : { json: { items: [request(`OPS-${call.n}`, `2026-03-14T12:00:0${call.n}.000Z`)], nextSince: `2026-03-14T12:00:0${call.n}.000Z` } }));
    // A long interval: only poll-now makes it poll in this test.
    const p = await makePollingPartner(t.rt, s.url, { interval: 180 });

    const before = json(await t.cli('partner', 'status', p.code, '--json'));
    expect(before).toMatchObject({ partner: p.code, polling: true, notPolledBecause: null, pollingUrl: s.url, pollingKeySet: true, intervalSeconds: 180, cursor: null, lastSuccessAt: null, lastError: null, lagSeconds: null, openRejectedItems: 0 });

    const ok = json(await t.cli('partner', 'poll-now', p.code, '--wait', '--json'));
    expect(ok).toMatchObject({ partner: p.code, cursor: '2026-03-14T12:00:01.000Z', consecutiveFailures: 0, lastBatch: { items: 1, accepted: 1, rejected: 0 } });
    expect(ok.lagSeconds).toBeLessThanOrEqual(5);
    // The next poll is an interval after this one.
    expect(Date.parse(ok.nextPollAt) - Date.parse(ok.lastAttemptAt)).toBeGreaterThanOrEqual(179_000);
    expect(s.calls).toHaveLength(1);

    fail = true;
    const failed = await t.cli('partner', 'poll-now', p.code, '--wait', '--json');
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('maintenance window');
    const failedStatus = JSON.parse(failed.stdout) as Record<string, any>;
    expect(failedStatus).toMatchObject({ cursor: '2026-03-14T12:00:01.000Z', consecutiveFailures: 1, lastError: { kind: 'http-status', message: 'the partner answered 503: maintenance window' } });

    const human = await t.cli('partner', 'status', p.code);
    expect(human.code).toBe(0);
    for (const text of ['cursor:        2026-03-14T12:00:01.000Z', '[http-status]', 'maintenance window', 'lag:', 'last success:']) expect(human.stdout).toContain(text);

    // The audit log names who asked.
    const audit = await t.rt.db.selectFrom('audit_log').select(['action', 'actor']).where('entity_id', '=', p.id).where('action', '=', 'partner.poll-now').execute();
    expect(audit).toHaveLength(2);
    expect(audit[0]!.actor).toMatch(/^cli:/);
  });

  it('refuses poll-now for a partner Lumen does not poll, and says why in status', async () => {
    const webhook = await makePartner(t.rt, { transport: 'webhook' });
    const out = await t.cli('partner', 'poll-now', webhook.code);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('webhook mode');
    expect(json(await t.cli('partner', 'status', webhook.code, '--json'))).toMatchObject({ polling: false, notPolledBecause: 'the partner is in webhook mode', nextPollAt: null });
    const unknown = await t.cli('partner', 'status', 'no-such-partner');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no-such-partner');
  });

  it('polls a polling partner as soon as it is created, without waiting for the reconciler', async () => {
    const s = await stub(() => ({ json: { items: [] } }));
    const tenant = json(await t.cli('tenant', 'create', '--name', 'Immediate City', '--json'));
    json(await t.cli('partner', 'create', '--tenant', tenant.id, '--code', 'POLL-AT-ONCE', '--scopes', 'canCreateServiceOrders', '--transport', 'polling', '--polling-url', s.url, '--polling-key-file', secretFile('partner-issued-key'), '--polling-interval', '180', '--json'));
    await expect.poll(() => s.calls.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
  });

  it('applies partner changes without a restart: URL, interval, transport', async () => {
    const first = await stub(() => ({ json: { items: [] } }));
    const second = await stub(() => ({ json: { items: [] } }));
    const p = await makePollingPartner(t.rt, first.url, { interval: 1 });
    await reconcilePartnerPolls(t.rt);
    await expect.poll(() => first.calls.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);

    // A new URL is used from the next poll on.
    json(await t.cli('partner', 'update', p.code, '--polling-url', second.url, '--json'));
    await expect.poll(() => second.calls.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    const firstCalls = first.calls.length;

    // A longer interval, then back to a short one: the update itself pulls the waiting poll in.
    json(await t.cli('partner', 'update', p.code, '--polling-interval', '180', '--json'));
    await expect.poll(async () => (await findPollState(t.rt.db, p.id))!.next_poll_at!.getTime() - Date.now(), { timeout: 10_000 }).toBeGreaterThan(60_000);
    const idle = second.calls.length;
    json(await t.cli('partner', 'update', p.code, '--polling-interval', '1', '--json'));
    await expect.poll(() => second.calls.length, { timeout: 10_000 }).toBeGreaterThan(idle + 1);
    // The reconciler then finds nothing to move.
    expect(['already-queued', 'running']).toContain((await reconcilePartnerPolls(t.rt)).partners.find((x) => x.code === p.code)?.result);

    // Switched to webhook mode: polling stops; back to polling: it starts again.
    json(await t.cli('partner', 'update', p.code, '--transport', 'webhook', '--json'));
    await expect.poll(async () => (await findPollState(t.rt.db, p.id))!.next_poll_at, { timeout: 10_000 }).toBeNull();
    const stopped = second.calls.length;
    expect((await reconcilePartnerPolls(t.rt)).partners.find((x) => x.code === p.code)).toBeUndefined();
    await new Promise((r) => setTimeout(r, 3000));
    expect(second.calls.length).toBe(stopped);
    json(await t.cli('partner', 'update', p.code, '--transport', 'polling', '--json'));
    await expect.poll(() => second.calls.length, { timeout: 10_000 }).toBeGreaterThan(stopped);
    expect(first.calls.length).toBe(firstCalls);
  }, 60_000);

  it('records a partner without a polling key or intake scope as a configuration error, without calling it', async () => {
    const s = await stub();
    const noKey = await makePollingPartner(t.rt, s.url, { key: null, interval: 1 });
    const noScope = await makePollingPartner(t.rt, s.url, { scopes: ['canReadCityData'], interval: 1 });
    await reconcilePartnerPolls(t.rt);
    for (const p of [noKey, noScope]) {
      await expect.poll(async () => json(await t.cli('partner', 'status', p.code, '--json')).lastError?.kind, { timeout: 10_000 }).toBe('configuration');
    }
    expect(json(await t.cli('partner', 'status', noKey.code, '--json')).lastError.message).toContain('no polling key');
    expect(json(await t.cli('partner', 'status', noScope.code, '--json')).lastError.message).toContain('canCreateServiceOrders');
    expect(s.calls).toHaveLength(0);
  });

  it('serves polling state, poll-now and rejected items on the admin API', async () => {
    const bad = { ...request('API-2', '2026-03-14T12:00:02.000Z'), assetType: 'TREE' };
    const s = await stub((call) => ({ json: call.n === 1 ? { items: [request('API-1', '2026-03-14T12:00:01.000Z'), bad], nextSince: '2026-03-14T12:00:02.000Z' } : { items: [] } }));
    const p = await makePollingPartner(t.rt, s.url, { interval: 180 });

    const now = await admin(`/partners/${p.code}/polling/poll-now`, { method: 'POST' });
    expect(now.status).toBe(202);
    expect(await now.json()).toMatchObject({ partner: p.code, state: 'queued', requestedAt: expect.any(String) });
    await expect.poll(async () => ((await (await admin(`/partners/${p.code}/polling`)).json()) as { lastSuccessAt: string | null }).lastSuccessAt, { timeout: 10_000 }).not.toBeNull();

    const state = (await (await admin(`/partners/${p.code}/polling`)).json()) as Record<string, any>;
    expect(state).toMatchObject({ partner: p.code, polling: true, cursor: '2026-03-14T12:00:02.000Z', openRejectedItems: 1, totals: { itemsAccepted: 1, itemsRejected: 1 } });

    const list = await admin(`/partners/${p.code}/rejected-inbound-items?status=open`);
    expect(list.status).toBe(200);
    const page = (await list.json()) as Record<string, any>;
    expect(page).toMatchObject({ partner: p.code, status: 'open', page: 1, pageSize: 50, total: 1 });
    expect(page.items[0]).toMatchObject({ partner: p.code, protocolNumber: 'API-2', problemCode: 'validation-failed', item: bad, timesSeen: 1, resolvedAt: null, since: null });
    expect(page.items[0].reasons).toEqual(expect.arrayContaining([expect.objectContaining({ pointer: '/assetType' })]));

    const resolved = (await (await admin(`/partners/${p.code}/rejected-inbound-items?status=resolved&pageSize=9999`)).json()) as Record<string, any>;
    expect(resolved).toMatchObject({ total: 0, items: [], pageSize: 500 });

    expect((await admin(`/partners/${p.code}/rejected-inbound-items?status=weird`)).status).toBe(400);
    expect((await admin('/partners/no-such-partner/rejected-inbound-items')).status).toBe(404);
    expect((await admin('/partners/no-such-partner/polling')).status).toBe(404);
    const webhook = await makePartner(t.rt, { transport: 'webhook' });
    const refused = await admin(`/partners/${webhook.code}/polling/poll-now`, { method: 'POST', headers: { 'accept-language': 'en' } });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { type: string }).type).toBe('urn:lumen:problem:conflict');
    expect((await t.fetch(`/api/admin/partners/${p.code}/polling`)).status).toBe(401);
  });
});
