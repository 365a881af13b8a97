import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type RawBuilder } from 'kysely';
import { cityCellsQuery, cityPolesQuery, type Box, type CityMapFilter } from '../../src/db/repositories/operations/city-map.repository.js';
import { inlineParameters } from '../../src/db/inline-sql.js';
import { adminToken } from '../harness/admin.js';
import { HttpClient, isNotBuilt, json } from '../harness/http.js';
import { check, ratioOf, type Line } from '../harness/results.js';
import { getOk, timeGet, timeSql } from '../harness/timing.js';
import { Pending, type BenchContext, type RowDefinition } from '../harness/context.js';

/** Curitiba, 0.2° a side (about 22 km): where the row's poles are. */
const CENTER = { lat: -25.43, lon: -49.27 };

interface MapCity {
  readonly tenantId: string;
  readonly poles: number;
  readonly orders: number;
  readonly alerts: number;
}

/**
 * The row's own city: `poles` poles over 0.2° a side around Curitiba (70% with a
 * telegestor, most online, some off, some never reported), one in 200 with an open
 * order (every priority, half of them a team's, some overdue) and one in 500 with a
 * Pending telemetry alert. Written with generate_series in statements of 100,000
 * poles, through every trigger of the schema (the map's rollup included), then
 * vacuumed.
 */
async function mapCity(ctx: BenchContext): Promise<MapCity> {
  const poles = ctx.sizes.poles;
  const tenant = await ctx.createTenant('Bench map city (Curitiba)', 'manual');
  const partner = await ctx.createPartner({ tenantId: tenant.id, scopes: ['canCreateAlerts'], transport: 'polling' });
  const chunk = 100_000;
  const started = Date.now();
  for (let from = 1; from <= poles; from += chunk) {
    const to = Math.min(poles, from + chunk - 1);
    await ctx.pool.query(
      `INSERT INTO pole (tenant_id, code, address, neighborhood, latitude, longitude, active)
       SELECT $1, 'CWB-' || lpad(g::text, 7, '0'), 'Rua XV de Novembro, ' || (g % 3000 + 1), 'Centro',
              ${CENTER.lat} + ((g::bigint * 7919) % 20000 - 10000) / 100000.0,
              ${CENTER.lon} + ((g::bigint * 104729) % 20011 - 10005) / 100000.0,
              g % 50 <> 0
         FROM generate_series($2::int, $3::int) g`,
      [tenant.id, from, to],
    );
    await ctx.pool.query(
      `INSERT INTO telegestor (tenant_id, identifier, pole_id, online, relay_on, last_communication_at)
       SELECT p.tenant_id, 'TG-' || substr(p.code, 5), p.id,
              CASE WHEN n % 20 = 0 THEN NULL ELSE n % 17 <> 0 END, NULL, CASE WHEN n % 20 = 0 THEN NULL ELSE now() END
         FROM pole p, LATERAL (SELECT substr(p.code, 5)::int AS n) x
        WHERE p.tenant_id = $1 AND p.code BETWEEN 'CWB-' || lpad($2::text, 7, '0') AND 'CWB-' || lpad($3::text, 7, '0') AND n % 10 < 7`,
      [tenant.id, from, to],
    );
    ctx.log(`seeded ${to.toLocaleString('en-US')} of ${poles.toLocaleString('en-US')} map poles (${Math.round((Date.now() - started) / 1000)} s)`);
  }
  await ctx.pool.query(`INSERT INTO team (tenant_id, name) SELECT $1, 'Equipe Curitiba ' || g FROM generate_series(1, 4) g`, [tenant.id]);
  const orders = await ctx.pool.query(
    `WITH teams AS (SELECT array_agg(id ORDER BY name) AS ids FROM team WHERE tenant_id = $1)
     INSERT INTO service_order (tenant_id, number, status, priority, reason_code, address, neighborhood, latitude, longitude, pole_id, team_id, sla_due_at)
     SELECT p.tenant_id, 'OS-2026-' || lpad(substr(p.code, 5)::int::text, 7, '0'), (ARRAY['OPEN', 'ASSIGNED', 'IN_PROGRESS'])[1 + n % 3],
            (ARRAY['Low', 'Medium', 'High', 'Critical'])[1 + (n / 200) % 4], 'EXTERNAL_OTHER', p.address, p.neighborhood, p.latitude, p.longitude, p.id,
            CASE WHEN n % 400 = 7 THEN teams.ids[1 + (n / 400) % 4] END, now() + ((n / 200) % 5 - 1) * interval '1 day'
       FROM pole p, teams, LATERAL (SELECT substr(p.code, 5)::int AS n) x
      WHERE p.tenant_id = $1 AND p.active AND n % 200 = 7`,
    [tenant.id],
  );
  const alerts = await ctx.pool.query(
    `WITH picked AS (SELECT p.id AS pole_id, substr(p.code, 5)::int AS n FROM pole p WHERE p.tenant_id = $1 AND p.active AND substr(p.code, 5)::int % 500 = 251),
     a AS (
       INSERT INTO alert (tenant_id, external_system_id, protocol_number, alert_number, status, requested_at, requester_name, reason_code, priority,
                          sla_due_at, address_street, address_neighborhood, description)
       SELECT $1, $2, 'TEL-' || n, n, 'Pending', now() - interval '3 hours', 'Telegestão Curitiba', 'EXTERNAL_OTHER',
              (ARRAY['Low', 'Medium', 'High', 'Critical'])[1 + n % 4], now() + (n % 3 - 1) * interval '1 day', 'Rua XV de Novembro', 'Centro', 'Lâmpada apagada (telegestão)'
         FROM picked
       RETURNING id, alert_number)
     INSERT INTO telemetry_lamp_out (pole_id, tenant_id, alert_id, out_since)
     SELECT picked.pole_id, $1, a.id, now() - interval '4 hours' FROM a JOIN picked ON picked.n = a.alert_number`,
    [tenant.id, partner.id],
  );
  await ctx.pool.query('VACUUM (ANALYZE) pole, telegestor, pole_map_cell, service_order, alert, telemetry_lamp_out');
  return { tenantId: tenant.id, poles, orders: orders.rowCount ?? 0, alerts: alerts.rowCount ?? 0 };
}

