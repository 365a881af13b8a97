import { HttpClient, isNotBuilt, json } from '../harness/http.js';
import { check, series, type Line } from '../harness/results.js';
import { seedEvents } from '../harness/seed.js';
import { max, median, quantile } from '../harness/stats.js';
import { Pending, type RowDefinition } from '../harness/context.js';

const LIMIT = 200;
/** Events per service order in the seed (per-order sequences, as a busy city has). */
const PER_ORDER = 10;

interface EventsPage {
  events: { eventId: string }[];
  nextSince: string;
  hasMore: boolean;
}

/**
 * A polling partner drains its backlog: N events written with SQL as the outbox
 * writes them, read with GET /api/external/events?limit=200, each call confirming the
 * previous one (since = nextSince), while hasMore is true. Every page is timed; the
 * issue asks that none be slower than 50 ms.
 */
export const eventsPollingRow: RowDefinition = {
  id: 'events-polling',
  title: 'Events polling: drain the backlog with limit=200',
  async run(ctx) {
    const server = await ctx.lumen();
    const n = ctx.sizes.pollingEvents;
    const drains: number[] = [];
    const pageP50: number[] = [];
    const pageP99: number[] = [];
    const pageMax: number[] = [];
    let pagesPerDrain = 0;
    for (let run = 0; run < ctx.opts.runs; run++) {
      const tenant = await ctx.createTenant(`Bench polling ${run + 1}`, 'manual');
      const partner = await ctx.createPartner({ tenantId: tenant.id, scopes: ['canCreateAlerts'], transport: 'polling' });
      const client = new HttpClient(server.baseUrl, { 'x-api-key': partner.apiKey });
      const probe = await client.get(`/api/external/events?limit=${LIMIT}`);
      if (isNotBuilt(probe)) {
        client.close();
        throw new Pending('events polling (GET /api/external/events) not built yet');
      }
      if (probe.status !== 200) throw new Error(`GET /api/external/events answered ${probe.status}: ${probe.body.toString('utf8').slice(0, 300)}`);
      ctx.log(`polling run ${run + 1}/${ctx.opts.runs}: seeding ${n.toLocaleString('en-US')} events`);
      await seedEvents(ctx.pool, { tenantId: tenant.id, partnerId: partner.id, orders: Math.ceil(n / PER_ORDER), perOrder: PER_ORDER, eventType: 'ServiceOrder.StatusChanged' });

      ctx.log(`polling run ${run + 1}/${ctx.opts.runs}: draining`);
      const times: number[] = [];
      const seen = new Set<string>();
      let since = json<EventsPage>(probe, 'events').nextSince;
      const started = process.hrtime.bigint();
      for (;;) {
        const r = await client.get(`/api/external/events?limit=${LIMIT}&since=${encodeURIComponent(since)}`);
        if (r.status !== 200) throw new Error(`events page ${times.length + 1} answered ${r.status}: ${r.body.toString('utf8').slice(0, 300)}`);
        times.push(r.ms);
        const page = json<EventsPage>(r, 'events');
        for (const e of page.events) seen.add(e.eventId);
        since = page.nextSince;
        if (!page.hasMore) break;
        if (times.length > n / LIMIT + 10) throw new Error(`the drain did not end after ${times.length} pages`);
      }
      drains.push(Number(process.hrtime.bigint() - started) / 1e9);
      client.close();
      if (seen.size !== n) throw new Error(`the drain returned ${seen.size} distinct events, expected ${n}`);
      pagesPerDrain = times.length;
      pageP50.push(quantile(times, 0.5));
      pageP99.push(quantile(times, 0.99));
      pageMax.push(max(times));
    }
    const drain = series('s', drains, median);
    const slowest = series('ms', pageMax, median);
    const lines: Line[] = [
      {
        label: `drain ${n.toLocaleString('en-US')} events (${pagesPerDrain} calls)`,
        lumen: drain,
        detail: `${Math.round(n / drain.median).toLocaleString('en-US')} events/s; page p50 ${median(pageP50).toFixed(1)} ms, p99 ${median(pageP99).toFixed(1)} ms`,
        checks: [check('reported', true)],
      },
      {
        label: 'slowest page of a drain',
        lumen: slowest,
        checks: [check('no page slower than 50 ms', slowest.median <= 50)],
      },
    ];
    return {
      lines,
      notes: ['One call at a time over a keep-alive connection, each body parsed (the partner needs nextSince). "Slowest page" is the slowest call of each drain, median over the runs.'],
      params: { events: n, limit: LIMIT, eventsPerOrder: PER_ORDER, runs: ctx.opts.runs },
    };
  },
};
