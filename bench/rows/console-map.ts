import { adminToken } from '../harness/admin.js';
import { HttpClient, isNotBuilt, json } from '../harness/http.js';
import { check, ratioOf } from '../harness/results.js';
import { poleCity } from '../harness/seed.js';
import { getOk, timeGet, timeSql } from '../harness/timing.js';
import { Pending, type RowDefinition } from '../harness/context.js';

/**
 * The box read's default cap. The console's city map now asks GET /tenants/{tenantId}/map
 * instead (the city-map row); this row keeps measuring the bbox read of the poles list.
 */
const LIMIT = 500;
/**
 * A street-level viewport in the middle of the seeded city (0.2° a side): 0.02° a
 * side, about 1% of the city's poles, so the full city fills it past the cap.
 */
const BOX = { south: -23.56, west: -46.64, north: -23.54, east: -46.62 };

/** polesInBox (pole-map.repository.ts) for that viewport, bare. */
function boxSql(tenantId: string): string {
  return `SELECT p.id, p.code, p.address, p.neighborhood, p.latitude, p.longitude, g.identifier, g.online, g.relay_on, g.last_communication_at, NULL::float8
            FROM pole p LEFT JOIN telegestor g ON g.pole_id = p.id
           WHERE p.tenant_id = '${tenantId}' AND p.active = true
             AND p.latitude >= ${BOX.south} AND p.latitude <= ${BOX.north} AND p.longitude >= ${BOX.west} AND p.longitude <= ${BOX.east}
           ORDER BY p.id LIMIT ${LIMIT + 1}`;
}

/**
 * The console map's poles in a viewport: GET /api/admin/tenants/{tenantId}/poles
 * with bbox and limit 500, as the map sends it past its zoom threshold, over the
 * read rows' city. Anchor: the bare SQL of the same query through psql.
 */
export const consoleMapRow: RowDefinition = {
  id: 'console-map',
  title: 'Console map: poles in a viewport',
  async run(ctx) {
    const server = await ctx.lumen();
    const city = await poleCity(ctx);
    const client = new HttpClient(server.baseUrl, { authorization: `Bearer ${await adminToken(ctx)}` });
    const bbox = [BOX.south, BOX.west, BOX.north, BOX.east].map((x) => x.toFixed(5)).join(',');
    const path = `/api/admin/tenants/${city.tenantId}/poles?${new URLSearchParams({ bbox, limit: String(LIMIT) })}`;
    try {
      const first = await client.get(path);
      if (isNotBuilt(first)) throw new Pending('map poles (GET /api/admin/tenants/{tenantId}/poles) not built yet');
      const body = json<{ items: unknown[]; truncated: boolean }>(await getOk(client, path), 'map poles');
      if (body.items.length === 0) throw new Error('map poles: the viewport answered no poles');
      const m = await timeGet(ctx, client, path, ctx.sizes.pageRepeats);
      const anchor = await timeSql(ctx, boxSql(city.tenantId), ctx.sizes.pageRepeats);
      const r = ratioOf(m.series, anchor);
      return {
        lines: [
          {
            label: `viewport over ${city.poles.toLocaleString('en-US')} poles (${body.items.length} answered${body.truncated ? ', truncated' : ''})`,
            lumen: m.series,
            detail: `p99 ${m.p99.toFixed(1)} ms`,
            anchor: { label: 'bare SQL of the same query, psql', series: anchor },
            ratio: r,
            checks: [check('p50 ≤ 100 ms', m.series.median <= 100)],
          },
        ],
        notes: [
          `Viewport ${bbox} (south,west,north,east), limit ${LIMIT}. Timed on the client over one keep-alive connection with a platform admin token.`,
          ...(ctx.tools.psql ? [] : ['psql is missing, so the SQL anchor was skipped.']),
        ],
        params: { poles: city.poles, bbox, limit: LIMIT, answered: body.items.length, requestsPerRun: ctx.sizes.pageRepeats, runs: ctx.opts.runs },
      };
    } finally {
      client.close();
    }
  },
};
