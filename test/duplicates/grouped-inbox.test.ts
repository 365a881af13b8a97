/**
 * The grouped inbox's filter (groupedInboxHidden: every neighbour pair of the city
 * found once, over grid cells) lists exactly the alerts that the definition lists: an
 * alert is left out when an older neighbour of it has no older neighbour itself, with
 * "neighbour" as neighboursOf says (the duplicate box, window, distance and shared pole;
 * the supply-fault circuit, window and distance). The definition is written here as it
 * reads, row by row, and both run over one dense, seeded city: alerts a few metres to a
 * few hundred apart, at the edge of the radius and of the window, sharing poles, arriving
 * at one instant, without coordinates, not Pending, dark poles on circuits; and a second
 * city on the same spot. Porto Velho and Rio Branco, far from São Paulo.
 */
import { randomUUID } from 'node:crypto';
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupedInboxHidden, neighboursOf, notAmong } from '../../src/db/repositories/operations/alert-group.repository.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makePartner, makeTenant } from '../support/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

/** The definition, per row: no older neighbour `l` of `a` that has no older neighbour itself. */
function listedByDefinition(a: string, poleMeters: number): RawBuilder<SqlBool> {
  const older = (p: string, q: string) => `(${p}.created_at, ${p}.alert_number) < (${q}.created_at, ${q}.alert_number)`;
  return sql<SqlBool>`NOT EXISTS (SELECT 1 FROM ${neighboursOf(a, poleMeters, true)} nb JOIN alert l ON l.id = nb.id
     WHERE ${sql.raw(older('l', a))}
       AND NOT EXISTS (SELECT 1 FROM ${neighboursOf('l', poleMeters, true)} m JOIN alert o ON o.id = m.id WHERE ${sql.raw(older('o', 'l'))}))`;
}

/** A city of `alerts` alerts around `poles` poles on a grid from (lat, lon), from a seeded generator. */
async function seedCity(name: string, lat: number, lon: number, seed: number, alerts: number, poles: number): Promise<string> {
  const tenantId = (await makeTenant(t.rt, { name: `${name} ${randomUUID().slice(0, 6)}`, intakePolicy: 'manual' })).id;
  const partnerId = (await makePartner(t.rt, { tenantId })).id;
  // A radius of 30 m, a window of 72 h, 100 m and 30 min for supply faults (the defaults, said again).
  await sql`UPDATE tenant SET duplicate_radius_meters = 30, duplicate_window_hours = 72, supply_fault_radius_meters = 100, supply_fault_window_minutes = 30 WHERE id = ${tenantId}`.execute(t.rt.db);
  await t.rt.db.transaction().execute(async (tx) => {
    await sql`SELECT setseed(${seed})`.execute(tx);
    // Poles on a 100 m grid with some jitter; one in five on one of three circuits; a few inactive.
    await sql`INSERT INTO pole (tenant_id, code, address, neighborhood, latitude, longitude, active, circuit)
      SELECT ${tenantId}, ${name} || '-' || g, 'Avenida Sete de Setembro, ' || g, 'Centro',
             ${lat} + (g / 20) * 0.0009 + (random() - 0.5) * 0.00005, ${lon} + (g % 20) * 0.0009 + (random() - 0.5) * 0.00005,
             random() > 0.05, CASE WHEN random() < 0.2 THEN 'C' || (g % 3) END
        FROM generate_series(0, ${poles - 1}) g`.execute(tx);
    // Alerts within about 40 m of a pole's spot, a few to each, so many are within tens of
    // metres of each other and pairs farther apart than the radius share a pole; arrival
    // spread over six days (the window is three), a tenth at one shared instant.
    await sql`INSERT INTO alert (tenant_id, external_system_id, protocol_number, alert_number, status, requested_at, requester_name, reason_code, priority, sla_due_at,
        address_street, latitude, longitude, location_source, description, created_at)
      SELECT ${tenantId}, ${partnerId}, 'EQ-' || n, n + 1,
             CASE WHEN r.gone THEN 'Cancelled' ELSE 'Pending' END, now(), 'Munícipe', 'EXTERNAL_OTHER', 'Medium', now() + interval '1 day',
             'Avenida Sete de Setembro',
             CASE WHEN NOT r.nowhere THEN ${lat} + ((n % ${poles}) / 20) * 0.0009 + (r.dy - 0.5) * 0.0007 END,
             CASE WHEN NOT r.nowhere THEN ${lon} + ((n % ${poles}) % 20) * 0.0009 + (r.dx - 0.5) * 0.0007 END, 'payload', 'Poste apagado',
             CASE WHEN r.together THEN timestamptz '2026-11-20 12:00:00+00' ELSE timestamptz '2026-11-20 12:00:00+00' + r.at * interval '6 days' END
        FROM generate_series(0, ${alerts - 1}) n,
             LATERAL (SELECT random() < 0.1 + n * 0 AS gone, random() < 0.05 AS nowhere, random() AS dy, random() AS dx, random() < 0.1 AS together, random() AS at) r`.execute(tx);
    // A dark-pole alert for one pole in eight, out within an hour of each other.
    await sql`WITH dark AS (
        SELECT p.id, p.latitude, p.longitude, row_number() OVER (ORDER BY p.code) AS k FROM pole p WHERE p.tenant_id = ${tenantId} AND random() < 0.125),
      made AS (
        INSERT INTO alert (tenant_id, external_system_id, protocol_number, alert_number, status, requested_at, requester_name, reason_code, priority, sla_due_at,
            address_street, latitude, longitude, location_source, description, created_at)
        SELECT ${tenantId}, ${partnerId}, 'DARK-' || d.k, 100000 + d.k, 'Pending', now(), 'Telegestão', 'EXTERNAL_OTHER', 'High', now() + interval '1 day',
               'Avenida Sete de Setembro', d.latitude, d.longitude, 'poles', 'Lâmpada apagada', timestamptz '2026-11-24 00:00:00+00' + random() * interval '1 hour'
          FROM dark d RETURNING id, protocol_number)
      INSERT INTO telemetry_lamp_out (pole_id, tenant_id, alert_id, out_since)
      SELECT d.id, ${tenantId}, m.id, timestamptz '2026-11-23 23:00:00+00' + random() * interval '1 hour'
        FROM made m JOIN dark d ON 'DARK-' || d.k = m.protocol_number`.execute(tx);
  });
  await sql`ANALYZE alert`.execute(t.rt.db);
  await sql`ANALYZE pole`.execute(t.rt.db);
  return tenantId;
}

