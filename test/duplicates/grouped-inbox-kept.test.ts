/**
 * The grouped inbox's left-out alerts are kept per process with the fingerprint of what
 * they were computed from (inboxHiddenAlerts, groupedInboxInputs). A kept list must never
 * outlive any of its inputs: a small city in Boa Vista (3,300 km from São Paulo) is
 * changed one input at a time, each change chosen so that the list it should give
 * differs from the one before, and after each the kept answer is the list expected and
 * the one computed afresh. An unchanged city is answered from the kept list without
 * computing it; a transaction that commits late is seen once it commits.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupedInboxHidden, groupedInboxHiddenUnless } from '../../src/db/repositories/operations/alert-group.repository.js';
import { inboxHiddenAlerts } from '../../src/services/operations/alert-groups.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';

const POLE_METERS = 30;
const LAT = 2.8235;
const LON = -60.6758;
const M_PER_DEG = 111320;

let t: TestApp;
let tenantId: string;
let partnerId: string;
let number = 0;

beforeAll(async () => {
  t = await startTestApp();
  tenantId = (await makeTenant(t.rt, { name: `Boa Vista ${randomUUID().slice(0, 6)}`, intakePolicy: 'manual' })).id;
  partnerId = (await makePartner(t.rt, { tenantId })).id;
  await sql`UPDATE tenant SET duplicate_radius_meters = 30, duplicate_window_hours = 72, supply_fault_radius_meters = 100, supply_fault_window_minutes = 30 WHERE id = ${tenantId}`.execute(t.rt.db);
});
afterAll(async () => {
  await t?.stop();
});

/** A place x metres east and y metres north of the city's origin. */
function at(x: number, y: number): { latitude: number; longitude: number } {
  return { latitude: LAT + y / M_PER_DEG, longitude: LON + x / (M_PER_DEG * Math.cos((LAT * Math.PI) / 180)) };
}

async function alertAt(x: number, y: number, hoursAfter: number, client: pg.Client | pg.Pool = t.rt.pool): Promise<string> {
  const id = randomUUID();
  const p = at(x, y);
  number += 1;
  await client.query(
    `INSERT INTO alert (id, tenant_id, external_system_id, protocol_number, alert_number, status, requested_at, requester_name, reason_code, priority, sla_due_at,
        address_street, latitude, longitude, location_source, description, created_at)
      VALUES ($1, $2, $3, $4, $5, 'Pending', now(), 'Munícipe', 'EXTERNAL_OTHER', 'Medium', now() + interval '1 day',
        'Avenida Ville Roy', $6, $7, 'payload', 'Poste apagado', timestamptz '2026-11-20 12:00:00+00' + $8 * interval '1 hour')`,
    [id, tenantId, partnerId, `BVB-${number}`, number, p.latitude, p.longitude, hoursAfter],
  );
  return id;
}

async function poleAt(code: string, x: number, y: number, circuit: string | null = null): Promise<string> {
  const p = at(x, y);
  const { rows } = await sql<{ id: string }>`INSERT INTO pole (tenant_id, code, address, neighborhood, latitude, longitude, active, circuit)
    VALUES (${tenantId}, ${code}, 'Avenida Ville Roy', 'Centro', ${p.latitude}, ${p.longitude}, true, ${circuit}) RETURNING id`.execute(t.rt.db);
  return rows[0]!.id;
}

const sorted = (ids: readonly string[]) => [...ids].sort();

/** The kept answer is `expected`, and is what a fresh computation gives. */
async function expectHidden(expected: string[]): Promise<readonly string[]> {
  const kept = await inboxHiddenAlerts(t.rt.db, tenantId, POLE_METERS);
  expect(sorted(kept)).toEqual(sorted(expected));
  expect(sorted(await groupedInboxHidden(t.rt.db, tenantId, POLE_METERS))).toEqual(sorted(expected));
  return kept;
}

