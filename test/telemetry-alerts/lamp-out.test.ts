import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { ingestReports } from '../../src/services/city-data/index.js';
import { cliActor } from '../../src/services/audit/index.js';
import { discardAlert } from '../../src/services/operations/index.js';
import { detectLampOuts, LAMP_OUT_REASON, setLampOutPolicy } from '../../src/services/telemetry-alerts/index.js';
import { testEnv } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { makeCityPole, makeTenant } from '../support/factories.js';

// A runtime without job workers: the minute job must not run the rule at the real clock
// while the test runs it at the instants it names.
let db: TestDatabase;
let rt: Runtime;
beforeAll(async () => {
  db = await createTestDatabase();
  rt = await openRuntime(loadConfig(testEnv(db.url)), createLogger('silent'), { migrate: false, work: false });
});
afterAll(async () => {
  await rt?.close();
  await db?.drop();
});

/** São Paulo local time on 2026-03-14 (UTC-3) as an instant. */
const sp = (hhmm: string, day = 14) => new Date(`2026-03-${day}T${hhmm}:00.000-03:00`);

async function city(policy: 'manual' | 'automatic', afterMinutes: number | null = 30) {
  const tenant = await makeTenant(rt, { intakePolicy: policy });
  await setLampOutPolicy(rt, cliActor(), tenant.id, { afterMinutes, nightStarts: '18:00', nightEnds: '06:00', timezone: 'America/Sao_Paulo' });
  return tenant.id;
}

async function report(tenantId: string, device: string, at: Date, state: { online: boolean; relayOn: boolean | null }) {
  const r = await ingestReports(rt, tenantId, [{ deviceIdentifier: device, ...state, reportedAt: at.toISOString() }], { now: at });
  expect(r.applied).toBe(1);
}

const alertsOf = (tenantId: string) =>
  rt.db.selectFrom('alert').select(['id', 'status', 'reason_code', 'service_order_id', 'protocol_number']).where('tenant_id', '=', tenantId).orderBy('created_at').execute();

