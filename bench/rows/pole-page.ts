import { HttpClient, isNotBuilt, json, type HttpReply } from '../harness/http.js';
import { getOk, timeGetLoad, timeSql as timeAnchor, type TimedPage } from '../harness/timing.js';
import { describeCpu } from '../harness/cpu.js';
import { keysetPageSql, pagePosition } from '../harness/pole-sql.js';
import { check, ratioOf, type Line } from '../harness/results.js';
import { poleCity, type PoleCity } from '../harness/seed.js';
import { Pending, type BenchContext, type RowDefinition } from '../harness/context.js';

interface PageEnvelope {
  items: unknown[];
  page: number;
  pageSize: number;
  total: number;
  nextCursor?: string | null;
}

function pagePath(page: number, pageSize: number, since: string | null): string {
  const q = new URLSearchParams({ page: String(page), pageSize: String(pageSize) });
  if (since) q.set('updatedSince', since);
  return `/api/external/poles?${q}`;
}

/** The partner's page walk up to `page` - 1, so `page` continues from a checkpoint. */
async function walkTo(client: HttpClient, page: number, pageSize: number, since: string | null): Promise<void> {
  for (let p = 1; p < page; p++) await getOk(client, pagePath(p, pageSize, since));
}

function checkEnvelope(reply: HttpReply, city: PoleCity, pageSize: number): void {
  const body = json<PageEnvelope>(reply, 'poles page');
  if (body.items.length !== pageSize || body.total !== city.poles) {
    throw new Error(`poles page: expected ${pageSize} items and total ${city.poles}, got ${body.items.length} items and total ${body.total}`);
  }
}

function cpuText(t: TimedPage): string {
  return t.cpu ? `; CPU per request: ${describeCpu(t.cpu, 'wrk')}` : '';
}

/**
 * One page of 1000 poles with their telegestors: page 1 and the deepest page over
 * the seeded city, without and with updatedSince (matching every pole, so the deep
 * page exists), `total` included. The deep page is measured twice: reached by a
 * walk (pages 1..N-1 read first, as a partner walking the list reaches it) and
 * requested directly, with no walk before it. Anchor: the bare keyset SQL of the
 * same page through psql.
 */
export const polePageRow: RowDefinition = {
  id: 'pole-page',
  title: 'One page of 1000 poles',
  async run(ctx) {
    const server = await ctx.lumen();
    const city = await poleCity(ctx);
    const { pageSize, pageRepeats } = ctx.sizes;
    const deep = Math.floor(city.poles / pageSize);
    const lines: Line[] = [];
    const notes: string[] = [];
    if (!ctx.tools.psql) notes.push('psql is missing, so the SQL anchors were skipped: install it with `apt-get install postgresql-client`.');

    for (const since of [null, city.minUpdatedAt]) {
      const label = since ? 'with updatedSince' : 'without updatedSince';
      const walker = await ctx.createPartner({ tenantId: city.tenantId, scopes: ['canReadCityData'] });
      const client = new HttpClient(server.baseUrl, { 'x-api-key': walker.apiKey });
      const first = await client.get(pagePath(1, pageSize, since));
      if (isNotBuilt(first)) {
        client.close();
        throw new Pending('poles list (GET /api/external/poles) not built yet');
      }
      checkEnvelope(first, city, pageSize);

      ctx.log(`page 1, ${label}`);
      const page1 = await timeGetLoad(ctx, server, client, { 'x-api-key': walker.apiKey }, pagePath(1, pageSize, since), pageRepeats);
      const anchor1 = await timeAnchor(ctx, keysetPageSql(city.tenantId, since, null, pageSize), pageRepeats);

      ctx.log(`page ${deep} reached by a walk, ${label}`);
      await walkTo(client, deep, pageSize, since);
      checkEnvelope(await getOk(client, pagePath(deep, pageSize, since)), city, pageSize);
      const deepWalk = await timeGetLoad(ctx, server, client, { 'x-api-key': walker.apiKey }, pagePath(deep, pageSize, since), pageRepeats);
      client.close();
      const anchorDeep = await timeAnchor(ctx, keysetPageSql(city.tenantId, since, await pagePosition(ctx.pool, city.tenantId, since, deep, pageSize), pageSize), pageRepeats);

      ctx.log(`page ${deep} requested directly, ${label}`);
      const jumper = await ctx.createPartner({ tenantId: city.tenantId, scopes: ['canReadCityData'] });
      const direct = new HttpClient(server.baseUrl, { 'x-api-key': jumper.apiKey });
      const deepCold = await timeGetLoad(ctx, server, direct, { 'x-api-key': jumper.apiKey }, pagePath(deep, pageSize, since), Math.min(pageRepeats, 5), 1);
      direct.close();

      const anchorLabel = 'bare keyset SQL, psql';
      const r1 = ratioOf(page1.series, anchor1);
      lines.push({
        label: `page 1, ${label}`,
        lumen: page1.series,
        detail: `p99 ${page1.p99.toFixed(1)} ms${cpuText(page1)}`,
        anchor: { label: anchorLabel, series: anchor1 },
        ratio: r1,
        checks: [check('p50 ≤ 3× the bare SQL', r1 === null ? null : r1 <= 3)],
      });
      for (const [what, m] of [
        [`page ${deep} reached by a walk`, deepWalk],
        [`page ${deep} requested directly`, deepCold],
      ] as const) {
        const r = ratioOf(m.series, anchorDeep);
        const vsPage1 = m.series.median / page1.series.median;
        lines.push({
          label: `${what}, ${label}`,
          lumen: m.series,
          detail: `p99 ${m.p99.toFixed(1)} ms; ${vsPage1.toFixed(2)}× page 1${cpuText(m)}`,
          anchor: { label: anchorLabel, series: anchorDeep },
          ratio: r,
          checks: [check('p50 ≤ 3× the bare SQL', r === null ? null : r <= 3), check(`≤ 1.5× page 1`, vsPage1 <= 1.5)],
        });
      }
    }
    notes.push(
      `updatedSince is the oldest pole's updatedAt, so every pole matches and page ${deep} exists; the \`total\` of an updatedSince filter is counted once and then cached for the tenant, and page ${deep} requested directly by a partner that never walked starts from the position the walking partner reached there.`,
      ctx.tools.wrk
        ? `Timed by wrk (C) over one keep-alive connection, requests back to back for ${ctx.sizes.pageSeconds} s per run: request written to last byte read; CPU per request from /proc (Lumen's process, the PostgreSQL backends of the bench database with its WAL and buffer writers, wrk). The anchor is psql\'s \\timing of the same rows (server execution and transfer, no JSON).`
        : 'Timed on the client (Node, wrk missing: `apt-get install wrk`): request written to last byte read, over one keep-alive connection. The anchor is psql\'s \\timing of the same rows (server execution and transfer, no JSON).',
    );
    return {
      lines,
      notes,
      params: { client: ctx.tools.wrk ? 'wrk' : 'node', pageSeconds: ctx.sizes.pageSeconds, poles: city.poles, telegestors: city.telegestors, pageSize, deepPage: deep, requestsPerRun: pageRepeats, runs: ctx.opts.runs },
    };
  },
};
