import { HttpClient } from './http.js';

/**
 * Garbage collection of a Node process since it started: pauses in all, their time, and
 * how many took 10 ms or more. Lumen's from its own Prometheus exposition
 * (`lumen_nodejs_gc_duration_seconds`, prom-client's histogram of V8's GC pauses by
 * kind); the floor's from its PerformanceObserver (bench/drivers/intake-floor.ts).
 */
export interface GcTotals {
  pauses: number;
  ms: number;
  /** Pauses of 10 ms or more. */
  long: number;
  /** Of them all, the full mark-compact collections of the old generation ('major'). */
  majorPauses: number;
  majorMs: number;
}

export function gcDelta(after: GcTotals, before: GcTotals): GcTotals {
  return {
    pauses: after.pauses - before.pauses,
    ms: after.ms - before.ms,
    long: after.long - before.long,
    majorPauses: after.majorPauses - before.majorPauses,
    majorMs: after.majorMs - before.majorMs,
  };
}

/** Reads Lumen's GC totals from GET /metrics; null when the exposition is elsewhere (LUMEN_METRICS_PORT) or has no GC histogram. */
export async function lumenGc(baseUrl: string): Promise<GcTotals | null> {
  const client = new HttpClient(baseUrl, {});
  try {
    const r = await client.get('/metrics');
    if (r.status !== 200) return null;
    return parseGc(r.body.toString('utf8'));
  } finally {
    client.close();
  }
}

/** Sums prom-client's GC histogram over its kinds (minor, major, incremental, weakcb). */
export function parseGc(exposition: string): GcTotals | null {
  let pauses = 0;
  let seconds = 0;
  let under10 = 0;
  let majorPauses = 0;
  let majorSeconds = 0;
  let seen = false;
  for (const line of exposition.split('\n')) {
    // The histogram is declared before its first pause: no pause yet reads as zero, not as missing.
    if (/^# TYPE [a-z_]*nodejs_gc_duration_seconds histogram$/.test(line)) seen = true;
    const m = /^[a-z_]*nodejs_gc_duration_seconds_(sum|count|bucket)\{([^}]*)\} ([0-9.eE+-]+)$/.exec(line);
    if (!m) continue;
    seen = true;
    const value = Number(m[3]);
    const major = /(^|,)kind="major"/.test(m[2]!);
    if (m[1] === 'sum') {
      seconds += value;
      if (major) majorSeconds += value;
    } else if (m[1] === 'count') {
      pauses += value;
      if (major) majorPauses += value;
    } else if (/(^|,)le="0\.01"/.test(m[2]!)) under10 += value;
  }
  return seen ? { pauses, ms: seconds * 1000, long: pauses - under10, majorPauses, majorMs: majorSeconds * 1000 } : null;
}
