/** Order statistics over a set of samples; every figure in the report is one of these. */

export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/**
 * Quantile by linear interpolation between closest ranks (the definition of
 * numpy's default and of most spreadsheets), so p50 of [1, 2] is 1.5.
 */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) throw new Error('quantile of no samples');
  if (q < 0 || q > 1) throw new Error(`quantile ${q} is outside 0..1`);
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export function max(values: readonly number[]): number {
  if (values.length === 0) throw new Error('max of no samples');
  return values.reduce((a, b) => (b > a ? b : a));
}

export function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/** Milliseconds elapsed since a process.hrtime.bigint() reading. */
export function msSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}
