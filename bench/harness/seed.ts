import type pg from 'pg';
import type { BenchContext } from './context.js';

/*
 * Seeds of the rows: large data written with SQL (generate_series), through every
 * trigger of the schema, never through the API unless the API is what is measured.
 * They take the bench's own pool (application_name "bench", see postgres.ts).
 */

/** Rows per seeding transaction: every transaction stamps its rows with its own now(). */
const POLE_BATCH = 1000;

export interface PoleCity {
  readonly tenantId: string;
  readonly poles: number;
  readonly telegestors: number;
  /** Smallest pole updated_at (microseconds ISO): an updatedSince that every pole matches. */
  readonly minUpdatedAt: string;
}

/**
 * A city of `poles` poles, `share` of them with a telegestor (most of which have
 * reported), written with SQL through every trigger of the schema (change stamps,
 * row counters), in transactions of 1000 poles, so updated_at takes one value per
 * batch as it does for real imports and telemetry. Two connections write at once.
 */
export async function insertPoleCity(pool: pg.Pool, tenantId: string, poles: number, share: number, log: (m: string) => void = () => {}): Promise<PoleCity> {
  const batches = Math.ceil(poles / POLE_BATCH);
  const withDevice = Math.round(share * 10);
  let next = 0;
  let done = 0;
  const started = Date.now();
  const worker = async () => {
    const client = await pool.connect();
    try {
      for (let b = next++; b < batches; b = next++) {
        const from = b * POLE_BATCH + 1;
        const to = Math.min(poles, (b + 1) * POLE_BATCH);
        await insertPoleBatch(client, tenantId, from, to, withDevice);
        done++;
        if (done % 100 === 0) log(`seeded ${(done * POLE_BATCH).toLocaleString('en-US')} of ${poles.toLocaleString('en-US')} poles (${Math.round((Date.now() - started) / 1000)} s)`);
      }
    } finally {
      client.release();
    }
  };
  await Promise.all([worker(), worker()]);
  await pool.query('VACUUM (ANALYZE) pole');
  await pool.query('VACUUM (ANALYZE) telegestor');
  const { rows } = await pool.query<{ poles: string; telegestors: string; min: string }>(
    `SELECT (SELECT count(*) FROM pole WHERE tenant_id = $1) AS poles,
            (SELECT count(*) FROM telegestor WHERE tenant_id = $1) AS telegestors,
            (SELECT to_char(min(updated_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') FROM pole WHERE tenant_id = $1) AS min`,
    [tenantId],
  );
  const r = rows[0]!;
  return { tenantId, poles: Number(r.poles), telegestors: Number(r.telegestors), minUpdatedAt: r.min };
}

/** One transaction: poles from..to and, for `withDevice` of every 10, a telegestor. */
async function insertPoleBatch(client: pg.PoolClient, tenantId: string, from: number, to: number, withDevice: number): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(
      `INSERT INTO pole (tenant_id, code, address, neighborhood, latitude, longitude, active)
       SELECT $1, 'P-' || lpad(g::text, 7, '0'),
              (ARRAY['Rua Augusta', 'Avenida Paulista', 'Rua da Consolação', 'Rua Vergueiro', 'Avenida Ipiranga',
                     'Rua Oscar Freire', 'Avenida Brigadeiro Faria Lima', 'Rua Teodoro Sampaio'])[1 + g % 8]
                || ' ' || (g / 8 % 500 + 1) || ', ' || (g % 2000 + 1),
              (ARRAY['Consolação', 'Bela Vista', 'Pinheiros', 'Jardins', 'Liberdade', 'Vila Mariana', 'Moema'])[1 + g % 7],
              -23.55 + ((g::bigint * 7919) % 20000 - 10000) / 100000.0,
              -46.63 + ((g::bigint * 104729) % 20000 - 10000) / 100000.0,
              g % 50 <> 0
         FROM generate_series($2::int, $3::int) g`,
      [tenantId, from, to],
    );
    await client.query(
      `INSERT INTO telegestor (tenant_id, identifier, pole_id, online, relay_on, last_communication_at)
       SELECT p.tenant_id, 'TG-' || substr(p.code, 3),  p.id,
              CASE WHEN n % 20 = 0 THEN NULL ELSE n % 17 <> 0 END,
              CASE WHEN n % 20 = 0 THEN NULL ELSE n % 2 = 0 END,
              CASE WHEN n % 20 = 0 THEN NULL ELSE now() - make_interval(secs => n % 3600) END
         FROM pole p, LATERAL (SELECT substr(p.code, 3)::int AS n) x
        WHERE p.tenant_id = $1 AND p.code BETWEEN 'P-' || lpad($2::text, 7, '0') AND 'P-' || lpad($3::text, 7, '0')
          AND n % 10 < $4`,
      [tenantId, from, to, withDevice],
    );
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}

