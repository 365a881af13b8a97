import type { HttpClient, HttpReply } from './http.js';
import { psqlTimings } from './postgres.js';
import { series, type Series } from './results.js';
import { median, quantile } from './stats.js';
import type { BenchContext } from './context.js';
import { CpuSampler, medianCpu, perRequest, type CpuPerRequest } from './cpu.js';
import { runWrk } from './wrk.js';

export const WARMUP = 3;

export async function getOk(client: HttpClient, path: string): Promise<HttpReply> {
  const r = await client.get(path);
  if (r.status !== 200) throw new Error(`GET ${path} answered ${r.status}: ${r.body.toString('utf8').slice(0, 300)}`);
  return r;
}

/** Times `runs` × `repeats` requests; the figure is the median of each run's p50. */
export async function timeGet(
  ctx: BenchContext,
  client: HttpClient,
  path: string,
  repeats: number,
  warmup = WARMUP,
  /** Run before each timed request, outside its time (a change the request must see). */
  before?: () => Promise<unknown>,
): Promise<{ series: Series; p99: number; all: number[] }> {
  for (let i = 0; i < warmup; i++) await getOk(client, path);
  const p50s: number[] = [];
  const all: number[] = [];
  for (let run = 0; run < ctx.opts.runs; run++) {
    const times: number[] = [];
    for (let i = 0; i < repeats; i++) {
      await before?.();
      times.push((await getOk(client, path)).ms);
    }
    p50s.push(median(times));
    all.push(...times);
  }
  return { series: series('ms', p50s, median), p99: quantile(all, 0.99), all };
}

/** The same statement through psql, timed by \timing; null when psql is missing. */
export async function timeSql(ctx: BenchContext, sqlText: string, repeats: number): Promise<Series | null> {
  if (!ctx.tools.psql) return null;
  const p50s: number[] = [];
  await psqlTimings(ctx.tools.psql, ctx.db.url, sqlText, WARMUP);
  for (let run = 0; run < ctx.opts.runs; run++) p50s.push(median(await psqlTimings(ctx.tools.psql, ctx.db.url, sqlText, repeats)));
  return series('ms', p50s, median);
}

export interface TimedPage {
  series: Series;
  p99: number;
  /** CPU per request of Lumen, PostgreSQL and the client (null with the Node client). */
  cpu: CpuPerRequest | null;
  client: 'wrk' | 'node';
}

/**
 * A GET timed by wrk over one connection, requests back to back for
 * `sizes.pageSeconds` per run (the figure is the median of each run's p50), with
 * the CPU each process spent per request. Without wrk: timeGet's Node client.
 */
export async function timeGetLoad(
  ctx: BenchContext,
  target: { baseUrl: string; pid: number },
  client: HttpClient,
  headers: Record<string, string>,
  path: string,
  repeats: number,
  warmup = WARMUP,
): Promise<TimedPage> {
  if (!ctx.tools.wrk) {
    const t = await timeGet(ctx, client, path, repeats, warmup);
    return { series: t.series, p99: t.p99, cpu: null, client: 'node' };
  }
  for (let i = 0; i < warmup; i++) await getOk(client, path);
  const p50s: number[] = [];
  const p99s: number[] = [];
  const cpus: CpuPerRequest[] = [];
  for (let run = 0; run < ctx.opts.runs; run++) {
    const sampler = new CpuSampler(ctx.db.name, target.pid).start();
    const r = await runWrk(ctx.tools.wrk, { url: target.baseUrl, path, method: 'GET', headers, connections: 1, seconds: ctx.sizes.pageSeconds, scriptDir: ctx.tmpDir });
    const totals = sampler.stop();
    if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0) throw new Error(`GET ${path} under wrk: ${r.non2xx} non-2xx answers, ${r.errors} errors, ${r.timeouts} timeouts`);
    p50s.push(r.latencyMs.p50);
    p99s.push(r.latencyMs.p99);
    cpus.push(perRequest(totals, r.clientCpuMs, r.requests));
  }
  return { series: series('ms', p50s, median), p99: Math.max(...p99s), cpu: medianCpu(cpus), client: 'wrk' };
}
