import pg from 'pg';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { HttpClient, json } from '../harness/http.js';
import { hasCommand, lumenJson } from '../harness/lumen.js';
import { Receiver } from '../harness/receiver.js';
import { check, series, type Line } from '../harness/results.js';
import { seedPendingAlerts } from '../harness/seed.js';
import { median, quantile } from '../harness/stats.js';
import { Pending, type RowDefinition } from '../harness/context.js';

/** Pause between two operator actions, so each one meets an idle service (real-time delivery, not a queue). */
const PACE_MS = 25;
const WARMUP = 5;

const now = (): number => performance.timeOrigin + performance.now();

/**
 * Instrument of this row, in the bench's own database only: a trigger that NOTIFYs
 * the id of every event row. Postgres delivers a notification when the writing
 * transaction commits, so the bench's LISTEN connection learns the commit instant
 * of each operator action without any help from Lumen.
 */
async function installCommitProbe(pool: pg.Pool): Promise<void> {
  await pool.query(`
    CREATE OR REPLACE FUNCTION bench_event_committed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_notify('bench_event_committed', NEW.id::text); RETURN NULL; END $$;
    DROP TRIGGER IF EXISTS bench_event_committed ON event;
    CREATE TRIGGER bench_event_committed AFTER INSERT ON event FOR EACH ROW EXECUTE FUNCTION bench_event_committed();`);
}

async function removeCommitProbe(pool: pg.Pool): Promise<void> {
  await pool.query('DROP TRIGGER IF EXISTS bench_event_committed ON event; DROP FUNCTION IF EXISTS bench_event_committed()');
}

/** The admin API of this executable has triage's create-order (its served document names the operation). */
async function adminApiHasCreateOrder(baseUrl: string): Promise<boolean> {
  const client = new HttpClient(baseUrl);
  try {
    const r = await client.get('/api/admin/openapi.json');
    if (r.status !== 200) return false;
    return r.body.toString('utf8').includes('"createOrderFromAlert"');
  } finally {
    client.close();
  }
}

/**
 * Event latency: an operator creates the service order of a Pending alert through
 * the admin API (POST /api/admin/alerts/{id}/create-order); the partner's webhook
 * receiver gets ServiceOrder.Created. Measured from the commit of the operator's
 * transaction (a NOTIFY of the bench, delivered at commit) to the moment the receiver
 * has the whole request, one action at a time.
 */
export const eventLatencyRow: RowDefinition = {
  id: 'event-latency',
  title: 'Event latency: operator action committed → partner has the webhook',
  async run(ctx) {
    const server = await ctx.lumen();
    if (!(await hasCommand(ctx.setup, ['webhook', 'deliveries']))) throw new Pending('webhook delivery not built yet');
    if (!(await hasCommand(ctx.setup, ['admin-token', 'create'])) || !(await adminApiHasCreateOrder(server.baseUrl))) {
      throw new Pending('triage in the admin API (POST /api/admin/alerts/{id}/create-order) not built yet');
    }
    const samples = ctx.sizes.latencySamples;
    const token = await lumenJson<{ token: string }>(ctx.setup, ['admin-token', 'create', '--name', `bench-${Date.now()}`]);
    const receiver = await Receiver.start(ctx.repo, ctx.webhookSecret);
    const listener = new pg.Client({ connectionString: ctx.db.url, application_name: 'bench' });
    const committed = new Map<string, number>();
    const commitWaiters: ((eventId: string, at: number) => void)[] = [];
    try {
      const tenant = await ctx.createTenant('Bench latency', 'manual');
      const partner = await ctx.createPartner({ tenantId: tenant.id, scopes: ['canCreateAlerts'], webhookUrl: receiver.url('/hooks/latency') });
      const alerts = await seedPendingAlerts(ctx.pool, { tenantId: tenant.id, partnerId: partner.id, count: WARMUP + samples * ctx.opts.runs });
      await installCommitProbe(ctx.pool);
      await listener.connect();
      listener.on('notification', (n) => {
        const at = now();
        if (n.channel !== 'bench_event_committed' || !n.payload) return;
        const w = commitWaiters.shift();
        if (w) w(n.payload, at);
        else committed.set(n.payload, at);
      });
      await listener.query('LISTEN bench_event_committed');
      await receiver.setPush(true);

      const admin = new HttpClient(server.baseUrl, { authorization: `Bearer ${token.token}` });
      const nextCommit = (): Promise<{ eventId: string; at: number }> => {
        const first = committed.entries().next();
        if (!first.done) {
          committed.delete(first.value[0]);
          return Promise.resolve({ eventId: first.value[0], at: first.value[1] });
        }
        return new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('no event was committed within 10 s of the operator action')), 10_000);
          commitWaiters.push((eventId, at) => {
            clearTimeout(timer);
            resolve({ eventId, at });
          });
        });
      };
      const sample = async (alertId: string): Promise<{ fromCommit: number; fromResponse: number }> => {
        const commit = nextCommit();
        const r = await admin.postJson(`/api/admin/alerts/${alertId}/create-order`, {});
        const respondedAt = now();
        if (r.status !== 201 && r.status !== 200) throw new Error(`create-order answered ${r.status}: ${r.body.toString('utf8').slice(0, 300)}`);
        json(r, 'create-order');
        const c = await commit;
        const arrived = await receiver.arrivalOf(c.eventId, 30_000);
        return { fromCommit: arrived - c.at, fromResponse: arrived - respondedAt };
      };

      let next = 0;
      for (let i = 0; i < WARMUP; i++) {
        await sample(alerts[next++]!);
        await sleep(PACE_MS);
      }
      const p50s: number[] = [];
      const p99s: number[] = [];
      const all: number[] = [];
      const fromResponse: number[] = [];
      for (let run = 0; run < ctx.opts.runs; run++) {
        ctx.log(`latency run ${run + 1}/${ctx.opts.runs}: ${samples} operator actions`);
        const lat: number[] = [];
        for (let i = 0; i < samples; i++) {
          const s = await sample(alerts[next++]!);
          lat.push(s.fromCommit);
          fromResponse.push(s.fromResponse);
          await sleep(PACE_MS);
        }
        p50s.push(quantile(lat, 0.5));
        p99s.push(quantile(lat, 0.99));
        all.push(...lat);
      }
      admin.close();
      const p50 = series('ms', p50s, median);
      const p99 = series('ms', p99s, median);
      const lines: Line[] = [
        {
          label: 'p50, commit → receiver has the request',
          lumen: p50,
          detail: `from the operator's HTTP response instead: p50 ${quantile(fromResponse, 0.5).toFixed(1)} ms`,
          checks: [check('≤ 20 ms', p50.median <= 20)],
        },
        {
          label: 'p99, commit → receiver has the request',
          lumen: p99,
          detail: `max ${Math.max(...all).toFixed(1)} ms over ${all.length} actions`,
          checks: [check('≤ 100 ms', p99.median <= 100)],
        },
      ];
      return {
        lines,
        notes: [
          `One operator action at a time (create-order of a Pending alert through the admin API, ${PACE_MS} ms apart); ServiceOrder.Created delivered to a loopback receiver that verifies the signature. The commit instant comes from a NOTIFY trigger the bench adds to its own database for this row (delivered by Postgres at commit).`,
        ],
        params: { actionsPerRun: samples, warmup: WARMUP, runs: ctx.opts.runs },
      };
    } finally {
      await listener.end().catch(() => {});
      await removeCommitProbe(ctx.pool).catch(() => {});
      receiver.stop();
    }
  },
};