describe('the grouped inbox kept per process', () => {
  it('follows every input of the groups, one change at a time, and answers an unchanged city without computing', async () => {
    const a1 = await alertAt(0, 0, 0);
    const a2 = await alertAt(10, 0, 1);
    const first = await expectHidden([a2]);
    // Unchanged: the same kept list, and the statement says so without computing one.
    expect(await inboxHiddenAlerts(t.rt.db, tenantId, POLE_METERS)).toBe(first);
    const read = await groupedInboxHiddenUnless(t.rt.db, tenantId, POLE_METERS, null);
    expect(read.ids).toEqual([a2]);
    expect(await groupedInboxHiddenUnless(t.rt.db, tenantId, POLE_METERS, read.inputs)).toEqual({ inputs: read.inputs, ids: null });

    // A new Pending alert next to the leader.
    const a3 = await alertAt(0, 5, 2);
    await expectHidden([a2, a3]);
    // The leader leaves Pending: the next oldest leads.
    await sql`UPDATE alert SET status = 'Cancelled' WHERE id = ${a1}`.execute(t.rt.db);
    await expectHidden([a3]);
    // An alert moves 50 m from the other: farther than the radius, no pole to share.
    const away = at(60, 0);
    await sql`UPDATE alert SET latitude = ${away.latitude}, longitude = ${away.longitude} WHERE id = ${a3}`.execute(t.rt.db);
    await expectHidden([]);
    // A pole between them, 25 m from each: the nearest pole of both.
    const shared = await poleAt('BVB-P1', 35, 0);
    await expectHidden([a3]);
    // The pole made inactive, then active again, then moved away.
    await sql`UPDATE pole SET active = false WHERE id = ${shared}`.execute(t.rt.db);
    await expectHidden([]);
    await sql`UPDATE pole SET active = true WHERE id = ${shared}`.execute(t.rt.db);
    await expectHidden([a3]);
    const moved = at(35, 400);
    await sql`UPDATE pole SET latitude = ${moved.latitude}, longitude = ${moved.longitude} WHERE id = ${shared}`.execute(t.rt.db);
    await expectHidden([]);
    // A pole's address is not an input: no new revision.
    const revision = async () => (await sql<{ revision: string }>`SELECT revision FROM pole_revision WHERE tenant_id = ${tenantId}`.execute(t.rt.db)).rows[0]!.revision;
    const before = await revision();
    await sql`UPDATE pole SET address = 'Rua Floriano Peixoto' WHERE id = ${shared}`.execute(t.rt.db);
    expect(await revision()).toBe(before);
    // The city's radius widened to 100 m, then back.
    await sql`UPDATE tenant SET duplicate_radius_meters = 100 WHERE id = ${tenantId}`.execute(t.rt.db);
    await expectHidden([a3]);
    await sql`UPDATE tenant SET duplicate_radius_meters = 30 WHERE id = ${tenantId}`.execute(t.rt.db);
    await expectHidden([]);

    // Two dark poles 300 m apart (farther than the supply-fault distance), out together.
    const q1 = await poleAt('BVB-Q1', 500, 0);
    const q2 = await poleAt('BVB-Q2', 500, 300);
    const d1 = await alertAt(500, 0, 30);
    const d2 = await alertAt(500, 300, 31);
    await sql`INSERT INTO telemetry_lamp_out (pole_id, tenant_id, alert_id, out_since) VALUES
      (${q1}, ${tenantId}, ${d1}, timestamptz '2026-11-21 18:00:00+00'), (${q2}, ${tenantId}, ${d2}, timestamptz '2026-11-21 18:10:00+00')`.execute(t.rt.db);
    await expectHidden([]);
    // On one circuit: one suspected supply fault, led by the older.
    await sql`UPDATE pole SET circuit = 'BVB-C7' WHERE id IN (${q1}, ${q2})`.execute(t.rt.db);
    await expectHidden([d2]);
    // The second lamp's record gone, then back out an hour later (outside the 30 min window).
    await sql`DELETE FROM telemetry_lamp_out WHERE pole_id = ${q2}`.execute(t.rt.db);
    await expectHidden([]);
    await sql`INSERT INTO telemetry_lamp_out (pole_id, tenant_id, alert_id, out_since) VALUES (${q2}, ${tenantId}, ${d2}, timestamptz '2026-11-21 19:00:00+00')`.execute(t.rt.db);
    await expectHidden([]);
    await sql`UPDATE telemetry_lamp_out SET out_since = timestamptz '2026-11-21 18:20:00+00' WHERE pole_id = ${q2}`.execute(t.rt.db);
    await expectHidden([d2]);
  });

  it('sees an alert whose transaction commits after the list was kept', async () => {
    const client = new pg.Client({ connectionString: t.db.url });
    await client.connect();
    try {
      const lead = await alertAt(2000, 0, 40);
      await expectHidden(sorted(await groupedInboxHidden(t.rt.db, tenantId, POLE_METERS)));
      const base = [...(await inboxHiddenAlerts(t.rt.db, tenantId, POLE_METERS))];
      await client.query('BEGIN');
      const late = await alertAt(2005, 0, 41, client);
      // Not committed: not in the list, which is kept without it.
      expect(await inboxHiddenAlerts(t.rt.db, tenantId, POLE_METERS)).not.toContain(late);
      await client.query('COMMIT');
      await expectHidden([...base, late]);
      expect(base).not.toContain(lead);
    } finally {
      await client.end();
    }
  });
});
