import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { ingestReports, type TelemetryReport } from './telemetry.js';
import type { ServiceDeps } from '../deps.js';

/** Reports sent to the database per transaction. */
const BATCH = 1000;
/** Line errors listed in the summary (all are counted). */
const MAX_LISTED = 1000;

export interface LineError {
  line: number;
  message: string;
}

export interface TelemetryFileSummary {
  lines: number;
  received: number;
  applied: number;
  stale: number;
  unknown: number;
  invalid: number;
  unknownDevices: string[];
  errors: LineError[];
  /** Every line up to this one (counted from the start of the file) has been applied: resume after it. */
  doneThroughLine: number;
  /** True when the run was stopped (signal) before the end of the file. */
  stopped: boolean;
}

export interface TelemetryFileOptions {
  /** Lines to pass over first, as counted by an earlier run's doneThroughLine (resume). Default 0. */
  skipLines?: number;
  /** Called after each full batch is applied (not after the last, partial one). */
  onProgress?: (summary: Readonly<TelemetryFileSummary>) => void;
  /** Stops after the batch in progress; the summary says where (doneThroughLine). */
  signal?: AbortSignal;
}

const ISO_INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i;

/** One NDJSON line -> a report, or the reason it is not one. */
export function parseReportLine(text: string): TelemetryReport | string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return 'not valid JSON';
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return 'not a JSON object';
  const r = v as Record<string, unknown>;
  if (typeof r.deviceIdentifier !== 'string' || r.deviceIdentifier.length < 1 || r.deviceIdentifier.length > 100) return 'deviceIdentifier must be a string of 1 to 100 characters';
  if (typeof r.online !== 'boolean') return 'online must be true or false';
  if (r.relayOn !== null && typeof r.relayOn !== 'boolean') return 'relayOn must be true, false or null';
  if (typeof r.reportedAt !== 'string' || !ISO_INSTANT.test(r.reportedAt) || !Number.isFinite(Date.parse(r.reportedAt))) return 'reportedAt must be an ISO 8601 date-time with an offset';
  return { deviceIdentifier: r.deviceIdentifier, online: r.online, relayOn: r.relayOn as boolean | null, reportedAt: r.reportedAt };
}

/**
 * `lumen telemetry ingest`: NDJSON, one report per line (blank lines skipped), the
 * same rules as the HTTP endpoint, in batches. A bad line is reported with its number
 * and skipped; it never stops the file.
 */
export async function ingestTelemetryFile(deps: ServiceDeps, tenantId: string, file: string | Readable, opts: TelemetryFileOptions = {}): Promise<TelemetryFileSummary> {
  const input = typeof file === 'string' ? createReadStream(file) : file;
  const rl = createInterface({ input, crlfDelay: Infinity });
  const skip = opts.skipLines ?? 0;
  const summary: TelemetryFileSummary = { lines: 0, received: 0, applied: 0, stale: 0, unknown: 0, invalid: 0, unknownDevices: [], errors: [], doneThroughLine: skip, stopped: false };
  const unknown = new Set<string>();
  let batch: { line: number; report: TelemetryReport }[] = [];

  const error = (line: number, message: string) => {
    summary.invalid++;
    if (summary.errors.length < MAX_LISTED) summary.errors.push({ line, message });
  };

  const flush = async (throughLine: number, last = false) => {
    if (batch.length === 0) {
      summary.doneThroughLine = throughLine;
      return;
    }
    const current = batch;
    batch = [];
    const result = await ingestReports(
      deps,
      tenantId,
      current.map((b) => b.report),
      { waitForImport: true },
    );
    summary.received += result.received;
    summary.applied += result.applied;
    summary.stale += result.stale;
    for (const r of result.rejected) error(current[r.index]!.line, r.reason);
    const unknownHere = new Set(result.unknownDevices);
    summary.unknown += current.filter((b) => unknownHere.has(b.report.deviceIdentifier)).length;
    for (const id of result.unknownDevices) unknown.add(id);
    summary.doneThroughLine = throughLine;
    if (!last) opts.onProgress?.(summary);
  };

  let lineNo = 0;
  for await (const raw of rl) {
    lineNo++;
    if (lineNo <= skip) continue;
    summary.lines++;
    const text = raw.trim();
    if (text !== '') {
      const parsed = parseReportLine(text);
      if (typeof parsed === 'string') error(lineNo, parsed);
      else batch.push({ line: lineNo, report: parsed });
    }
    if (batch.length >= BATCH) await flush(lineNo);
    if (opts.signal?.aborted) {
      summary.stopped = true;
      // What was read but not applied is read again on resume.
      batch = [];
      rl.close();
      input.destroy?.();
      break;
    }
  }
  if (!summary.stopped) await flush(lineNo, true);
  summary.unknownDevices = [...unknown].slice(0, MAX_LISTED);
  return summary;
}
