import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { childCpuMs, withChildCpu } from './cpu.js';
import { runOk } from './tools.js';

/**
 * wrk (Debian's package), the C load generator of the intake and page rows: on a
 * 2-core machine a Node client would take a core's share from the server it
 * measures, while the anchors (pgbench, psql) are C clients too.
 */

export interface LoadResult {
  /** Which client ran: "wrk" or "autocannon" (the fallback when wrk is missing). */
  client: 'wrk' | 'autocannon';
  requests: number;
  seconds: number;
  status2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Answers by status (autocannon only; wrk counts non-2xx/3xx answers without their status). */
  statusCodes?: Record<string, number>;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** CPU time of the client process over the run, ms (null where it cannot be read). */
  clientCpuMs: number | null;
}

export interface WrkRun {
  url: string;
  path: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  connections: number;
  seconds: number;
  /**
   * POST body. Each request gets its own copy with `__UNIQUE__` replaced by a
   * value new to the run, and a new UUID in the header named by `uuidHeader`.
   */
  body?: string;
  uuidHeader?: string;
  /** Where the Lua script is written. */
  scriptDir: string;
}

function luaString(s: string): string {
  // A long bracket whose level does not occur in the text.
  let eq = '';
  while (s.includes(`]${eq}]`)) eq += '=';
  return `[${eq}[${s}]${eq}]`;
}

/** The Lua script: per-thread counters make every body and UUID unique; done() prints JSON. */
export function wrkScript(run: Pick<WrkRun, 'path' | 'method' | 'headers' | 'body' | 'uuidHeader'>, runId: string): string {
  const headers = Object.entries(run.headers)
    .map(([k, v]) => `[ ${luaString(k)} ] = ${luaString(v)}`)
    .join(', ');
  return `-- written by bench/harness/wrk.ts
local threads = {}
local next_tid = 1
local run_id = ${luaString(runId)}
local path = ${luaString(run.path)}
local method = ${luaString(run.method)}
local body = ${run.body === undefined ? 'nil' : luaString(run.body)}
local uuid_header = ${run.uuidHeader === undefined ? 'nil' : luaString(run.uuidHeader)}
local headers = { ${headers} }
counter = 0

function setup(thread)
  thread:set("tid", next_tid)
  next_tid = next_tid + 1
  table.insert(threads, thread)
end

function request()
  counter = counter + 1
  local h = headers
  local b = body
  if uuid_header ~= nil then
    h[uuid_header] = string.format("%s-%04x-4000-8000-%012x", run_id, tid, counter)
  end
  if b ~= nil then
    b = string.gsub(b, "__UNIQUE__", run_id .. "-" .. tid .. "-" .. counter)
  end
  return wrk.format(method, path, h, b)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"durationUs":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
`;
}

interface WrkJson {
  requests: number;
  durationUs: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** Parses the line the script's done() prints. */
export function parseWrkOutput(out: string): WrkJson {
  const line = out.split('\n').find((l) => l.startsWith('WRK_JSON '));
  if (!line) throw new Error(`wrk printed no result:\n${out.slice(-1500)}`);
  return JSON.parse(line.slice('WRK_JSON '.length)) as WrkJson;
}

/** Runs wrk once for `seconds` and reports what it measured, in the shape of the autocannon driver. */
export async function runWrk(wrk: string, run: WrkRun): Promise<LoadResult> {
  const runId = randomBytes(4).toString('hex');
  const script = path.join(run.scriptDir, `wrk-${runId}.lua`);
  writeFileSync(script, wrkScript(run, runId));
  const threads = Math.max(1, Math.min(2, run.connections));
  const wrapped = withChildCpu(wrk, ['-t', String(threads), '-c', String(run.connections), '-d', `${run.seconds}s`, '--timeout', '30s', '-s', script, run.url]);
  const r = await runOk(wrapped.command, wrapped.args);
  // wrk reports an error of its script and runs on without it: refuse such a run.
  if (r.stderr.includes('.lua:')) throw new Error(`wrk script error: ${r.stderr.trim().slice(0, 1000)}`);
  const j = parseWrkOutput(r.stdout);
  const seconds = j.durationUs / 1e6;
  const errors = j.connect + j.read + j.write;
  const ms = (us: number) => Math.round(us / 10) / 100;
  return {
    client: 'wrk',
    requests: j.requests,
    seconds,
    status2xx: j.requests - j.status,
    non2xx: j.status,
    errors,
    timeouts: j.timeout,
    latencyMs: { p50: ms(j.p50), p90: ms(j.p90), p99: ms(j.p99), max: ms(j.max), mean: ms(j.mean) },
    clientCpuMs: childCpuMs(r.stdout),
  };
}

/** `wrk -v` exits 1 after printing its version: take the first line either way. */
export async function wrkVersion(wrk: string | null): Promise<string> {
  if (!wrk) return 'missing';
  const { run } = await import('./tools.js');
  const r = await run(wrk, ['-v']).catch(() => null);
  const line = r ? (r.stdout || r.stderr).split('\n')[0]?.trim() : '';
  return line ? line.replace(/ Copyright.*$/, '') : 'unknown';
}