async function listed(tenantId: string, filter: (a: string) => RawBuilder<SqlBool>): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`SELECT a.id FROM alert a WHERE a.tenant_id = ${tenantId} AND a.status = 'Pending' AND ${filter('a')} ORDER BY a.id`.execute(t.rt.db);
  return rows.map((r) => r.id);
}

describe('the grouped inbox filter', () => {
  it('lists exactly the alerts the definition lists, in a dense city and beside another city on the same spot', async () => {
    const porto = await seedCity('PVH', -8.7619, -63.9039, 0.26, 1500, 400);
    // Rio Branco's alerts lie on Porto Velho's spot: a neighbour across cities would change both.
    const rio = await seedCity('RBR', -8.7619, -63.9039, 0.61, 600, 200);
    for (const [tenantId, poleMeters] of [
      [porto, 30],
      [porto, 0],
      [rio, 30],
    ] as const) {
      const byDefinition = await listed(tenantId, (a) => listedByDefinition(a, poleMeters));
      const hidden = await groupedInboxHidden(t.rt.db, tenantId, poleMeters);
      const byGrid = await listed(tenantId, (a) => notAmong(a, hidden));
      expect(byGrid).toEqual(byDefinition);
      // Each left-out alert once.
      expect(new Set(hidden).size).toBe(hidden.length);
      // The city is dense enough to have groups, and not so dense that everything is one.
      const pending = await listed(tenantId, () => sql<SqlBool>`true`);
      expect(byGrid.length).toBeLessThan(pending.length * 0.95);
      expect(byGrid.length).toBeGreaterThan(pending.length * 0.3);
    }
    // Supply faults are among the groups: a dark-pole alert left out of the list.
    const hidden = await groupedInboxHidden(t.rt.db, porto, 30);
    const dark = await sql<{ n: number }>`SELECT count(*)::int AS n FROM telemetry_lamp_out l WHERE l.tenant_id = ${porto} AND l.alert_id = ANY(${hidden}::uuid[])`.execute(t.rt.db);
    expect(dark.rows[0]!.n).toBeGreaterThan(0);
  });
});
