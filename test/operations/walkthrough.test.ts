import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { cliJson } from './support.js';

/**
 * The operators' walkthrough of docs/triage.md ("Operations: triage and the service-order
 * lifecycle"), step by step with the same commands: a partner's request arrives in a
 * manual-triage city, an operator triages it with the CLI, and the partner sees the
 * outcome through its events.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

function request(protocolNumber: string, street: string) {
  return {
    protocolNumber,
    assetType: 'POLE',
    requestedAt: '2026-03-14T12:29:10Z',
    requester: { name: 'Maria da Silva', phone: '+5511987654321' },
    address: { street, number: '1500', neighborhood: 'Consolação', latitude: -23.5573, longitude: -46.6602 },
    problem: { description: 'Poste apagado há três noites' },
  };
}

describe('docs/triage.md walkthrough: triage an alert end to end with the CLI', () => {
  it('from a Pending alert to a completed order, and a discarded duplicate', async () => {
    // 1. A city with manual triage, one reason, one team, one partner (polling mode).
    const tenant = cliJson(await t.cli('tenant', 'create', '--name', 'São Paulo', '--ibge', '3550308', '--intake', 'manual', '--json'));
    cliJson(await t.cli('reason', 'create', '--tenant', tenant.id, '--code', 'LAMP_OUT', '--name-pt', 'Lâmpada apagada', '--name-en', 'Lamp out', '--priority', 'High', '--sla-hours', '24', '--json'));
    const team = cliJson(await t.cli('team', 'create', '--tenant', tenant.id, '--name', 'Equipe Centro 03', '--json'));
    const partner = cliJson(await t.cli('partner', 'create', '--tenant', tenant.id, '--code', 'PORTAL-156', '--scopes', 'canCreateServiceOrders,canReadCityData', '--transport', 'polling', '--json'));

    // 2. The partner sends two requests; both wait for triage.
    for (const [protocol, street] of [['156-0001', 'Rua Augusta'], ['156-0002', 'Rua Augusta']] as const) {
      const res = await t.fetch('/api/external/service-orders', { method: 'POST', apiKey: partner.apiKey, json: request(protocol, street) });
      expect(res.status).toBe(201);
      expect(await res.json()).toMatchObject({ status: 'RECEIVED', alert: { status: 'Pending' } });
    }

    // 3. The triage inbox.
    const inbox = cliJson(await t.cli('alert', 'list', '--tenant', tenant.id, '--status', 'Pending', '--json'));
    expect(inbox.items.map((a: { protocolNumber: string }) => a.protocolNumber)).toEqual(['156-0001', '156-0002']);
    const [first, duplicate] = inbox.items as { id: string }[];
    const human = await t.cli('alert', 'show', first!.id);
    expect(human.stdout).toContain('Pending');

    // 4. An order for the first, assigned to the team, with the right reason.
    const order = cliJson(await t.cli('alert', 'create-order', first!.id, '--team', team.id, '--reason', 'LAMP_OUT', '--json'));
    expect(order).toMatchObject({ status: 'ASSIGNED', priority: 'High', type: 'LAMP_OUT', team: { name: 'Equipe Centro 03' } });

    // 5. The duplicate: discarded (linking it with `alert link --order` is the other option).
    expect(cliJson(await t.cli('alert', 'discard', duplicate!.id, '--reason', 'duplicate of 156-0001', '--json')).status).toBe('Cancelled');

    // 6. The field work.
    expect(cliJson(await t.cli('order', 'start', order.id, '--json')).status).toBe('IN_PROGRESS');
    const done = cliJson(await t.cli('order', 'complete', order.id, '--note', 'lamp replaced', '--json'));
    expect(done).toMatchObject({ status: 'COMPLETED', closedAt: expect.any(String) });
    expect(cliJson(await t.cli('alert', 'show', first!.id, '--json')).status).toBe('Resolved');

    // 7. What the partner sees, and what the audit log kept.
    const events = await t.fetch('/api/external/events?limit=200', { apiKey: partner.apiKey });
    expect(events.status).toBe(200);
    const seen = ((await events.json()) as { events: { eventType: string; protocolNumber: string }[] }).events.map((e) => [e.protocolNumber, e.eventType]);
    expect(seen).toEqual([
      ['156-0001', 'ServiceOrder.Created'],
      ['156-0002', 'Alert.Cancelled'],
      ['156-0001', 'ServiceOrder.StatusChanged'],
      ['156-0001', 'ServiceOrder.Completed'],
    ]);
    const audit = cliJson(await t.cli('audit', 'list', '--tenant', tenant.id, '--json'));
    expect(audit.items.map((e: { action: string }) => e.action)).toEqual(['tenant.create', 'reason.create', 'team.create', 'partner.create', 'alert.create-order', 'alert.discard', 'service-order.start', 'service-order.complete']);
  });
});
