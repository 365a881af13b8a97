import { cliJson } from '../support/app.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { intakeBody, postJson, startIntakeApp, startStub, type IntakeTestApp, type StubServer } from '../intake/support.js';

let t: IntakeTestApp;
let host: StubServer;
beforeAll(async () => {
  t = await startIntakeApp({ LUMEN_ATTACHMENT_RETRY_DELAY_MS: '10' });
  host = await startStub((_req, res) => void res.writeHead(503).end());
});
afterAll(async () => {
  await host?.close();
  await t?.stop();
});

const json = cliJson;

async function tenantAndPartner(code: string, intake = 'automatic') {
  const tenant = json(await t.cli('tenant', 'create', '--name', `Cidade ${code}`, '--intake', intake, '--json'));
  const partner = json(await t.cli('partner', 'create', '--tenant', tenant.id, '--code', code, '--scopes', 'canCreateServiceOrders', '--json'));
  return { tenant, partner };
}

describe('lumen reason', () => {
  it('creates reasons, maps partner codes to them, and the mapping drives intake', async () => {
    const { tenant, partner } = await tenantAndPartner('app-156');
    const created = json(await t.cli('reason', 'create', '--tenant', tenant.id, '--code', 'LAMP_OUT', '--name-pt', 'Lâmpada apagada', '--name-en', 'Lamp out', '--priority', 'high', '--sla-hours', '8', '--json'));
    expect(created).toMatchObject({ tenantId: tenant.id, code: 'LAMP_OUT', namePt: 'Lâmpada apagada', nameEn: 'Lamp out', priority: 'High', slaHours: 8 });

    const mapped = json(await t.cli('reason', 'map', '--partner', 'app-156', '--from', 'LAMPADA_APAGADA', '--to', 'LAMP_OUT', '--json'));
    expect(mapped).toEqual({ partner: 'app-156', partnerCode: 'LAMPADA_APAGADA', tenantId: tenant.id, reasonCode: 'LAMP_OUT', description: null });

    const list = json(await t.cli('reason', 'list', '--tenant', tenant.id, '--json'));
    expect(list.reasons.map((r: { code: string }) => r.code)).toEqual(['EXTERNAL_OTHER', 'LAMP_OUT']);
    expect(list.reasons[0]).toMatchObject({ priority: 'Medium', slaHours: 24, namePt: 'Outros (sistema externo)' });
    expect(list.mappings).toEqual([mapped]);
    const human = await t.cli('reason', 'list', '--tenant', tenant.id);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('LAMP_OUT  High  sla=8h');
    expect(human.stdout).toContain('app-156: LAMPADA_APAGADA -> LAMP_OUT');

    const res = await postJson(t, partner.apiKey, intakeBody('CLI-1', { reasonCode: 'LAMPADA_APAGADA' }), { 'accept-language': 'en' });
    expect(res.body).toMatchObject({ priority: 'High', alert: { alertReasonCode: 'LAMP_OUT', alertReasonName: 'Lamp out' } });

    const unmapped = json(await t.cli('reason', 'unmap', '--partner', 'app-156', '--from', 'LAMPADA_APAGADA', '--json'));
    expect(unmapped).toEqual({ partner: 'app-156', partnerCode: 'LAMPADA_APAGADA', removed: true });
    const after = await postJson(t, partner.apiKey, intakeBody('CLI-2', { reasonCode: 'LAMPADA_APAGADA' }));
    expect(after.body.alert.alertReasonCode).toBe('EXTERNAL_OTHER');
  });

  it('explains what is wrong, with exit code 1', async () => {
    const { tenant } = await tenantAndPartner('app-errors');
    const bad = await t.cli('reason', 'create', '--tenant', tenant.id, '--code', 'BAD CODE', '--name-pt', 'x', '--name-en', 'x', '--priority', 'Urgent', '--sla-hours', '0');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('code: must be 1 to 64 letters');
    expect(bad.stderr).toContain('priority: must be one of Low, Medium, High, Critical');
    expect(bad.stderr).toContain('slaHours: must be a whole number of hours from 1 to 8760');

    const dup = await t.cli('reason', 'create', '--tenant', tenant.id, '--code', 'EXTERNAL_OTHER', '--name-pt', 'x', '--name-en', 'x', '--priority', 'Low', '--sla-hours', '1');
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain('reason EXTERNAL_OTHER already exists');

    const unknownTenant = await t.cli('reason', 'list', '--tenant', '00000000-0000-4000-8000-000000000000');
    expect(unknownTenant.code).toBe(1);
    expect(unknownTenant.stderr).toContain('tenant 00000000-0000-4000-8000-000000000000 does not exist');

    const unknownReason = await t.cli('reason', 'map', '--partner', 'app-errors', '--from', 'X', '--to', 'NOPE');
    expect(unknownReason.code).toBe(1);
    expect(unknownReason.stderr).toContain(`to: no reason "NOPE" in the partner's tenant`);

    const unknownPartner = await t.cli('reason', 'map', '--partner', 'nobody', '--from', 'X', '--to', 'EXTERNAL_OTHER');
    expect(unknownPartner.code).toBe(1);

    const usage = await t.cli('reason', 'create', '--tenant', tenant.id);
    expect(usage.code).toBe(2);
  });
});

describe('lumen attachment failures', () => {
  it('lists the failed attachment URLs of a tenant for manual review', async () => {
    const { tenant, partner } = await tenantAndPartner('app-files');
    const url = `${host.url}/fotos/156-77.jpg`;
    const res = await postJson(t, partner.apiKey, intakeBody('CLI-ATT-1', { attachments: [{ type: 'photo', url, filename: 'poste.jpg', contentType: 'image/jpeg' }] }));
    expect(res.body.alert.attachments[0].success).toBe(false);

    const out = json(await t.cli('attachment', 'failures', '--tenant', tenant.id, '--json'));
    expect(out.failures).toEqual([
      {
        id: expect.any(String),
        createdAt: expect.stringMatching(/Z$/),
        partner: 'app-files',
        protocolNumber: 'CLI-ATT-1',
        alertId: res.body.alert.id,
        alertNumber: 1,
        attachmentId: expect.any(String),
        url,
        filename: 'poste.jpg',
        contentType: 'image/jpeg',
        errorCode: 'download-failed',
        detail: 'HTTP 503',
        attempts: 3,
        dismissedAt: null,
        dismissedBy: null,
      },
    ]);
    const human = await t.cli('attachment', 'failures', '--tenant', tenant.id);
    expect(human.stdout).toContain(url);
    expect(human.stdout).toContain('CLI-ATT-1');

    const future = json(await t.cli('attachment', 'failures', '--tenant', tenant.id, '--since', '2999-01-01T00:00:00Z', '--json'));
    expect(future.failures).toEqual([]);
    expect((await t.cli('attachment', 'failures', '--tenant', tenant.id, '--limit', '0')).code).toBe(2);
    const empty = await tenantAndPartner('app-none');
    expect((await t.cli('attachment', 'failures', '--tenant', empty.tenant.id)).stdout).toContain('No failed attachment downloads.');
  });
});
