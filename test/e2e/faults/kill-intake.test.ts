/**
 * kill -9 of `lumen serve` in the middle of an intake load, twice, with a restart
 * after each. Clients send requests with Idempotency-Keys (some invalid, some with a
 * photo, some for a city in manual triage) without pause. Afterwards:
 *   - every request that got a 2xx exists exactly once (its alert, and in automatic
 *     mode exactly one order of its own);
 *   - none that got a 4xx exists;
 *   - retried with its key, an acknowledged request gets its original answer (same
 *     body), a rejected one the same rejection, and one whose connection the kill cut
 *     either its original answer (200) or a first-time 201, never a second alert.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../../src/runtime.js';
import { makePartner, makeTenant } from '../../support/factories.js';
import { recordReliability } from '../../support/reliability.js';
import { intakeBody, JPEG } from '../../intake/support.js';
import { createDatabase, freePort, Lumen, openTestRuntime, removeTempDirs, requireExecutable, serveEnv, until } from './support.js';

const SECTION = 'Faults: kill -9 during an intake load';
const CLIENTS = 8;
const KILLS = 2;
const ACKS_BEFORE_KILL = 80;

let db: Awaited<ReturnType<typeof createDatabase>>;
let rt: Runtime;
let lumen: Lumen;

beforeAll(async () => {
  requireExecutable();
  db = await createDatabase('kill_intake');
  rt = await openTestRuntime(db.url);
  lumen = new Lumen('lumen', await freePort(), serveEnv(db.url));
});
afterAll(async () => {
  await lumen?.stop().catch(() => {});
  await rt?.close();
  await db?.drop();
  removeTempDirs();
});

interface Sent {
  n: number;
  protocol: string;
  apiKey: string;
  key: string;
  body: Record<string, unknown>;
  mode: 'automatic' | 'manual';
  valid: boolean;
  /** 0: no answer (refused, or cut by the kill). */
  status: number;
  answer: unknown;
}