/** The city of the read rows, seeded once per bench run. */
export function poleCity(ctx: BenchContext): Promise<PoleCity> {
  return ctx.once('pole-city', async () => {
    ctx.log(`seeding ${ctx.sizes.poles.toLocaleString('en-US')} poles (${Math.round(ctx.sizes.telegestorShare * 100)}% with telegestors)`);
    const tenant = await ctx.createTenant('Bench city', 'automatic');
    const city = await insertPoleCity(ctx.pool, tenant.id, ctx.sizes.poles, ctx.sizes.telegestorShare, ctx.log);
    ctx.log(`seeded ${city.poles.toLocaleString('en-US')} poles, ${city.telegestors.toLocaleString('en-US')} telegestors`);
    return city;
  });
}

const ISO_MS = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

export interface SeededEvents {
  /** Events written, in write order. */
  readonly events: number;
  /** The database's now() before they were written (every event is at or after it). */
  readonly since: string;
}

/**
 * Events of one partner written with SQL the way the outbox writes them (the N6
 * envelope as the exact body, payload, per-order sequence), for `orders` completed
 * service orders with one Linked alert each and `perOrder` events per order, in one
 * transaction. No webhook delivery is written: the rows using them start deliveries
 * through Lumen (redelivery) or read the events by polling.
 */
