/**
 * Round trips per request on the hot paths after authentication:
 * the statements the app's pool sends while one request is answered, with the
 * partner's key already in the in-process cache. Left out by their text: the horizon
 * clock's tick and the delivery worker's rounds (timers of the process), and the rate counters' writes, batched on a
 * timer except the first request of a minute's window, which writes its count at once
 * (docs/rate-limits.md): once a minute per partner, not per request.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeCityPole, makePartner, makeTenant } from '../support/factories.js';
import { intakeBody, postJson } from '../intake/support.js';
import { emit, makeEventPartner, subjectFor } from '../events/support.js';
import { BACKGROUND, statementObserver } from '../support/statements.js';
import { createTelemetryKey } from '../../src/services/city-data/telemetry.js';

let t: TestApp;
const observer = statementObserver();

beforeAll(async () => {
  observer.install();
  // The key cache on, as `lumen serve` runs by default: authentication costs no statement.
  t = await startTestApp({ env: { LUMEN_PARTNER_KEY_CACHE: 'on' } });
}, 60_000);

afterAll(async () => {
  observer.restore();
  await t?.stop();
});

/** The statements a request sent, without the process's own background work. */
async function sentDuring(work: () => Promise<void>): Promise<string[]> {
  return (await observer.during(work)).map((s) => s.text.replace(/\s+/g, ' ').trim()).filter((text) => !BACKGROUND.test(text));
}

/** The start of each text: an assertion on their number then shows which were sent. */
const short = (texts: string[]) => texts.map((s) => s.slice(0, 90));

