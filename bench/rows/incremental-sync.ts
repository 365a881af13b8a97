import { HttpClient, isNotBuilt, json } from '../harness/http.js';
import { check, series } from '../harness/results.js';
import { msSince } from '../harness/stats.js';
import { poleCity } from '../harness/seed.js';
import { Pending, type RowDefinition } from '../harness/context.js';

interface Envelope {
  items: { id: string }[];
  nextCursor: string | null;
  resumeCursor?: string | null;
}

/**
 * Incremental sync after a bulk import: the bench city's poles (all imported at once) are
 * walked by cursor to the end, then 10 poles change; the next round starts from the walk's
 * `resumeCursor`. Target: at most 2 requests, exactly the 10 poles (with `updatedSince`
 * the round would read every pole of the import's instant again).
 */
export const incrementalSyncRow: RowDefinition = {
  id: 'incremental-sync',
  title: 'Incremental sync round after a bulk import',
  async run(ctx) {
    const server = await ctx.lumen();
    const city = await poleCity(ctx);
    const partner = await ctx.createPartner({ tenantId: city.tenantId, scopes: ['canReadCityData'] });
    const client = new HttpClient(server.baseUrl, { 'x-api-key': partner.apiKey });
    try {
      const page = async (path: string): Promise<Envelope> => {
        const r = await client.get(path);
        if (isNotBuilt(r)) throw new Pending('the city-data lists are not built');
        return json<Envelope>(r, 'pole page');
      };
      let body = await page('/api/external/poles?pageSize=1000');
      let walked = 1;
      while (body.nextCursor !== null) {
        body = await page(`/api/external/poles?pageSize=1000&cursor=${encodeURIComponent(body.nextCursor)}`);
        walked++;
      }
      if (body.resumeCursor === undefined) throw new Pending('resumeCursor is not built');
      const resume = body.resumeCursor!;
      const round = async (from: string) => {
        const started = process.hrtime.bigint();
        let b = await page(`/api/external/poles?pageSize=1000&cursor=${encodeURIComponent(from)}`);
        let requests = 1;
        let items = b.items.length;
        while (b.nextCursor !== null) {
          b = await page(`/api/external/poles?pageSize=1000&cursor=${encodeURIComponent(b.nextCursor)}`);
          requests++;
          items += b.items.length;
        }
        return { requests, items, ms: msSince(started), resume: b.resumeCursor ?? null };
      };
      const idle = await round(resume);
      await ctx.pool.query(`UPDATE pole SET address = address || ' ' WHERE id IN (SELECT id FROM pole WHERE tenant_id = $1 ORDER BY code LIMIT 10)`, [city.tenantId]);
      // The changes are served once below the visibility horizon: a bounded wait for them, round by round from the same cursor.
      let changed = await round(idle.resume ?? resume);
      for (let i = 0; changed.items < 10 && i < 50; i++) changed = await round(idle.resume ?? resume);
      return {
        lines: [
          {
            label: `round after walking ${city.poles.toLocaleString('en-US')} poles (${walked} pages) with 10 changed`,
            lumen: series('requests', [changed.requests], (v) => v[0]!),
            detail: `${changed.items} items in ${changed.ms.toFixed(0)} ms; an unchanged round: ${idle.requests} request, ${idle.items} items, ${idle.ms.toFixed(0)} ms`,
            checks: [check('≤ 2 requests, exactly the 10 changed poles', changed.requests <= 2 && changed.items === 10)],
          },
        ],
        notes: ['With updatedSince instead, the round after an import reads every pole stamped at the import\u2019s instant again (all of them).'],
        params: { poles: city.poles, walkedPages: walked },
      };
    } finally {
      client.close();
    }
  },
};
