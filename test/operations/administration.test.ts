import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSecret, partnerSecretAad } from '../../src/lib/secret-box.js';
import { secretFile, startTestApp, type TestApp } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';
import { adminFetch, adminToken, auditOf, cliJson, problemOf } from './support.js';

let t: TestApp;
let api: ReturnType<typeof adminFetch>;
const cliActor = `cli:${userInfo().username}`;

beforeAll(async () => {
  t = await startTestApp();
  api = adminFetch(t, await adminToken(t, 'admin-desk'));
});
afterAll(async () => {
  await t?.stop();
});

describe('teams', () => {
  it('creates and lists through the API and the CLI; names unique per tenant; audited', async () => {
    const tenantId = (await makeTenant(t.rt)).id;
    const res = await api('/teams', { json: { tenantId, name: 'Equipe Centro 03' } });
    expect(res.status).toBe(201);
    const team = (await res.json()) as { id: string };
    expect(team).toMatchObject({ tenantId, name: 'Equipe Centro 03', id: expect.any(String), createdAt: expect.any(String) });
    const dup = await api('/teams', { json: { tenantId, name: 'Equipe Centro 03' } });
    expect(dup.status).toBe(409);
    expect((await problemOf(dup)).type).toBe('urn:lumen:problem:conflict');
    const fromCli = cliJson(await t.cli('team', 'create', '--tenant', tenantId, '--name', 'Equipe Norte 01', '--json'));
    expect(fromCli).toMatchObject({ tenantId, name: 'Equipe Norte 01' });
    const listed = cliJson(await t.cli('team', 'list', '--tenant', tenantId, '--json'));
    expect(listed.items.map((x: { name: string }) => x.name)).toEqual(['Equipe Centro 03', 'Equipe Norte 01']);
    expect(listed).toEqual(await (await api(`/teams?tenantId=${tenantId}`)).json());
    expect((await auditOf(t, team.id))[0]).toMatchObject({ action: 'team.create', actor: 'admin-token:admin-desk', before: null });
    expect((await auditOf(t, fromCli.id))[0]).toMatchObject({ action: 'team.create', actor: cliActor });

    const cliDup = await t.cli('team', 'create', '--tenant', tenantId, '--name', 'Equipe Norte 01');
    expect(cliDup.code).toBe(1);
    expect(cliDup.stderr).toContain('already taken');
    const noTenant = await api('/teams', { json: { tenantId: '00000000-0000-4000-8000-000000000000', name: 'X' } });
    expect(noTenant.status).toBe(422);
    expect((await api('/teams?tenantId=00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });
});

describe('tenant intake policy', () => {
  it('lumen tenant set-intake keeps working and is audited as the CLI user', async () => {
    const tenantId = (await makeTenant(t.rt, { intakePolicy: 'automatic' })).id;
    expect(cliJson(await t.cli('tenant', 'set-intake', tenantId, 'manual', '--json'))).toMatchObject({ id: tenantId, intakePolicy: 'manual' });
    expect((await auditOf(t, tenantId))[0]).toMatchObject({ action: 'tenant.set-intake', actor: cliActor, after: { intakePolicy: 'manual' } });
    const bad = await t.cli('tenant', 'set-intake', tenantId, 'sometimes');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('intakePolicy: must be automatic or manual');
  });
});

describe('partner administration', () => {
  it('shows and updates settings through the API; secrets sealed, never shown, audited as set', async () => {
    const tenantId = (await makeTenant(t.rt)).id;
    const p = await makePartner(t.rt, { tenantId, code: 'portal-api' });
    const shown = (await (await api('/partners/portal-api')).json()) as Record<string, unknown>;
    expect(shown).toMatchObject({ code: 'portal-api', eventTypes: null, rateLimitPerMinute: null, eventsMinIntervalSeconds: null, webhookSecretSet: false, keyPrefix: p.keyPrefix });
    expect(shown.apiKey).toBeUndefined();

    const res = await api('/partners/portal-api', {
      method: 'PATCH',
      json: { scopes: ['CanCreateAlerts'], webhookUrl: 'https://portal.example/hooks', webhookSecret: 'a-secret-of-enough-length', eventTypes: ['ServiceOrder.Created', 'ServiceOrder.Completed'], rateLimitPerMinute: 300, eventsMinIntervalSeconds: 60 },
    });
    expect(res.status).toBe(200);
    const updated = (await res.json()) as Record<string, unknown>;
    expect(updated).toMatchObject({ scopes: ['canCreateAlerts'], webhookUrl: 'https://portal.example/hooks', webhookSecretSet: true, eventTypes: ['ServiceOrder.Created', 'ServiceOrder.Completed'], rateLimitPerMinute: 300, eventsMinIntervalSeconds: 60 });
    expect(JSON.stringify(updated)).not.toContain('a-secret-of-enough-length');
    const row = await t.rt.db.selectFrom('external_system').selectAll().where('code', '=', 'portal-api').executeTakeFirstOrThrow();
    expect(openSecret(t.rt.config.secretKey, row.webhook_secret_enc!, partnerSecretAad(row.id, 'webhook_secret_enc'))).toBe('a-secret-of-enough-length');
    const audit = (await auditOf(t, p.id)).at(-1)!;
    expect(audit).toMatchObject({ action: 'partner.update', actor: 'admin-token:admin-desk', before: { webhookSecretSet: false, rateLimitPerMinute: null }, after: { webhookSecretSet: true, rateLimitPerMinute: 300 } });
    expect(JSON.stringify(audit)).not.toContain('a-secret-of-enough-length');

    const cleared = (await (await api('/partners/portal-api', { method: 'PATCH', json: { eventTypes: null, rateLimitPerMinute: null, webhookUrl: null } })).json()) as Record<string, unknown>;
    expect(cleared).toMatchObject({ eventTypes: null, rateLimitPerMinute: null, webhookUrl: null, webhookSecretSet: true });

    const invalid = await api('/partners/portal-api', { method: 'PATCH', json: { eventTypes: ['Order.Exploded'], webhookUrl: 'ftp://x', rateLimitPerMinute: 0 } });
    expect(invalid.status).toBe(422);
    expect(((await problemOf(invalid)).errors ?? []).map((e) => e.pointer).sort()).toEqual(['/eventTypes/0', '/rateLimitPerMinute']);
    expect((await api('/partners/portal-api', { method: 'PATCH', json: {} })).status).toBe(422);
    expect((await api('/partners/portal-api', { method: 'PATCH', json: { color: 'red' } })).status).toBe(422);
    expect((await api('/partners/nobody', { method: 'PATCH', json: { enabled: false } })).status).toBe(404);
    const http = await api('/partners/portal-api', { method: 'PATCH', json: { pollingUrl: 'ftp://partner.example/requests' } });
    expect(http.status).toBe(422);
    expect((await problemOf(http)).errors?.[0]?.pointer).toBe('/pollingUrl');
  });

  it('disabling through the API makes the key answer 403 at once; rotation through the API invalidates the old key', async () => {
    const p = await makePartner(t.rt);
    expect((await t.fetch('/api/external/health', { apiKey: p.apiKey })).status).toBe(200);
    expect(((await (await api(`/partners/${p.code}`, { method: 'PATCH', json: { enabled: false } })).json()) as { enabled: boolean }).enabled).toBe(false);
    expect((await t.fetch('/api/external/health', { apiKey: p.apiKey })).status).toBe(403);
    await api(`/partners/${p.code}`, { method: 'PATCH', json: { enabled: true } });

    const rotated = await api(`/partners/${p.code}/rotate-key`, { method: 'POST' });
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get('cache-control')).toBe('no-store');
    const body = (await rotated.json()) as { apiKey: string; keyPrefix: string };
    expect(body.apiKey).toMatch(/^lmn_test_/);
    expect(body.keyPrefix).toBe(body.apiKey.slice(0, 17));
    expect((await t.fetch('/api/external/health', { apiKey: p.apiKey })).status).toBe(401);
    expect((await t.fetch('/api/external/health', { apiKey: body.apiKey })).status).toBe(200);
    const audit = (await auditOf(t, p.id)).at(-1)!;
    expect(audit).toMatchObject({ action: 'partner.rotate-key', before: { keyPrefix: p.keyPrefix }, after: { keyPrefix: body.keyPrefix } });
    expect(JSON.stringify(audit)).not.toContain(body.apiKey);
  });

  it('creates and lists partners through the API', async () => {
    const tenantId = (await makeTenant(t.rt)).id;
    const res = await api('/partners', { json: { tenantId, code: 'mapa-urbano', scopes: ['canReadCityData'], transport: 'polling' } });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { apiKey: string; id: string };
    expect(created).toMatchObject({ code: 'mapa-urbano', transport: 'polling', scopes: ['canReadCityData'] });
    expect((await t.fetch('/api/external/health', { apiKey: created.apiKey })).status).toBe(200);
    expect((await auditOf(t, created.id))[0]).toMatchObject({ action: 'partner.create', before: null });
    expect(JSON.stringify(await auditOf(t, created.id))).not.toContain(created.apiKey);
    const listed = (await (await api(`/partners?tenantId=${tenantId}`)).json()) as { items: { code: string }[] };
    expect(listed.items.map((x) => x.code)).toEqual(['mapa-urbano']);
    expect((await api('/partners', { json: { tenantId, code: 'mapa-urbano', scopes: [] } })).status).toBe(409);
  });

  it('lumen partner update / show: only the options given change; "none", "all" and "default" clear', async () => {
    const tenantId = (await makeTenant(t.rt)).id;
    await makePartner(t.rt, { tenantId, code: 'portal-cli' });
    const updated = cliJson(
      await t.cli('partner', 'update', 'portal-cli', '--transport', 'polling', '--event-types', 'ServiceOrder.Completed,Alert.Cancelled', '--rate-limit', '120', '--events-min-interval', '90', '--polling-url', 'https://portal.example/requests', '--polling-key-file', secretFile('their-key'), '--polling-interval', '60', '--scopes', 'canCreateAlerts,CanReadCityData', '--json'),
    );
    expect(updated).toMatchObject({ transport: 'polling', eventTypes: ['ServiceOrder.Completed', 'Alert.Cancelled'], rateLimitPerMinute: 120, eventsMinIntervalSeconds: 90, pollingUrl: 'https://portal.example/requests', pollingKeySet: true, pollingIntervalSeconds: 60, scopes: ['canCreateAlerts', 'canReadCityData'] });
    expect(JSON.stringify(updated)).not.toContain('their-key');
    const shown = cliJson(await t.cli('partner', 'show', 'portal-cli', '--json'));
    expect(shown).toEqual(updated);
    const human = await t.cli('partner', 'show', 'portal-cli');
    expect(human.stdout).toContain('events:    ServiceOrder.Completed,Alert.Cancelled  min interval 90s');
    expect(human.stdout).toContain('rate:      120/min');
    const cleared = cliJson(await t.cli('partner', 'update', 'portal-cli', '--event-types', 'all', '--rate-limit', 'default', '--events-min-interval', 'none', '--polling-key', 'none', '--json'));
    expect(cleared).toMatchObject({ eventTypes: null, rateLimitPerMinute: null, eventsMinIntervalSeconds: null, pollingKeySet: false, pollingUrl: 'https://portal.example/requests' });
    const audit = (await auditOf(t, updated.id)).map((a) => [a.action, a.actor]);
    expect(audit).toEqual([
      ['partner.update', cliActor],
      ['partner.update', cliActor],
    ]);
    const bad = await t.cli('partner', 'update', 'portal-cli', '--event-types', 'Nope', '--rate-limit', '-3');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('eventTypes: unknown event type(s): Nope');
    expect(bad.stderr).toContain('rateLimitPerMinute');
    const nothing = await t.cli('partner', 'update', 'portal-cli');
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain('give at least one setting to change');
  });
});

describe('audit log', () => {
  it('lists oldest first, filters by tenant and time, pages with after; same through the CLI', async () => {
    const tenantId = (await makeTenant(t.rt)).id;
    const since = new Date().toISOString();
    for (const name of ['A', 'B', 'C']) await api('/teams', { json: { tenantId, name } });
    const page1 = (await (await api(`/audit?tenantId=${tenantId}&limit=2`)).json()) as { items: { id: number; after: { name: string } }[]; nextAfter: number | null };
    expect(page1.items.map((e) => e.after.name)).toEqual(['A', 'B']);
    expect(page1.nextAfter).toBe(page1.items[1]!.id);
    const page2 = (await (await api(`/audit?tenantId=${tenantId}&limit=2&after=${page1.nextAfter}`)).json()) as { items: { after: { name: string } }[]; nextAfter: number | null };
    expect(page2.items.map((e) => e.after.name)).toEqual(['C']);
    expect(page2.nextAfter).toBeNull();
    const cli = cliJson(await t.cli('audit', 'list', '--tenant', tenantId, '--since', since, '--json'));
    expect(cli.items).toHaveLength(3);
    expect(cli.items[0]).toMatchObject({ actor: 'admin-token:admin-desk', action: 'team.create', entityType: 'team', tenantId, requestId: expect.any(String) });
    const future = cliJson(await t.cli('audit', 'list', '--tenant', tenantId, '--since', '2999-01-01T00:00:00Z', '--json'));
    expect(future).toEqual({ items: [], nextAfter: null });
    const bad = await t.cli('audit', 'list', '--since', 'yesterday');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('since: must be an ISO 8601 timestamp');
    expect((await api('/audit?since=yesterday')).status).toBe(400);
  });
});