describe('round trips per request', () => {
  it('intake of a new request: its reads with the numbers, then the write; a replay: one read', async () => {
    const tenant = await makeTenant(t.rt, { name: 'Manaus', intakePolicy: 'automatic' });
    const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canCreateServiceOrders'] });
    const pole = await makeCityPole(t.rt, { tenantId: tenant.id, code: 'MAO-RT-1', latitude: -23.5573, longitude: -46.6602 });
    // The first request brings the key into the cache.
    expect((await postJson(t, partner.apiKey, intakeBody('MAO-RT-0'))).status).toBe(201);

    const key = randomUUID();
    let created: Awaited<ReturnType<typeof postJson>> | undefined;
    const sent = await sentDuring(async () => {
      created = await postJson(t, partner.apiKey, intakeBody('MAO-RT-1'), { 'idempotency-key': key });
    });
    expect(created!.status, created!.text).toBe(201);
    expect(short(sent)).toHaveLength(2);
    expect(sent[0]).toMatch(/^WITH st AS MATERIALIZED .*lumen_take_number/);
    expect(sent[1]).toMatch(/INSERT INTO idempotency_key/i);
    // The write found the order's pole itself.
    const order = await t.rt.db.selectFrom('service_order').select(['pole_id', 'number']).where('tenant_id', '=', tenant.id).where('number', '=', created!.body.internalProtocol).executeTakeFirstOrThrow();
    expect(order.pole_id).toBe(pole.id);

    const replayed = await sentDuring(async () => {
      const again = await postJson(t, partner.apiKey, intakeBody('MAO-RT-1'), { 'idempotency-key': key });
      expect(again.status).toBe(200);
      expect(again.text).toBe(created!.text);
    });
    expect(short(replayed)).toHaveLength(1);
  });

  it('a page without updatedSince: by cursor one statement; by number two (the page with its start, what the walk remembers); with updatedSince three', async () => {
    const tenant = await makeTenant(t.rt, { name: 'Porto Alegre' });
    const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] });
    for (let i = 0; i < 7; i++) await makeCityPole(t.rt, { tenantId: tenant.id, code: `POA-RT-${i}` });
    expect((await t.fetch('/api/external/poles?pageSize=1', { apiKey: partner.apiKey })).status).toBe(200);

    let cursor: string | null = null;
    const numbered = await sentDuring(async () => {
      const res = await t.fetch('/api/external/poles?page=1&pageSize=3', { apiKey: partner.apiKey });
      expect(res.status).toBe(200);
      cursor = ((await res.json()) as { nextCursor: string | null }).nextCursor;
    });
    expect(short(numbered)).toHaveLength(2);
    expect(numbered[0]).toMatch(/^WITH horizon AS MATERIALIZED \(SELECT greatest\(lumen_visibility_horizon\(\), \$1::timestamptz\)/);
    expect(cursor).toBeTruthy();

    const items: string[] = [];
    const byCursor = await sentDuring(async () => {
      const res = await t.fetch(`/api/external/poles?cursor=${encodeURIComponent(cursor!)}`, { apiKey: partner.apiKey });
      expect(res.status).toBe(200);
      items.push(...((await res.json()) as { items: { code: string }[] }).items.map((i) => i.code));
    });
    expect(short(byCursor)).toHaveLength(1);
    expect(byCursor[0]).toMatch(/^WITH horizon AS MATERIALIZED \(SELECT greatest\(lumen_visibility_horizon\(\), \$1::timestamptz\)/);
    expect(items).toHaveLength(3);

    const since = await sentDuring(async () => {
      expect((await t.fetch('/api/external/poles?page=1&pageSize=3&updatedSince=2020-01-01T00:00:00Z', { apiKey: partner.apiKey })).status).toBe(200);
    });
    expect(short(since)).toHaveLength(3);
  });

  it('a page walk without updatedSince: every page in order one read, a page out of order two, never a separate start', async () => {
    const tenant = await makeTenant(t.rt, { name: 'Tromsø kommune, vegbelysning og gatelys for hele bykjernen' });
    await sql`INSERT INTO pole (tenant_id, code, latitude, longitude)
              SELECT ${tenant.id}, 'TOS-' || lpad(g::text, 4, '0'), 69.65 + g * 0.0001, 18.95 FROM generate_series(1, 23) g`.execute(t.rt.db);
    const partner = await makePartner(t.rt, { tenantId: tenant.id, scopes: ['canReadCityData'] });
    // The statements that read the list, read a walk's start on their own, or write the walk.
    const kinds = (sent: string[]) => ({
      page: sent.filter((s) => /\bpage AS MATERIALIZED\b/.test(s)).length,
      start: sent.filter((s) => /^SELECT to_char\(greatest\(lumen_visibility_horizon\(\)/.test(s)).length,
      save: sent.filter((s) => /INSERT INTO city_read_walk/.test(s)).length,
    });
    const page = async (n: number, pageSize: number) => {
      let codes: string[] = [];
      const sent = await sentDuring(async () => {
        const res = await t.fetch(`/api/external/poles?page=${n}&pageSize=${pageSize}`, { apiKey: partner.apiKey });
        expect(res.status).toBe(200);
        codes = ((await res.json()) as { items: { code: string }[] }).items.map((i) => i.code);
      });
      return { codes, sent: kinds(sent) };
    };

    const walked: string[] = [];
    for (let n = 1; n <= 5; n++) {
      const p = await page(n, 5);
      expect(p.sent, `page ${n}`).toEqual({ page: 1, start: 0, save: 1 });
      walked.push(...p.codes);
    }
    // The walk served the list once, in order: each one-statement page continued where the walk had ended.
    const all = ((await (await t.fetch('/api/external/poles?pageSize=1000', { apiKey: partner.apiKey })).json()) as { items: { code: string }[] }).items.map((i) => i.code);
    expect(all).toHaveLength(23);
    expect(walked).toEqual(all);

    // Out of order, another page size: the walk remembers no end of page 2; the first read finds none and reads
    // no item, and the page is read from the start it found.
    const jump = await page(3, 4);
    expect(jump.sent).toEqual({ page: 2, start: 0, save: 1 });
    expect(jump.codes).toEqual(all.slice(8, 12));
    // The page after it is in order again.
    const next = await page(4, 4);
    expect(next.sent).toEqual({ page: 1, start: 0, save: 1 });
    expect(next.codes).toEqual(all.slice(12, 16));
  });

  it('a telemetry batch: its key, then begin, the import lock with the device rows, the update, commit', async () => {
    const tenant = await makeTenant(t.rt, { name: 'Boa Vista' });
    await makeCityPole(t.rt, { tenantId: tenant.id, code: 'BVB-RT-1', device: 'TG-BVB-RT-1' });
    const key = await createTelemetryKey(t.rt, { tenantId: tenant.id, name: 'network' });
    let applied = 0;
    const sent = await sentDuring(async () => {
      const res = await t.fetch('/api/telemetry/reports', {
        method: 'POST',
        apiKey: key.apiKey,
        json: { reports: [{ deviceIdentifier: 'TG-BVB-RT-1', online: true, relayOn: true, reportedAt: new Date().toISOString() }] },
      });
      expect(res.status).toBe(200);
      applied = ((await res.json()) as { applied: number }).applied;
    });
    expect(applied).toBe(1);
    expect(short(sent)).toHaveLength(5);
    expect(sent[1]).toMatch(/^begin$/i);
    expect(sent[2]).toMatch(/pg_try_advisory_xact_lock_shared.*FOR UPDATE/);
    expect(sent[3]).toMatch(/UPDATE telegestor/);
    expect(sent[4]).toMatch(/^commit$/i);
  });

  it('an events page is one statement, positioning included; an idle repeat call one too', async () => {
    const p = await makeEventPartner(t.rt);
    const s = await subjectFor(t.rt, p);
    // The first call brings the key into the cache and creates the partner's cursor.
    expect((await t.fetch('/api/external/events', { apiKey: p.partner.apiKey })).status).toBe(200);
    const written = await emit(t.rt, ['ServiceOrder.Created', s], ['ServiceOrder.StatusChanged', s], ['ServiceOrder.StatusChanged', s]);

    let nextSince = '';
    const page = await sentDuring(async () => {
      const res = await t.fetch('/api/external/events?limit=2', { apiKey: p.partner.apiKey });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { events: { eventId: string }[]; nextSince: string; hasMore: boolean };
      expect(body.events.map((e) => e.eventId)).toEqual(written.slice(0, 2).map((e) => e!.eventId));
      expect(body.hasMore).toBe(true);
      nextSince = body.nextSince;
    });
    // Lock, confirmation, read, positioning and the cursor's write: one function call.
    expect(short(page)).toHaveLength(1);
    expect(page[0]).toMatch(/^SELECT \* FROM lumen_poll_events\(/);

    // The rest, confirming the first page; then nothing new.
    const rest = await sentDuring(async () => {
      const res = await t.fetch(`/api/external/events?since=${encodeURIComponent(nextSince)}`, { apiKey: p.partner.apiKey });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { events: { eventId: string }[]; nextSince: string };
      expect(body.events.map((e) => e.eventId)).toEqual([written[2]!.eventId]);
      nextSince = body.nextSince;
    });
    expect(short(rest)).toHaveLength(1);
    const idle = await sentDuring(async () => {
      const res = await t.fetch(`/api/external/events?since=${encodeURIComponent(nextSince)}`, { apiKey: p.partner.apiKey });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { events: unknown[] }).events).toEqual([]);
    });
    expect(short(idle)).toHaveLength(1);
    expect(idle[0]).toMatch(/^SELECT \* FROM lumen_poll_events\(/);
  });
});
