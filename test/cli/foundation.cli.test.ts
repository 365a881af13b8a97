import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretFile, startTestApp, type TestApp, cliJson } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

const json = cliJson;

describe('lumen CLI (foundation)', () => {
  it('prints the version of Lumen and of its runtime', async () => {
    const out = await t.cli('--version');
    expect(out.code).toBe(0);
    expect(out.stdout.trim()).toBe(`lumen 0.1.0 (node ${process.version})`);
  });

  it('prints help for the program and for each command', async () => {
    const root = await t.cli('--help');
    expect(root.code).toBe(0);
    for (const cmd of ['serve', 'migrate', 'tenant', 'partner']) expect(root.stdout).toContain(cmd);
    const sub = await t.cli('partner', 'create', '--help');
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain('--scopes');
    expect(sub.stdout).toContain('--webhook-url');
  });

  it('creates and lists tenants', async () => {
    const tenant = json(await t.cli('tenant', 'create', '--name', 'São Paulo', '--ibge', '3550308', '--intake', 'manual', '--json'));
    expect(tenant).toMatchObject({ id: expect.any(String), name: 'São Paulo', ibgeCode: '3550308', intakePolicy: 'manual' });
    const list = json(await t.cli('tenant', 'list', '--json'));
    expect(list.tenants.map((x: { id: string }) => x.id)).toContain(tenant.id);
    const human = await t.cli('tenant', 'list');
    expect(human.stdout).toContain('São Paulo');
  });

  it('creates a partner (PascalCase scopes accepted) whose key works, rotates and disables it', async () => {
    const tenant = json(await t.cli('tenant', 'create', '--name', 'Campinas', '--json'));
    const p = json(await t.cli('partner', 'create', '--tenant', tenant.id, '--code', 'citizen-app', '--scopes', 'CanReadCityData,canCreateAlerts', '--webhook-url', 'https://partner.example/hooks', '--webhook-secret-file', secretFile('a-long-enough-secret'), '--json'));
    expect(p).toMatchObject({ code: 'citizen-app', tenantId: tenant.id, scopes: ['canReadCityData', 'canCreateAlerts'], transport: 'webhook', webhookSecretSet: true, enabled: true });
    expect(p.apiKey).toMatch(/^lmn_test_/);
    expect(p.keyPrefix).toBe(p.apiKey.slice(0, 17));
    expect(JSON.stringify(p)).not.toContain('a-long-enough-secret');
    expect((await t.fetch('/api/external/health', { apiKey: p.apiKey })).status).toBe(200);

    const list = json(await t.cli('partner', 'list', '--json'));
    const listed = list.partners.find((x: { code: string }) => x.code === 'citizen-app');
    expect(listed.keyPrefix).toBe(p.keyPrefix);
    expect(listed.apiKey).toBeUndefined();

    const rotated = json(await t.cli('partner', 'rotate-key', 'citizen-app', '--json'));
    expect(rotated.apiKey).not.toBe(p.apiKey);
    expect((await t.fetch('/api/external/health', { apiKey: p.apiKey })).status).toBe(401);
    expect((await t.fetch('/api/external/health', { apiKey: rotated.apiKey })).status).toBe(200);

    const disabled = json(await t.cli('partner', 'disable', 'citizen-app', '--json'));
    expect(disabled.enabled).toBe(false);
    expect((await t.fetch('/api/external/health', { apiKey: rotated.apiKey })).status).toBe(403);
  });

  it('fails clearly, with a non-zero exit, on bad input', async () => {
    const tenant = json(await t.cli('tenant', 'create', '--name', 'Santos', '--json'));
    const badScope = await t.cli('partner', 'create', '--tenant', tenant.id, '--code', 'x1', '--scopes', 'canFly', '--json');
    expect(badScope.code).toBe(1);
    expect(badScope.stdout).toBe('');
    expect(badScope.stderr).toContain('canFly');
    const badIbge = await t.cli('tenant', 'create', '--name', 'X', '--ibge', '12');
    expect(badIbge.code).toBe(1);
    expect(badIbge.stderr).toContain('ibgeCode: must be 7 digits');
    const unknownTenant = await t.cli('partner', 'create', '--tenant', '00000000-0000-4000-8000-000000000000', '--code', 'x2', '--scopes', 'canReadCityData');
    expect(unknownTenant.code).toBe(1);
    expect(unknownTenant.stderr).toContain('tenant 00000000-0000-4000-8000-000000000000');
    json(await t.cli('partner', 'create', '--tenant', tenant.id, '--code', 'dup', '--scopes', 'canReadCityData', '--json'));
    const dup = await t.cli('partner', 'create', '--tenant', tenant.id, '--code', 'dup', '--scopes', 'canReadCityData');
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain('already taken');
    const plainHttp = await t.cli('partner', 'create', '--tenant', tenant.id, '--code', 'x3', '--scopes', 'canReadCityData', '--webhook-url', 'ftp://x');
    expect(plainHttp.code).toBe(1);
    expect(plainHttp.stderr).toContain('webhookUrl');
    const privateIp = await t.cli('partner', 'create', '--tenant', tenant.id, '--code', 'x4', '--scopes', 'canReadCityData', '--webhook-url', 'https://169.254.169.254/latest');
    expect(privateIp.code).toBe(1);
    expect(privateIp.stderr).toContain('webhookUrl: must point at a public address');
    const privatePoll = await t.cli('partner', 'create', '--tenant', tenant.id, '--code', 'x5', '--scopes', 'canCreateAlerts', '--transport', 'polling', '--polling-url', 'https://10.0.0.7/requests');
    expect(privatePoll.code).toBe(1);
    expect(privatePoll.stderr).toContain('pollingUrl: must point at a public address');
    const unknownCmd = await t.cli('tenant', 'explode');
    expect(unknownCmd.code).toBe(2);
    const missing = await t.cli('partner', 'rotate-key', 'nobody');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('partner nobody');
  });

  it('reports a bad configuration naming each variable', async () => {
    const out = await t.cli('tenant', 'list', '--json');
    expect(out.code).toBe(0);
    const bad = await runWith({ PORT: 'x', LUMEN_LOG_LEVEL: 'loud' }, 'tenant', 'list');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('PORT');
    expect(bad.stderr).toContain('LUMEN_LOG_LEVEL');
  });

  it('migrate is idempotent', async () => {
    const out = json(await t.cli('migrate', '--json'));
    expect(out.migrated).toBe(true);
  });
});

async function runWith(extra: Record<string, string>, ...argv: string[]) {
  const { cli } = await import('../support/app.js');
  return cli({ ...t.env, ...extra }, ...argv);
}