/** Compiles the repository's own query with its parameters inlined: the bare SQL of the same aggregate, for psql. */
const compiler = new Kysely<unknown>({ dialect: { createAdapter: () => new PostgresAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (db) => new PostgresIntrospector(db), createQueryCompiler: () => new PostgresQueryCompiler() } });
function bare(query: RawBuilder<unknown>): string {
  const c = query.compile(compiler);
  return inlineParameters(c.sql, c.parameters);
}

/** A 1366×800-pixel view centred on the city at a zoom (web mercator). */
function viewport(zoom: number, dLat = 0, dLon = 0): Box {
  const perPixel = 360 / (256 * 2 ** zoom);
  const cos = Math.cos((CENTER.lat * Math.PI) / 180);
  const lat = CENTER.lat + dLat;
  const lon = CENTER.lon + dLon;
  return { south: lat - 400 * perPixel * cos, north: lat + 400 * perPixel * cos, west: lon - 683 * perPixel, east: lon + 683 * perPixel };
}

const boxText = (b: Box) => [b.south, b.west, b.north, b.east].map((x) => x.toFixed(5)).join(',');
const boxOf = (text: string): Box => {
  const [south, west, north, east] = text.split(',').map(Number) as [number, number, number, number];
  return { south, west, north, east };
};

interface Case {
  label: string;
  zoom: number;
  bbox: string | null;
  filter: CityMapFilter;
  query: Record<string, string>;
  /** p50 target in ms. */
  target: number;
}

/**
 * The console's city map over a city of 1,000,000 poles: GET /tenants/{tenantId}/map
 * for the whole city (zoom 12, unfiltered and filtered) and for viewports at zooms 14,
 * 16 and 18 (the last answers the poles one by one). Anchor: the repository's own
 * statement, parameters inlined, through psql.
 */