async function post(base: string, s: Pick<Sent, 'apiKey' | 'key' | 'body'>): Promise<{ status: number; answer: unknown }> {
  try {
    const res = await fetch(`${base}/api/external/service-orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': s.apiKey, 'idempotency-key': s.key },
      body: JSON.stringify(s.body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    return { status: res.status, answer: text ? JSON.parse(text) : null };
  } catch {
    return { status: 0, answer: null };
  }
}

describe('kill -9 during an intake load', () => {
  it('keeps every acknowledged request exactly once, no rejected one, and answers retries with the original result', async () => {
    const automatic = await makeTenant(rt, { intakePolicy: 'automatic' });
    const manual = await makeTenant(rt, { intakePolicy: 'manual' });
    const pAuto = await makePartner(rt, { tenantId: automatic.id, scopes: ['canCreateServiceOrders'] });
    const pManual = await makePartner(rt, { tenantId: manual.id, scopes: ['canCreateServiceOrders'] });

    lumen.start();
    await lumen.waitReady();
    const sent: Sent[] = [];
    let n = 0;
    let running = true;
    const client = async () => {
      while (running) {
        const i = ++n;
        const mode = i % 4 === 0 ? 'manual' : 'automatic';
        const valid = i % 9 !== 0;
        const protocol = `KILL-${String(i).padStart(5, '0')}`;
        const over: Record<string, unknown> = {};
        if (!valid) over.assetType = 'LAMP';
        if (i % 5 === 0) over.attachments = [{ type: 'photo', contentBase64: JPEG.toString('base64'), filename: `${protocol}.jpg`, contentType: 'image/jpeg' }];
        const s = { n: i, protocol, apiKey: mode === 'manual' ? pManual.apiKey : pAuto.apiKey, key: randomUUID(), body: intakeBody(protocol, over), mode, valid } as const;
        const { status, answer } = await post(lumen.base, s);
        sent.push({ ...s, status, answer });
        // No answer: the service is down; a client backs off before its next request.
        if (status === 0) await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const clients = Array.from({ length: CLIENTS }, client);
    const acked = () => sent.filter((s) => s.status >= 200 && s.status < 300).length;

    const restartMs: number[] = [];
    let cut = 0;
    for (let k = 0; k < KILLS; k++) {
      const target = acked() + ACKS_BEFORE_KILL;
      await until(() => acked() >= target, 60_000, `${target} acknowledged requests`);
      const inFlightBefore = sent.length;
      await lumen.kill9();
      const killedAt = Date.now();
      // Requests in flight at the kill end without an answer.
      await until(() => n - sent.length <= 0 || Date.now() - killedAt > 500, 5000, 'in-flight requests to end');
      cut += sent.slice(inFlightBefore).filter((s) => s.status === 0).length;
      lumen.start();
      restartMs.push(await lumen.waitReady());
    }
    const target = acked() + ACKS_BEFORE_KILL / 2;
    await until(() => acked() >= target, 60_000, 'requests after the last restart');
    running = false;
    await Promise.all(clients);

    const ok = sent.filter((s) => s.status === 201);
    const rejected = sent.filter((s) => s.status >= 400 && s.status < 500);
    const unanswered = sent.filter((s) => s.status === 0);
    // Nothing else: no 200 (every request was new), no 5xx.
    expect(ok.length + rejected.length + unanswered.length).toBe(sent.length);
    expect(rejected.every((s) => !s.valid && s.status === 422)).toBe(true);
    expect(sent.filter((s) => !s.valid && s.status !== 0).every((s) => s.status === 422)).toBe(true);
    expect(unanswered.length).toBeGreaterThan(0);

    const alertsOf = async (protocols: string[]) =>
      protocols.length === 0
        ? []
        : rt.db.selectFrom('alert').select(['id', 'protocol_number', 'service_order_id', 'status', 'tenant_id']).where('protocol_number', 'in', protocols).execute();

    // Acknowledged: exactly once, with its own order in automatic mode; rejected: absent.
    const okAlerts = await alertsOf(ok.map((s) => s.protocol));
    expect(okAlerts).toHaveLength(ok.length);
    for (const s of ok) {
      const a = okAlerts.find((x) => x.protocol_number === s.protocol)!;
      expect(a.id).toBe((s.answer as { alert: { id: string } }).alert.id);
      if (s.mode === 'automatic') expect(a.service_order_id).toBe((s.answer as { id: string }).id);
      else expect(a).toMatchObject({ service_order_id: null, status: 'Pending' });
    }
    expect(await alertsOf(rejected.map((s) => s.protocol))).toEqual([]);

    // The clients retry everything with the same key and body (8 at a time).
    let replayedOriginal = 0;
    let cutFirstTime = 0;
    let cutOriginal = 0;
    const queue = [...sent];
    const retry = async () => {
      for (let s = queue.shift(); s; s = queue.shift()) {
        const again = await post(lumen.base, s);
        if (s.status === 201) {
          expect(again.status).toBe(200);
          expect(again.answer).toEqual(s.answer);
          replayedOriginal++;
        } else if (!s.valid) {
          expect(again.status).toBe(422);
        } else {
          expect([200, 201]).toContain(again.status);
          if (again.status === 201) cutFirstTime++;
          else cutOriginal++;
          // Whichever it was, the key now replays that answer.
          const third = await post(lumen.base, s);
          expect(third).toEqual({ status: 200, answer: again.answer });
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, retry));

    // The end state: one alert per valid request, never two; one order per automatic alert.
    const valid = sent.filter((s) => s.valid);
    const all = await alertsOf(valid.map((s) => s.protocol));
    expect(all).toHaveLength(valid.length);
    expect(new Set(all.map((a) => `${a.tenant_id}/${a.protocol_number}`)).size).toBe(valid.length);
    const autoAlerts = all.filter((a) => a.tenant_id === automatic.id);
    expect(autoAlerts.every((a) => a.service_order_id !== null)).toBe(true);
    const orders = await rt.db.selectFrom('service_order').select('id').where('tenant_id', '=', automatic.id).execute();
    expect(orders.map((o) => o.id).sort()).toEqual(autoAlerts.map((a) => a.service_order_id).sort());
    expect(await rt.db.selectFrom('service_order').select('id').where('tenant_id', '=', manual.id).execute()).toEqual([]);
    const dupKeys = await rt.db.selectFrom('idempotency_key').select(['external_system_id', 'key']).execute();
    expect(new Set(dupKeys.map((k) => `${k.external_system_id}/${k.key}`)).size).toBe(dupKeys.length);

    recordReliability(SECTION, { item: 'intake requests sent by 8 clients across the kills', figure: `${sent.length}`, detail: `${ok.length} acknowledged (201), ${rejected.length} rejected (422), ${unanswered.length} without an answer (cut by a kill or refused while down)` });
    recordReliability(SECTION, { item: 'kill -9 of lumen serve under load, each followed by a restart', figure: String(KILLS), detail: `restart to /readyz 200: ${restartMs.map((ms) => `${ms} ms`).join(', ')}; ${cut} requests in flight at a kill` });
    recordReliability(SECTION, { item: 'acknowledged requests lost or duplicated', figure: '0', detail: `${ok.length} acknowledged, each found once (automatic mode: with one order of its own); 0 of ${rejected.length} rejected requests found` });
    recordReliability(SECTION, { item: 'retries with the same Idempotency-Key', figure: `${sent.length} retried: ${replayedOriginal} original answers replayed byte-equal, ${cutOriginal} cut requests answered with what was stored, ${cutFirstTime} cut requests taken for the first time` });
  }, 240_000);
});
