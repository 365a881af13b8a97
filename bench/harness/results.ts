/** The shape of bench/results.json, from which BENCHMARKS.md is rendered. */

export type Unit = 'ms' | 's' | 'requests' | 'req/s' | 'tx/s' | 'events/s' | 'rows/s' | 'reports/s' | 'MB' | 'MiB' | 'KB';

/** One figure: the median of its runs. */
export interface Series {
  readonly unit: Unit;
  readonly median: number;
  readonly runs: readonly number[];
}

/** A target of the issue, and whether this run met it (null: could not be told). */
export interface Check {
  readonly text: string;
  readonly met: boolean | null;
}

export interface Anchor {
  /** What the anchor is, e.g. "pgbench, same writes, 16 clients". */
  readonly label: string;
  readonly series: Series | null;
  /** Why the anchor is missing, when it is. */
  readonly note?: string;
}

/** One line of the report table. */
export interface Line {
  readonly label: string;
  readonly lumen: Series;
  /** Secondary figures shown beside the main one, e.g. "p99 31 ms". */
  readonly detail?: string;
  readonly anchor?: Anchor;
  /** lumen.median / anchor.median; throughput ratios read "higher is better", time ratios "lower". */
  readonly ratio?: number | null;
  readonly checks: readonly Check[];
}

export type RowStatus = 'measured' | 'pending' | 'skipped' | 'failed';

export interface RowResult {
  readonly id: string;
  readonly title: string;
  readonly status: RowStatus;
  /** For pending, skipped and failed rows: why. */
  readonly reason?: string;
  readonly lines: readonly Line[];
  readonly notes: readonly string[];
  /** Sizes and settings the row ran with. */
  readonly params: Readonly<Record<string, string | number | boolean>>;
  readonly seconds: number;
}

export interface MachineInfo {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memoryBytes: number;
  readonly os: string;
  readonly postgres: string;
  readonly postgresSettings: Readonly<Record<string, string>>;
  readonly lumen: string;
  readonly benchNode: string;
  readonly tools: Readonly<Record<string, string>>;
  readonly loadAverageStart: readonly number[];
  readonly loadAverageEnd: readonly number[];
}

export interface BenchResults {
  readonly schema: 1;
  readonly mode: 'full' | 'quick';
  /** Only some rows were run (--only). */
  readonly partial: boolean;
  readonly runs: number;
  /** The executable measured, relative to the repository when inside it (dist/lumen). */
  readonly executable: string;
  readonly executableSha256: string;
  /** The executable's file changed during the run (a rebuild): the figures mix two builds. */
  readonly executableChanged: boolean;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly machine: MachineInfo;
  readonly rows: readonly RowResult[];
}

export function series(unit: Unit, runs: readonly number[], pick: (values: readonly number[]) => number): Series {
  return { unit, median: pick(runs), runs: [...runs] };
}

/** lumen / anchor, or null when the anchor is missing. */
export function ratioOf(lumen: Series, anchor: Series | null | undefined): number | null {
  if (!anchor || anchor.median === 0) return null;
  return lumen.median / anchor.median;
}

/** "met" when the check holds, "missed" when it does not, null when it cannot be told. */
export function check(text: string, met: boolean | null): Check {
  return { text, met };
}