export const cityMapRow: RowDefinition = {
  id: 'city-map',
  title: 'City map: every pole at every zoom',
  async run(ctx) {
    const server = await ctx.lumen();
    ctx.log(`seeding the map city: ${ctx.sizes.poles.toLocaleString('en-US')} poles`);
    const city = await ctx.once('map-city', () => mapCity(ctx));
    const client = new HttpClient(server.baseUrl, { authorization: `Bearer ${await adminToken(ctx)}` });
    const cases: Case[] = [
      { label: 'whole city, zoom 12', zoom: 12, bbox: null, filter: {}, query: {}, target: 300 },
      { label: 'whole city, zoom 12, priority High', zoom: 12, bbox: null, filter: { priority: 'High' }, query: { priority: 'High' }, target: 300 },
      { label: 'whole city, zoom 12, telegestor off', zoom: 12, bbox: null, filter: { telegestor: 'off' }, query: { telegestor: 'off' }, target: 300 },
      { label: 'viewport, zoom 14', zoom: 14, bbox: boxText(viewport(14, 0.02, -0.03)), filter: {}, query: {}, target: 150 },
      { label: 'viewport, zoom 16', zoom: 16, bbox: boxText(viewport(16, -0.04, 0.05)), filter: {}, query: {}, target: 150 },
      { label: 'viewport, zoom 16, overdue', zoom: 16, bbox: boxText(viewport(16, -0.04, 0.05)), filter: { overdue: true }, query: { overdue: 'true' }, target: 150 },
      { label: 'viewport, zoom 18 (poles one by one)', zoom: 18, bbox: boxText(viewport(18, 0.01, 0.01)), filter: {}, query: {}, target: 150 },
    ];
    const lines: Line[] = [];
    const answered: string[] = [];
    try {
      for (const c of cases) {
        const path = `/api/admin/tenants/${city.tenantId}/map?${new URLSearchParams({ zoom: String(c.zoom), ...(c.bbox ? { bbox: c.bbox } : {}), ...c.query })}`;
        const first = await client.get(path);
        if (isNotBuilt(first)) throw new Pending('city map (GET /api/admin/tenants/{tenantId}/map) not built yet');
        const body = json<{ mode: string; total: { count: number }; cells: unknown[]; poles: unknown[] }>(await getOk(client, path), 'city map');
        if (body.total.count === 0) throw new Error(`city map, ${c.label}: no poles answered`);
        if (c.bbox === null && Object.keys(c.filter).length === 0 && body.total.count !== Math.round(city.poles * 0.98)) {
          throw new Error(`city map, ${c.label}: ${body.total.count} poles counted, expected every active pole (${Math.round(city.poles * 0.98)})`);
        }
        ctx.log(`city map: ${c.label}`);
        const m = await timeGet(ctx, client, path, ctx.sizes.pageRepeats);
        const query = body.mode === 'poles' ? cityPolesQuery(city.tenantId, boxOf(c.bbox!), c.filter, 1000) : cityCellsQuery(city.tenantId, Math.min(c.zoom + 2, 18), c.bbox ? boxOf(c.bbox) : null, c.filter);
        const anchor = await timeSql(ctx, bare(query), ctx.sizes.pageRepeats);
        const r = ratioOf(m.series, anchor);
        const what = body.mode === 'poles' ? `${body.poles.length} poles` : `${body.cells.length} cells`;
        answered.push(`${c.label}: ${what}, ${body.total.count.toLocaleString('en-US')} poles`);
        lines.push({
          label: `${c.label} (${what})`,
          lumen: m.series,
          detail: `p99 ${m.p99.toFixed(1)} ms`,
          anchor: { label: 'bare SQL of the same aggregate, psql', series: anchor },
          ratio: r,
          checks: [check(`p50 ≤ ${c.target} ms`, ctx.opts.quick ? null : m.series.median <= c.target)],
        });
      }
    } finally {
      client.close();
    }
    return {
      lines,
      notes: [
        `A city of ${city.poles.toLocaleString('en-US')} poles over 0.2° a side (Curitiba), ${city.orders.toLocaleString('en-US')} open orders and ${city.alerts.toLocaleString('en-US')} Pending telemetry alerts on poles. Viewports are 1366×800 pixels.`,
        `Answers: ${answered.join('; ')}.`,
        'Timed on the client over one keep-alive connection with a platform admin token. The anchor is the repository\'s statement compiled with its parameters inlined, timed by psql\'s \\timing.',
        ...(ctx.tools.psql ? [] : ['psql is missing, so the SQL anchors were skipped.']),
      ],
      params: { poles: city.poles, orders: city.orders, alerts: city.alerts, requestsPerRun: ctx.sizes.pageRepeats, runs: ctx.opts.runs },
    };
  },
};
