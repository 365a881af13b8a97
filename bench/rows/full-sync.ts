import { CpuSampler, describeCpu, medianCpu, perRequest, type CpuPerRequest } from '../harness/cpu.js';
import { HttpClient, isNotBuilt, json } from '../harness/http.js';
import { copyAllPolesSql } from '../harness/pole-sql.js';
import { psqlWall } from '../harness/postgres.js';
import { check, ratioOf, series, type Line } from '../harness/results.js';
import { median, msSince } from '../harness/stats.js';
import { poleCity } from '../harness/seed.js';
import { Pending, type RowDefinition } from '../harness/context.js';

const NEXT_CURSOR = /"nextCursor":(null|"([^"]*)")/;

interface Walk {
  ms: number;
  pages: number;
  bytes: number;
  /** CPU per page of Lumen's process and of the bench database's PostgreSQL processes. */
  cpu: CpuPerRequest;
}

/**
 * A partner's first full sync of every pole: by page walk (page 1..N, pageSize 1000)
 * and by cursor (nextCursor until null), one request at a time over a keep-alive
 * connection, bodies read whole but not parsed (a client's parsing is not Lumen's
 * cost). Anchor: COPY of the same rows as JSON, in the same order, through psql.
 */
export const fullSyncRow: RowDefinition = {
  id: 'full-sync',
  title: 'Full sync of every pole',
  async run(ctx) {
    const server = await ctx.lumen();
    const city = await poleCity(ctx);
    const { pageSize } = ctx.sizes;
    const pages = Math.ceil(city.poles / pageSize);

    const pageWalk = async (): Promise<Walk> => {
      const partner = await ctx.createPartner({ tenantId: city.tenantId, scopes: ['canReadCityData'] });
      const client = new HttpClient(server.baseUrl, { 'x-api-key': partner.apiKey });
      const sampler = new CpuSampler(ctx.db.name, server.pid).start();
      const started = process.hrtime.bigint();
      let bytes = 0;
      let lastItems = 0;
      for (let page = 1; page <= pages; page++) {
        const r = await client.get(`/api/external/poles?page=${page}&pageSize=${pageSize}`);
        if (page === 1 && isNotBuilt(r)) throw new Pending('poles list (GET /api/external/poles) not built yet');
        if (r.status !== 200) throw new Error(`page ${page} answered ${r.status}: ${r.body.toString('utf8').slice(0, 300)}`);
        bytes += r.body.length;
        if (page === pages) lastItems = json<{ items: unknown[] }>(r, 'last page').items.length;
      }
      const ms = msSince(started);
      const cpu = perRequest(sampler.stop(), null, pages);
      client.close();
      const expected = city.poles - (pages - 1) * pageSize;
      if (lastItems !== expected) throw new Error(`page walk: the last page had ${lastItems} items, expected ${expected}`);
      return { ms, pages, bytes, cpu };
    };

    const cursorWalk = async (): Promise<Walk> => {
      const partner = await ctx.createPartner({ tenantId: city.tenantId, scopes: ['canReadCityData'] });
      const client = new HttpClient(server.baseUrl, { 'x-api-key': partner.apiKey });
      const sampler = new CpuSampler(ctx.db.name, server.pid).start();
      const started = process.hrtime.bigint();
      let bytes = 0;
      let count = 0;
      let path = `/api/external/poles?pageSize=${pageSize}`;
      for (;;) {
        const r = await client.get(path);
        if (r.status !== 200) throw new Error(`cursor page ${count + 1} answered ${r.status}: ${r.body.toString('utf8').slice(0, 300)}`);
        count++;
        bytes += r.body.length;
        // nextCursor is the envelope's last field; look for it from the end of the body.
        const tail = r.body.subarray(Math.max(0, r.body.length - 2048)).toString('utf8');
        const m = NEXT_CURSOR.exec(tail) ?? NEXT_CURSOR.exec(r.body.toString('utf8'));
        if (!m) throw new Error('cursor page without nextCursor');
        if (m[1] === 'null') break;
        path = `/api/external/poles?pageSize=${pageSize}&cursor=${encodeURIComponent(m[2]!)}`;
        if (count > pages + 1) throw new Error(`cursor walk did not end after ${count} pages`);
      }
      const ms = msSince(started);
      const cpu = perRequest(sampler.stop(), null, count);
      client.close();
      if (count !== pages) throw new Error(`cursor walk read ${count} pages, expected ${pages}`);
      return { ms, pages: count, bytes, cpu };
    };

    const walks: Walk[] = [];
    const cursors: Walk[] = [];
    const copies: number[] = [];
    // One COPY, not measured, reads every row before the first round, so that the
    // walk measured first does not alone read the city from disk after its seed.
    if (ctx.tools.psql) {
      ctx.log('full sync: reading the city once before measuring (COPY, not measured)');
      await psqlWall(ctx.tools.psql, ctx.db.url, copyAllPolesSql(city.tenantId));
    }
    for (let i = 0; i < ctx.opts.runs; i++) {
      ctx.log(`full sync run ${i + 1}/${ctx.opts.runs}: page walk`);
      walks.push(await pageWalk());
      ctx.log(`full sync run ${i + 1}/${ctx.opts.runs}: cursor`);
      cursors.push(await cursorWalk());
      if (ctx.tools.psql) {
        ctx.log(`full sync run ${i + 1}/${ctx.opts.runs}: COPY anchor`);
        copies.push(await psqlWall(ctx.tools.psql, ctx.db.url, copyAllPolesSql(city.tenantId)));
      }
    }
    const anchor = copies.length ? series('s', copies.map((ms) => ms / 1000), median) : null;
    const anchorInfo = { label: 'COPY … TO STDOUT as JSON, psql', series: anchor, ...(anchor ? {} : { note: 'psql missing' }) };
    const walkSeries = series('s', walks.map((w) => w.ms / 1000), median);
    const cursorSeries = series('s', cursors.map((w) => w.ms / 1000), median);
    const rw = ratioOf(walkSeries, anchor);
    const rc = ratioOf(cursorSeries, anchor);
    const mb = (w: Walk[]) => (median(w.map((x) => x.bytes)) / 1e6).toFixed(0);
    // The client reads bodies without parsing them; its CPU is not sampled.
    const cpuText = (w: Walk[]) => `; CPU per page: ${describeCpu(medianCpu(w.map((x) => x.cpu)), null)}`;
    const lines: Line[] = [
      {
        label: `by cursor (${pages} requests)`,
        lumen: cursorSeries,
        detail: `${mb(cursors)} MB of JSON${cpuText(cursors)}`,
        anchor: anchorInfo,
        ratio: rc,
        checks: [check('≤ 2× COPY', rc === null ? null : rc <= 2)],
      },
      {
        label: `by page walk (page 1..${pages})`,
        lumen: walkSeries,
        detail: `${mb(walks)} MB of JSON${cpuText(walks)}`,
        anchor: anchorInfo,
        ratio: rw,
        checks: [check('≤ 2.5× COPY', rw === null ? null : rw <= 2.5)],
      },
    ];
    return {
      lines,
      notes: ['One request at a time, as a partner\'s sync loop makes them; the anchor\'s time is psql\'s wall time with its output discarded. One COPY, not measured, reads the city before the first round. CPU per page: Lumen\'s process and the bench database\'s PostgreSQL processes over each walk, from /proc.'],
      params: { poles: city.poles, telegestors: city.telegestors, pageSize, pages, runs: ctx.opts.runs },
    };
  },
};
