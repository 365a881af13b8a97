/** Command line of `npm run bench -- [options]`. */

export const ROW_IDS = ['executable', 'intake', 'pole-page', 'console-map', 'city-map', 'console-inbox', 'inbox-search', 'console-load', 'console-bundle', 'full-sync', 'incremental-sync', 'telemetry', 'pole-import', 'events-polling', 'event-latency', 'report-export', 'report-dashboard', 'bulk-triage', 'webhook-fanout'] as const;
export type RowId = (typeof ROW_IDS)[number];

export interface BenchOptions {
  /** Smoke mode: small sizes, one run each, nothing asserted about speed. */
  readonly quick: boolean;
  /** Runs per figure (the figure is their median). Default 3, 1 with --quick. */
  readonly runs: number;
  /** Rows to run (default: all). */
  readonly only: readonly RowId[] | null;
  /** Keep the bench database at the end (for EXPLAIN and profiling). */
  readonly keepDb: boolean;
  /** Only re-render BENCHMARKS.md from bench/results.json. */
  readonly renderOnly: boolean;
  /** The Lumen executable measured. Default dist/lumen (another build can be compared). */
  readonly executable: string | null;
  readonly help: boolean;
}

export const USAGE = `Usage: npm run bench -- [options]

Runs the benchmark suite against the built executable (dist/lumen; run
\`npm run build\` first) and a PostgreSQL server (DATABASE_URL's, else
127.0.0.1:5432), in a database of its own that is dropped at the end.
Writes bench/results.json; a full run of every row also writes BENCHMARKS.md.

Options:
  --quick          smoke mode: small sizes, one run each (CI); asserts nothing about speed
  --runs N         runs per figure, the figure being their median (default 3; 1 with --quick)
  --only A,B       run only these rows: ${ROW_IDS.join(', ')}
  --keep-db        keep the bench database afterwards (its name is printed)
  --executable P   measure this Lumen executable instead of dist/lumen (another build,
                   to compare); BENCHMARKS.md is then not rewritten
  --render         only re-render BENCHMARKS.md from bench/results.json
  -h, --help       this text
`;

export class UsageError extends Error {}

export function parseOptions(argv: readonly string[]): BenchOptions {
  let quick = false;
  let runs: number | null = null;
  let only: RowId[] | null = null;
  let keepDb = false;
  let renderOnly = false;
  let executable: string | null = null;
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [name, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined || v.startsWith('--')) throw new UsageError(`${name} needs a value`);
      return v;
    };
    switch (name) {
      case '--quick':
        quick = true;
        break;
      case '--runs': {
        const v = value();
        if (!/^[1-9][0-9]?$/.test(v)) throw new UsageError(`--runs must be a whole number from 1 to 99 (got "${v}")`);
        runs = Number(v);
        break;
      }
      case '--only': {
        const ids = value().split(',').map((s) => s.trim()).filter(Boolean);
        const unknown = ids.filter((id) => !(ROW_IDS as readonly string[]).includes(id));
        if (unknown.length) throw new UsageError(`unknown row(s) for --only: ${unknown.join(', ')} (rows: ${ROW_IDS.join(', ')})`);
        only = ids as RowId[];
        break;
      }
      case '--keep-db':
        keepDb = true;
        break;
      case '--render':
        renderOnly = true;
        break;
      case '--executable':
        executable = value();
        break;
      case '-h':
      case '--help':
        help = true;
        break;
      default:
        throw new UsageError(`unknown option ${arg}`);
    }
  }
  return { quick, runs: runs ?? (quick ? 1 : 3), only, keepDb, renderOnly, executable, help };
}

/** Sizes of each row. Full sizes are the issue's; quick ones keep the smoke run short. */
export interface Sizes {
  readonly poles: number;
  /** Share of poles with a telegestor. */
  readonly telegestorShare: number;
  readonly pageSize: number;
  /** Timed requests of one page per run (the Node client, when wrk is missing). */
  readonly pageRepeats: number;
  /** Seconds of one page run under wrk (one connection, requests back to back). */
  readonly pageSeconds: number;
  readonly intakeConnections: readonly number[];
  readonly intakeSeconds: number;
  readonly intakeWarmupSeconds: number;
  readonly fanoutEvents: number;
  /** Longest wait for the fan-out to complete; what arrived by then is measured. */
  readonly fanoutWaitSeconds: number;
  readonly latencySamples: number;
  readonly pollingEvents: number;
  readonly importRows: number;
  /** Pending alerts in the console inbox row's city. */
  readonly inboxAlerts: number;
  /** Alerts of the inbox-search row's city (varied streets, citizens, phones). */
  readonly searchAlerts: number;
  /** Timed first loads of the console (each in a fresh browser context). */
  readonly consoleLoads: number;
  /** Telemetry reports per pass, and per batch (one POST, one UPDATE). */
  readonly telemetryReports: number;
  readonly telemetryBatch: number;
  /** Starts of the executable timed to /readyz. */
  readonly starts: number;
  /** Seconds the executable idles before its RSS is read. */
  readonly idleSeconds: number;
  /** Service orders of the reports rows' city (dashboard and CSV export). */
  readonly reportOrders: number;
}

export function sizesFor(quick: boolean): Sizes {
  return quick
    ? {
        poles: 20_000,
        telegestorShare: 0.7,
        pageSize: 1000,
        pageRepeats: 5,
        pageSeconds: 1,
        intakeConnections: [16, 64],
        intakeSeconds: 2,
        intakeWarmupSeconds: 1,
        fanoutEvents: 500,
        fanoutWaitSeconds: 15,
        latencySamples: 20,
        pollingEvents: 2_000,
        importRows: 20_000,
        inboxAlerts: 1_000,
        searchAlerts: 2_000,
        consoleLoads: 2,
        telemetryReports: 20_000,
        telemetryBatch: 1000,
        starts: 1,
        idleSeconds: 1,
        reportOrders: 20_000,
      }
    : {
        poles: 1_000_000,
        telegestorShare: 0.7,
        pageSize: 1000,
        pageRepeats: 30,
        pageSeconds: 3,
        intakeConnections: [16, 64],
        intakeSeconds: 10,
        intakeWarmupSeconds: 3,
        fanoutEvents: 10_000,
        fanoutWaitSeconds: 120,
        latencySamples: 200,
        pollingEvents: 100_000,
        importRows: 1_000_000,
        inboxAlerts: 10_000,
        searchAlerts: 100_000,
        consoleLoads: 5,
        telemetryReports: 1_000_000,
        telemetryBatch: 1000,
        starts: 5,
        idleSeconds: 5,
        reportOrders: 1_000_000,
      };
}
