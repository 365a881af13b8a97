import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePartner, makeTenant } from '../support/factories.js';
import { intakeBody, JPEG, listFiles, postJson, startIntakeApp, startStub, type IntakeTestApp, type StubServer } from './support.js';

/**
 * LUMEN_ATTACHMENT_MEMORY: attachments held in memory at once are bounded process-wide;
 * past the bound they wait for room and are all stored, none fails. A URL download
 * counts 5 MiB until it ends, so a budget of 10 MiB lets two run at once.
 */

let t: IntakeTestApp;
let host: StubServer;
let active = 0;
let peakActive = 0;

beforeAll(async () => {
  // One city here: it may hold the whole budget (test/intake/tenant-budgets.test.ts has the shares).
  t = await startIntakeApp({ LUMEN_ATTACHMENT_MEMORY: '10MiB', LUMEN_TENANT_BUDGET_SHARE: '100' });
  host = await startStub((_req, res) => {
    active++;
    peakActive = Math.max(peakActive, active);
    // Answered on the next turn: downloads overlap if nothing holds them back.
    setTimeout(() => {
      active--;
      res.writeHead(200, { 'content-type': 'image/jpeg' }).end(JPEG);
    }, 20);
  });
});
afterAll(async () => {
  await host?.close();
  await t?.stop();
});

describe('attachment memory', () => {
  it('downloads at most as many attachments at once as fit, and stores every one', async () => {
    const tenant = await makeTenant(t.rt);
    const p = await makePartner(t.rt, { tenantId: tenant.id });
    const attachments = Array.from({ length: 8 }, (_, i) => ({ type: 'photo', contentType: 'image/jpeg', filename: `${i}.jpg`, url: `${host.url}/photo/${i}.jpg` }));
    const [a, b] = await Promise.all([postJson(t, p.apiKey, intakeBody('MEM-1', { attachments })), postJson(t, p.apiKey, intakeBody('MEM-2', { attachments }))]);
    expect([a.status, b.status]).toEqual([201, 201]);
    for (const res of [a, b]) expect(res.body.alert.attachments.map((x: { success: boolean }) => x.success)).toEqual(Array(8).fill(true));
    expect(host.requests).toHaveLength(16);
    expect(peakActive).toBe(2);
    // The same photo at eight URLs: one copy per alert is kept, the others written meanwhile are removed.
    expect(listFiles(path.join(t.blobDir, 'tenants', tenant.id))).toHaveLength(2);
  });
});
