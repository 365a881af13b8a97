import type http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { findPollState } from '../../src/db/repositories/partner-poll.repository.js';
import { reconcilePartnerPolls } from '../../src/services/partner-poll/service.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { makePollingPartner, request, startPartnerStub, type PartnerStub } from './support.js';

const apps: TestApp[] = [];
let db: TestDatabase | null = null;
let s: PartnerStub | null = null;
afterAll(async () => {
  await s?.close();
  for (const a of apps) await a.stop().catch(() => {});
  await db?.drop();
});

// The smallest JPEG magic Lumen checks (FF D8 FF), padded to look like a file.
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64, 1)]);

describe('partner polling across a service restart', () => {
  it('stopped in the middle of a batch, a new instance reads the batch again: no request lost, none twice', async () => {
    db = await createTestDatabase();
    // Downloads that outlast the graceful stop, so the stop lands in the middle of item 6.
    const env = { LUMEN_ATTACHMENT_ATTEMPT_TIMEOUT_MS: '60000', LUMEN_ATTACHMENT_TOTAL_TIMEOUT_MS: '120000' };
    const first = await startTestApp({ db, env });
    apps.push(first);

    s = await startPartnerStub();
    const items = Array.from({ length: 10 }, (_, i) => request(`RST-${i + 1}`, `2026-03-14T12:00:${String(10 + i)}.000Z`));
    items[5] = { ...items[5], attachments: [{ type: 'photo', url: `${s.base}/photos/rst-6.jpg`, contentType: 'image/jpeg', filename: 'rst-6.jpg' }] };
    s.handle(() => ({ json: { items, nextSince: '2026-03-14T12:00:19.000Z', hasMore: false } }));
    let serving = false;
    const hanging: http.ServerResponse[] = [];
    s.handleOther((_path, res) => {
      if (!serving) return void hanging.push(res);
      res.setHeader('content-type', 'image/jpeg');
      res.end(JPEG);
    });

    const p = await makePollingPartner(first.rt, s.url, { interval: 1 });
    await reconcilePartnerPolls(first.rt);
    // Item 6 is being downloaded: items 1-5 are stored, the batch is not.
    await expect.poll(() => s!.otherCalls.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
    const count = async () => (await first.rt.db.selectFrom('alert').select('protocol_number').where('external_system_id', '=', p.id).execute()).map((x) => x.protocol_number);
    expect((await count()).sort()).toEqual(['RST-1', 'RST-2', 'RST-3', 'RST-4', 'RST-5']);
    expect((await findPollState(first.rt.db, p.id))?.cursor).toBeNull();

    await first.stop();

    serving = true;
    const second = await startTestApp({ db, env });
    apps.push(second);
    const alerts = async () =>
      second.rt.db
        .selectFrom('alert')
        .select(['protocol_number', 'service_order_id', 'status'])
        .where('external_system_id', '=', p.id)
        .execute();
    await expect.poll(async () => (await alerts()).length, { timeout: 30_000 }).toBe(10);
    await expect.poll(async () => (await findPollState(second.rt.db, p.id))?.cursor?.toISOString(), { timeout: 10_000 }).toBe('2026-03-14T12:00:19.000Z');
    const rows = await alerts();
    expect(new Set(rows.map((r) => r.protocol_number)).size).toBe(10);
    expect(new Set(rows.map((r) => r.service_order_id)).size).toBe(10);
    expect(rows.every((r) => r.status === 'Linked')).toBe(true);
    const orders = await second.rt.db.selectFrom('service_order').select('id').where('tenant_id', '=', p.tenantId).execute();
    expect(orders).toHaveLength(10);
    // The first batch was read again from the same cursor (no since: it had never moved).
    expect(s.calls.slice(0, 2).map((c) => c.since)).toEqual([null, null]);
    const photo = await second.rt.db
      .selectFrom('alert_attachment')
      .innerJoin('alert', 'alert.id', 'alert_attachment.alert_id')
      .select(['alert_attachment.success'])
      .where('alert.protocol_number', '=', 'RST-6')
      .where('alert.external_system_id', '=', p.id)
      .execute();
    expect(photo.some((x) => x.success)).toBe(true);
    for (const res of hanging) res.destroy();
  }, 120_000);
});
