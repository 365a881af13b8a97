import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, auditOf, cliJson } from '../operations/support.js';
import { intakeBody } from '../intake/support.js';
import { dismissRejectedItem, retryRejectedItem } from '../../src/services/partner-poll/index.js';
import { AppError } from '../../src/lib/errors.js';
import { cityAccess, outsiderCaller } from './support.js';

let t: TestApp;
let api: ReturnType<typeof adminFetch>;
let tenantId: string;
let partner: { id: string; code: string };

beforeAll(async () => {
  t = await startTestApp();
  api = adminFetch(t, await adminToken(t, 'inbound-desk'));
  tenantId = (await makeTenant(t.rt)).id;
  partner = await makePartner(t.rt, { tenantId });
});
afterAll(async () => {
  await t?.stop();
});

/** A refused item as a poll records it. */
async function rejected(item: Record<string, unknown>): Promise<string> {
  const row = await t.rt.db
    .insertInto('rejected_inbound_item')
    .values({
      external_system_id: partner.id,
      tenant_id: tenantId,
      protocol_number: typeof item.protocolNumber === 'string' ? item.protocolNumber : null,
      item: JSON.stringify(item),
      item_hash: createHash('sha256').update(JSON.stringify(item)).digest(),
      problem_code: 'validation-failed',
      reasons: JSON.stringify([{ pointer: '/assetType', message: 'must be POLE' }]),
      since: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

const attention = async () => ((await (await api(`/tenants/${tenantId}/attention`)).json()) as { rejectedInboundItems: number }).rejectedInboundItems;

describe('rejected inbound items', () => {
  it('retries one through intake (accepted: resolved), retries a bad one (refused again), dismisses it; another city changes nothing', async () => {
    const good = await rejected(intakeBody('POLL-RETRY-1'));
    const bad = await rejected(intakeBody('POLL-RETRY-2', { assetType: 'TREE' }));
    expect(await attention()).toBe(2);

    const other = outsiderCaller(cityAccess((await makeTenant(t.rt)).id));
    expect(((await retryRejectedItem(t.rt, other, good).then(() => null, (e: unknown) => e)) as AppError).code).toBe('not-found');
    expect(((await dismissRejectedItem(t.rt, other, bad).then(() => null, (e: unknown) => e)) as AppError).code).toBe('not-found');
    expect(await t.rt.db.selectFrom('alert').select('id').where('protocol_number', '=', 'POLL-RETRY-1').execute()).toHaveLength(0);

    const res = await api(`/rejected-inbound-items/${good}/retry`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ accepted: true, item: { id: good, resolvedAt: expect.any(String) } });
    expect(await t.rt.db.selectFrom('alert').select('id').where('protocol_number', '=', 'POLL-RETRY-1').execute()).toHaveLength(1);

    const again = (await (await api(`/rejected-inbound-items/${bad}/retry`, { method: 'POST' })).json()) as { accepted: boolean; item: { resolvedAt: string | null; reasons: { pointer: string }[] } };
    expect(again.accepted).toBe(false);
    expect(again.item.resolvedAt).toBeNull();
    expect(again.item.reasons.map((r) => r.pointer)).toContain('/assetType');
    expect(await attention()).toBe(1);

    const dismissed = cliJson(await t.cli('inbound', 'dismiss', bad, '--json'));
    expect(dismissed).toMatchObject({ id: bad, dismissedAt: expect.any(String), dismissedBy: expect.stringMatching(/^cli:/) });
    expect(await attention()).toBe(0);
    const open = (await (await api(`/partners/${partner.code}/rejected-inbound-items?status=open`)).json()) as { total: number };
    expect(open.total).toBe(0);
    expect((await auditOf(t, partner.id)).map((a) => a.action)).toEqual(['inbound.retry', 'inbound.retry', 'inbound.dismiss']);
  });
});
