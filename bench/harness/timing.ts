import type { HttpClient, HttpReply } from './http.js';
import { psqlTimings } from './postgres.js';
import { series, type Series } from './results.js';
import { median, quantile } from './stats.js';
import type { BenchContext } from './context.js';

export const WARMUP = 3;

export async function getOk(client: HttpClient, path: string): Promise<HttpReply> {
  const r = await client.get(path);
  if (r.status !== 200) throw new Error(`GET ${path} answered ${r.status}: ${r.body.toString('utf8').slice(0, 300)}`);
  return r;
}

/** Times `runs` × `repeats` requests; the figure is the median of each run's p50. */
export async function timeGet(ctx: BenchContext, client: HttpClient, path: string, repeats: number, warmup = WARMUP): Promise<{ series: Series; p99: number; all: number[] }> {
  for (let i = 0; i < warmup; i++) await getOk(client, path);
  const p50s: number[] = [];
  const all: number[] = [];
  for (let run = 0; run < ctx.opts.runs; run++) {
    const times: number[] = [];
    for (let i = 0; i < repeats; i++) times.push((await getOk(client, path)).ms);
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