export async function seedEvents(pool: pg.Pool, opts: { tenantId: string; partnerId: string; orders: number; perOrder: number; eventType: string }): Promise<SeededEvents> {
  const client = await pool.connect();
  try {
    const since = (await client.query<{ now: string }>(`SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS now`)).rows[0]!.now;
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO service_order (tenant_id, number, status, priority, reason_code, address, neighborhood, latitude, longitude,
                                  sla_due_at, opened_at, closed_at, event_seq)
       SELECT $1, 'OS-2026-' || lpad(g::text, 7, '0'), 'COMPLETED', 'Medium', 'EXTERNAL_OTHER',
              'Rua Augusta, ' || g, 'Consolação', -23.55 + g / 1e7, -46.66 - g / 1e7,
              now() + interval '24 hours', now() - interval '2 days', now(), $3
         FROM generate_series(1, $2::int) g`,
      [opts.tenantId, opts.orders, opts.perOrder],
    );
    await client.query(
      `INSERT INTO alert (tenant_id, external_system_id, protocol_number, alert_number, status, requested_at, requester_name,
                          reason_code, priority, sla_due_at, address_street, address_number, address_neighborhood,
                          latitude, longitude, location_source, description, service_order_id)
       SELECT so.tenant_id, $2, 'EV-' || substr(so.number, 9), substr(so.number, 9)::bigint, 'Resolved', now() - interval '2 days',
              'Maria Aparecida dos Santos', 'EXTERNAL_OTHER', 'Medium', so.sla_due_at, 'Rua Augusta', '1500', 'Consolação',
              so.latitude, so.longitude, 'payload', 'Lâmpada apagada há três noites', so.id
         FROM service_order so WHERE so.tenant_id = $1`,
      [opts.tenantId, opts.partnerId],
    );
    const inserted = await client.query(
      `INSERT INTO event (id, tenant_id, external_system_id, event_type, alert_id, service_order_id, sequence, payload, body, occurred_at)
       SELECT x.id, x.tenant_id, x.external_system_id, $2, x.alert_id, x.so_id, x.seq, x.body::jsonb, x.body, now()
         FROM (
           SELECT y.*, json_build_object(
                    'eventId', y.id, 'eventType', $2::text, 'occurredAt', to_char(now() AT TIME ZONE 'UTC', ${ISO_MS}),
                    'protocolNumber', y.protocol_number,
                    'serviceOrder', json_build_object(
                      'id', y.so_id, 'number', y.number, 'status', y.so_status, 'priority', y.priority, 'type', y.reason_code,
                      'address', y.address, 'neighborhood', y.neighborhood, 'latitude', y.latitude, 'longitude', y.longitude,
                      'poleId', NULL, 'team', NULL,
                      'openedAt', to_char(y.opened_at AT TIME ZONE 'UTC', ${ISO_MS}),
                      'updatedAt', to_char(y.updated_at AT TIME ZONE 'UTC', ${ISO_MS}),
                      'closedAt', to_char(y.closed_at AT TIME ZONE 'UTC', ${ISO_MS})),
                    'alert', json_build_object('id', y.alert_id, 'alertNumber', y.alert_number, 'status', y.alert_status),
                    'sequence', y.seq)::text AS body
             FROM (
               SELECT gen_random_uuid() AS id, a.tenant_id, a.external_system_id, a.id AS alert_id, a.protocol_number, a.alert_number,
                      a.status AS alert_status, so.id AS so_id, so.number, so.status AS so_status, so.priority, so.reason_code, so.address,
                      so.neighborhood, so.latitude, so.longitude, so.opened_at, so.updated_at, so.closed_at, s AS seq
                 FROM alert a JOIN service_order so ON so.id = a.service_order_id
                 CROSS JOIN generate_series(1, $3::int) s
                WHERE a.external_system_id = $1
                ORDER BY so.number, s
             ) y
         ) x`,
      [opts.partnerId, opts.eventType, opts.perOrder],
    );
    await client.query('COMMIT');
    await client.query('VACUUM (ANALYZE) event');
    return { events: inserted.rowCount ?? 0, since };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** Bodies of a partner's events in write order, as NDJSON lines {eventId, eventType, body}. */
export async function eventBodies(pool: pg.Pool, partnerId: string): Promise<string> {
  const { rows } = await pool.query<{ id: string; event_type: string; body: string }>(
    'SELECT id, event_type, body FROM event WHERE external_system_id = $1 ORDER BY write_seq',
    [partnerId],
  );
  return rows.map((r) => JSON.stringify({ eventId: r.id, eventType: r.event_type, body: r.body })).join('\n') + '\n';
}

/** `count` Pending alerts of a partner (awaiting triage), alert numbers 1..count; returns their ids in order. */
export async function seedPendingAlerts(pool: pg.Pool, opts: { tenantId: string; partnerId: string; count: number }): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO alert (tenant_id, external_system_id, protocol_number, alert_number, status, requested_at, requester_name,
                        reason_code, priority, sla_due_at, address_street, address_number, address_neighborhood,
                        latitude, longitude, location_source, description)
     SELECT $1, $2, 'LAT-' || g, g, 'Pending', now() - interval '1 hour', 'Maria Aparecida dos Santos',
            'EXTERNAL_OTHER', 'Medium', now() + interval '24 hours', 'Rua Augusta', g::text, 'Consolação',
            -- Spread over a city (about 10 km a side, as requests come from every street),
            -- every tenth a second report of the lamp before it (a few metres away), so the
            -- inbox's duplicate groups have real work to do.
            -23.60 + ((((g - (g % 10 = 0)::int) * 7919) % 10007) / 10007.0) * 0.09 + (g % 10 = 0)::int * 0.00003,
            -46.70 + ((((g - (g % 10 = 0)::int) * 104729) % 10009) / 10009.0) * 0.09,
            'payload', 'Lâmpada apagada há três noites'
       FROM generate_series(1, $3::int) g
     RETURNING id`,
    [opts.tenantId, opts.partnerId, opts.count],
  );
  await pool.query(
    `SELECT lumen_raise_number($1, 'alert', 0, $2)`,
    [opts.tenantId, opts.count],
  );
  return rows.map((r) => r.id);
}

export interface InboxCity {
  readonly tenantId: string;
  readonly partnerId: string;
  /** Pending alerts of the city. */
  readonly alerts: number;
}

/**
 * The console rows' city: ctx.sizes.inboxAlerts Pending alerts of one partner, manual
 * intake (so they stay awaiting triage), seeded once per bench run and vacuumed.
 */
export function inboxCity(ctx: BenchContext): Promise<InboxCity> {
  return ctx.once('inbox-city', async () => {
    const count = ctx.sizes.inboxAlerts;
    const tenant = await ctx.createTenant('Bench inbox city', 'manual');
    const partner = await ctx.createPartner({ tenantId: tenant.id, scopes: ['canCreateAlerts'], transport: 'polling' });
    ctx.log(`seeding ${count.toLocaleString('en-US')} Pending alerts`);
    await seedPendingAlerts(ctx.pool, { tenantId: tenant.id, partnerId: partner.id, count });
    await ctx.pool.query('VACUUM (ANALYZE) alert');
    return { tenantId: tenant.id, partnerId: partner.id, alerts: count };
  });
}
