/**
 * The conformance suite's harness: the built executable (`dist/lumen serve`) on a fresh
 * database, Prism validating proxies in front of it (one per document, strict with
 * `--errors` for requests the document allows, lax for requests that break it on
 * purpose), and a log of every exchange with the violations Prism reported.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { expect } from 'vitest';
import { operationsOf, violation, type Answer, type DocumentName } from '../reliability/hostile-support.js';
import { freePort } from '../support/free-port.js';

export const EXECUTABLE = path.resolve('dist/lumen');
const PRISM = path.resolve('node_modules/.bin/prism');
const START_TIMEOUT_MS = 60_000;

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export { freePort };

/** Only what a shell would give, plus the test's settings. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...extra };
}

export interface Child {
  readonly child: ChildProcess;
  readonly base: string;
  output(): string;
  stop(): Promise<void>;
}

function watch(child: ChildProcess, base: string, name: string): Child {
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    base,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
      if (child.exitCode !== 0 && child.signalCode !== 'SIGTERM' && name === 'lumen') throw new Error(`lumen exited with ${child.exitCode}:\n${output}`);
    },
  };
}

async function waitFor(what: string, check: () => Promise<boolean>, child: Child): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!(await check())) {
    if (child.child.exitCode !== null) throw new Error(`${what} exited (${child.child.exitCode}) before it was ready:\n${child.output()}`);
    if (Date.now() > deadline) throw new Error(`${what} not ready after ${START_TIMEOUT_MS} ms:\n${child.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `dist/lumen serve` on 127.0.0.1, ready (GET /readyz 200). */
export async function startLumen(cwd: string, env: Record<string, string>): Promise<Child> {
  const port = await freePort();
  const child = spawn(EXECUTABLE, ['serve'], { cwd, env: cleanEnv({ ...env, PORT: String(port), HOST: '127.0.0.1' }), stdio: ['ignore', 'pipe', 'pipe'] });
  const lumen = watch(child, `http://127.0.0.1:${port}`, 'lumen');
  await waitFor('lumen serve', async () => (await fetch(`${lumen.base}/readyz`).then((r) => r.status, () => 0)) === 200, lumen);
  return lumen;
}