describe('telemetry lamp-out alerts', () => {
  it('a relay off at night for longer than the threshold raises one Pending alert, by telemetry, with the TELEMETRY_LAMP_OUT reason', async () => {
    const tenantId = await city('manual');
    await makeCityPole(rt, { tenantId, code: 'NIGHT-1', device: 'TG-N1' });
    await report(tenantId, 'TG-N1', sp('20:00'), { online: true, relayOn: true });
    await report(tenantId, 'TG-N1', sp('20:10'), { online: true, relayOn: false });

    expect(await detectLampOuts(rt, { now: sp('20:30') })).toEqual({ raised: 0, noted: 0 });
    expect(await alertsOf(tenantId)).toEqual([]);
    expect(await detectLampOuts(rt, { now: sp('20:41') })).toEqual({ raised: 1, noted: 0 });
    const [alert] = await alertsOf(tenantId);
    expect(alert).toMatchObject({ status: 'Pending', reason_code: LAMP_OUT_REASON, service_order_id: null });
    const history = await rt.db.selectFrom('alert_status_history').select(['to_status', 'actor']).where('alert_id', '=', alert!.id).execute();
    expect(history).toEqual([{ to_status: 'Pending', actor: 'telemetry' }]);

    // At most one alert per pole: later passes raise nothing more.
    expect((await detectLampOuts(rt, { now: sp('21:00') })).raised).toBe(0);
    expect((await detectLampOuts(rt, { now: sp('23:59') })).raised).toBe(0);
    expect(await alertsOf(tenantId)).toHaveLength(1);
  });

  it('a relay off by day is not an outage; at night it counts from the night’s start', async () => {
    const tenantId = await city('manual');
    await makeCityPole(rt, { tenantId, code: 'DAY-1', device: 'TG-D1' });
    await report(tenantId, 'TG-D1', sp('14:00'), { online: true, relayOn: false });
    expect((await detectLampOuts(rt, { now: sp('15:00') })).raised).toBe(0);
    expect((await detectLampOuts(rt, { now: sp('17:59') })).raised).toBe(0);
    expect((await detectLampOuts(rt, { now: sp('18:20') })).raised).toBe(0);
    expect((await detectLampOuts(rt, { now: sp('18:31') })).raised).toBe(1);
  });

  it('the night window wraps midnight: a relay off since 23:50 is an outage at 00:21 the next day', async () => {
    const tenantId = await city('manual');
    await makeCityPole(rt, { tenantId, code: 'MIDNIGHT-1', device: 'TG-M1' });
    await report(tenantId, 'TG-M1', sp('23:50'), { online: true, relayOn: false });
    expect((await detectLampOuts(rt, { now: sp('00:19', 15) })).raised).toBe(0);
    expect((await detectLampOuts(rt, { now: sp('00:21', 15) })).raised).toBe(1);
  });

  it('a device offline for longer than the threshold raises an alert at any hour', async () => {
    const tenantId = await city('manual');
    await makeCityPole(rt, { tenantId, code: 'OFF-1', device: 'TG-O1' });
    await report(tenantId, 'TG-O1', sp('12:00'), { online: false, relayOn: null });
    expect((await detectLampOuts(rt, { now: sp('12:29') })).raised).toBe(0);
    expect((await detectLampOuts(rt, { now: sp('12:31') })).raised).toBe(1);
  });

  it('an older report never moves a device back, so it cannot end or restart an outage', async () => {
    const tenantId = await city('manual');
    await makeCityPole(rt, { tenantId, code: 'OLD-1', device: 'TG-OLD1' });
    await report(tenantId, 'TG-OLD1', sp('12:00'), { online: false, relayOn: null });
    const stale = await ingestReports(rt, tenantId, [{ deviceIdentifier: 'TG-OLD1', online: true, relayOn: true, reportedAt: sp('11:00').toISOString() }], { now: sp('12:10') });
    expect(stale).toMatchObject({ applied: 0, stale: 1 });
    expect((await detectLampOuts(rt, { now: sp('12:31') })).raised).toBe(1);
  });

  it('a good report while the alert is Pending adds a note once, and never closes it', async () => {
    const tenantId = await city('manual');
    await makeCityPole(rt, { tenantId, code: 'BACK-1', device: 'TG-B1' });
    await report(tenantId, 'TG-B1', sp('19:00'), { online: true, relayOn: false });
    expect((await detectLampOuts(rt, { now: sp('19:31') })).raised).toBe(1);
    await report(tenantId, 'TG-B1', sp('21:05'), { online: true, relayOn: true });
    expect(await detectLampOuts(rt, { now: sp('21:06') })).toEqual({ raised: 0, noted: 1 });
    expect(await detectLampOuts(rt, { now: sp('21:07') })).toEqual({ raised: 0, noted: 0 });
    const [alert] = await alertsOf(tenantId);
    expect(alert!.status).toBe('Pending');
    const notes = await rt.db.selectFrom('alert_status_history').select(['actor', 'note']).where('alert_id', '=', alert!.id).where('note', 'is not', null).execute();
    expect(notes).toEqual([{ actor: 'telemetry', note: expect.stringContaining('TG-B1') }]);
  });

  it('automatic policy: the alert becomes an order with the pole linked', async () => {
    const tenantId = await city('automatic');
    const pole = await makeCityPole(rt, { tenantId, code: 'AUTO-1', device: 'TG-A1' });
    await report(tenantId, 'TG-A1', sp('12:00'), { online: false, relayOn: null });
    expect((await detectLampOuts(rt, { now: sp('12:31') })).raised).toBe(1);
    const [alert] = await alertsOf(tenantId);
    expect(alert!.status).toBe('Linked');
    const order = await rt.db.selectFrom('service_order').select(['pole_id', 'reason_code']).where('id', '=', alert!.service_order_id!).executeTakeFirstOrThrow();
    expect(order).toEqual({ pole_id: pole.id, reason_code: LAMP_OUT_REASON });
  });

  it('after the alert is closed, the same outage raises nothing more; a new outage raises a new alert', async () => {
    const tenantId = await city('manual');
    await makeCityPole(rt, { tenantId, code: 'AGAIN-1', device: 'TG-G1' });
    await report(tenantId, 'TG-G1', sp('12:00'), { online: false, relayOn: null });
    expect((await detectLampOuts(rt, { now: sp('12:31') })).raised).toBe(1);
    const [first] = await alertsOf(tenantId);
    await discardAlert(rt, cliActor(), first!.id, 'Dispositivo em manutenção', 'pt-BR');
    expect((await detectLampOuts(rt, { now: sp('13:00') })).raised).toBe(0);
    await report(tenantId, 'TG-G1', sp('14:00'), { online: true, relayOn: null });
    await report(tenantId, 'TG-G1', sp('15:00'), { online: false, relayOn: null });
    expect((await detectLampOuts(rt, { now: sp('15:31') })).raised).toBe(1);
    const alerts = await alertsOf(tenantId);
    expect(alerts.map((a) => a.status)).toEqual(['Cancelled', 'Pending']);
    expect(alerts[0]!.protocol_number).not.toBe(alerts[1]!.protocol_number);
  });

  it('a tenant without a threshold gets no alerts; another tenant’s outages never reach it', async () => {
    const quiet = await city('manual', null);
    await makeCityPole(rt, { tenantId: quiet, code: 'QUIET-1', device: 'TG-Q1' });
    await report(quiet, 'TG-Q1', sp('12:00'), { online: false, relayOn: null });
    await detectLampOuts(rt, { now: sp('18:00', 20) });
    expect(await alertsOf(quiet)).toEqual([]);
  });

  it('refuses bad settings, every bad value at once, and changes nothing', async () => {
    const tenant = await makeTenant(rt);
    const err = await setLampOutPolicy(rt, cliActor(), tenant.id, { afterMinutes: 0, nightStarts: '25:00', timezone: 'Mars/Olympus' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'validation-failed' });
    expect((err as { errors: { pointer: string }[] }).errors.map((e) => e.pointer)).toEqual(['/afterMinutes', '/nightStarts', '/timezone']);
    const row = await rt.db.selectFrom('tenant').select(['lamp_out_after_minutes', 'timezone']).where('id', '=', tenant.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ lamp_out_after_minutes: null, timezone: 'America/Sao_Paulo' });
  });
});