/** One `dist/lumen` command; `--json` commands give their one JSON object. */
export function runLumen(args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(EXECUTABLE, args, { cwd, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export async function lumenJson(args: string[], cwd: string, env: Record<string, string>): Promise<Record<string, any>> {
  const r = await runLumen([...args, '--json'], cwd, env);
  expect(r.code, `lumen ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout.trim()) as Record<string, any>;
}

/** `prism proxy <document> <upstream>`, strict (`--errors`) or lax, listening on 127.0.0.1. */
export async function startPrism(document: string, upstream: string, strict: boolean): Promise<Child> {
  const port = await freePort();
  const args = ['proxy', path.resolve('openapi', document), upstream, '-p', String(port), '-h', '127.0.0.1', ...(strict ? ['--errors'] : [])];
  const child = spawn(PRISM, args, { env: cleanEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
  const prism = watch(child, `http://127.0.0.1:${port}`, 'prism');
  await waitFor(`prism ${document}`, async () => prism.output().includes('Prism is listening'), prism);
  return prism;
}

export type Mode = 'strict' | 'lax' | 'direct';

export interface ExchangeRecord {
  document: DocumentName | 'partner-polling' | 'webhooks';
  operationId: string;
  mode: Mode;
  method: string;
  path: string;
  status: number;
  /** Violations Prism (or, for direct exchanges, the suite's own validator) reported about Lumen's answer. */
  responseViolations: string[];
  /** Violations about the request, expected only when a scenario breaks the document on purpose. */
  requestViolations: string[];
}

export interface Request {
  operationId: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** JSON-serialised unless a string or Buffer. */
  body?: unknown;
  /** The status Lumen must answer. */
  expect: number;
  /** The problem type (code) Lumen must answer with, for errors. */
  problem?: string;
}

export interface Answered {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/**
 * Every exchange of the suite, through the proxies: asserts the expected status and that
 * Prism found nothing wrong with Lumen's side, and keeps the record for the report.
 */
export class Exchanges {
  readonly records: ExchangeRecord[] = [];

  constructor(private readonly proxies: Record<DocumentName, { strict: string; lax: string; lumen: string }>) {}

  /** Through the strict proxy: a request the document allows. */
  strict(document: DocumentName, req: Request): Promise<Answered> {
    return this.send(document, 'strict', req);
  }

  /** Through the lax proxy: a request that breaks the document on purpose (Prism reports it, and forwards it). */
  lax(document: DocumentName, req: Request): Promise<Answered> {
    return this.send(document, 'lax', req);
  }

  /** Straight to Lumen, for what Prism cannot carry (unparseable JSON, a slow body); checked by the suite's own validator. */
  direct(document: DocumentName, req: Request): Promise<Answered> {
    return this.send(document, 'direct', req);
  }

  private async send(document: DocumentName, mode: Mode, req: Request): Promise<Answered> {
    const base = mode === 'direct' ? this.proxies[document].lumen : this.proxies[document][mode];
    const body = req.body === undefined ? undefined : typeof req.body === 'string' || Buffer.isBuffer(req.body) ? req.body : JSON.stringify(req.body);
    const headers: Record<string, string> = { ...(body !== undefined && !req.headers?.['content-type'] ? { 'content-type': 'application/json' } : {}), ...req.headers };
    const res = await fetch(`${base}${req.path}`, { method: req.method, headers, body, signal: AbortSignal.timeout(30_000) });
    const text = await res.text();
    let parsed: any;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    const violations = JSON.parse(res.headers.get('sl-violations') ?? '[]') as { location?: string[]; message: string; code?: unknown }[];
    const record: ExchangeRecord = {
      document,
      operationId: req.operationId,
      mode,
      method: req.method,
      path: req.path,
      status: res.status,
      responseViolations: violations.filter((v) => v.location?.[0] !== 'request').map((v) => `${(v.location ?? []).join('.')}: ${v.message}`),
      requestViolations: violations.filter((v) => v.location?.[0] === 'request').map((v) => `${(v.location ?? []).join('.')}: ${v.message}`),
    };
    if (typeof parsed?.type === 'string' && parsed.type.startsWith('https://stoplight.io/prism/')) {
      record.responseViolations.push(`answered by Prism, not Lumen: ${text.slice(0, 500)}`);
    }
    if (mode === 'direct') {
      const op = operationsOf(document).get(req.operationId)!;
      const answer: Answer = { status: res.status, headers: Object.fromEntries(res.headers), text, body: parsed };
      const wrong = violation(op, answer);
      if (wrong) record.responseViolations.push(wrong);
    }
    if (mode === 'strict' && record.requestViolations.length > 0) record.responseViolations.push(`the request was meant to be valid: ${record.requestViolations.join('; ')}`);
    this.records.push(record);
    const where = `${req.method} ${req.path} (${req.operationId}, ${mode})`;
    expect(record.responseViolations, `${where}: ${text.slice(0, 600)}`).toEqual([]);
    expect(res.status, `${where}: ${text.slice(0, 600)}`).toBe(req.expect);
    if (req.problem) expect(parsed?.type, where).toBe(`urn:lumen:problem:${req.problem}`);
    return { status: res.status, headers: res.headers, text, body: parsed };
  }

  /** Operations of a document that at least one exchange reached. */
  covered(document: string): Set<string> {
    return new Set(this.records.filter((r) => r.document === document).map((r) => r.operationId));
  }

  /** Statuses seen per operation, for the report. */
  statusesOf(document: string): Map<string, Set<number>> {
    const out = new Map<string, Set<number>>();
    for (const r of this.records.filter((x) => x.document === document)) out.set(r.operationId, new Set([...(out.get(r.operationId) ?? []), r.status]));
    return out;
  }
}
