import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServiceDeps } from '../../src/services/deps.js';
import { makePartner, makeTenant } from '../support/factories.js';

/** One call Lumen made to the partner stub. */
export interface StubCall {
  readonly n: number;
  readonly path: string;
  readonly since: string | null;
  readonly limit: string | null;
  readonly apiKey: string | undefined;
  /** The W3C traceparent header Lumen sent. */
  readonly traceparent: string | undefined;
  readonly at: number;
}

export interface StubReply {
  status?: number;
  json?: unknown;
  /** Raw body (instead of json). */
  body?: string;
  headers?: Record<string, string>;
  /** Never answer (until the stub closes). */
  hang?: boolean;
  /** Answer after this many ms. */
  delayMs?: number;
}

export type StubHandler = (call: StubCall) => StubReply | Promise<StubReply>;

/** A partner's polling endpoint on 127.0.0.1, answering what the test says. */
export interface PartnerStub {
  readonly base: string;
  /** The polling URL to register (path /lumen/requests). */
  readonly url: string;
  readonly calls: StubCall[];
  /** Most calls in flight at the same moment. */
  readonly maxConcurrent: number;
  /** Requests to other paths (attachments), by path. */
  readonly otherCalls: string[];
  handle(fn: StubHandler): void;
  /** Answers for paths other than /lumen/requests (attachment downloads). */
  handleOther(fn: (path: string, res: http.ServerResponse) => void): void;
  close(): Promise<void>;
}

export async function startPartnerStub(initial: StubHandler = () => ({ json: { items: [], hasMore: false } })): Promise<PartnerStub> {
  let handler = initial;
  let other: (path: string, res: http.ServerResponse) => void = (_p, res) => {
    res.statusCode = 404;
    res.end();
  };
  const calls: StubCall[] = [];
  const otherCalls: string[] = [];
  let inFlight = 0;
  let maxConcurrent = 0;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://stub');
    if (url.pathname !== '/lumen/requests') {
      otherCalls.push(url.pathname);
      other(url.pathname, res);
      return;
    }
    const call: StubCall = {
      n: calls.length + 1,
      path: url.pathname,
      since: url.searchParams.get('since'),
      limit: url.searchParams.get('limit'),
      apiKey: req.headers['x-api-key'] as string | undefined,
      traceparent: req.headers.traceparent as string | undefined,
      at: Date.now(),
    };
    calls.push(call);
    inFlight++;
    maxConcurrent = Math.max(maxConcurrent, inFlight);
    res.on('close', () => inFlight--);
    void (async () => {
      const reply = await handler(call);
      if (reply.hang) return;
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      if (res.destroyed) return;
      res.statusCode = reply.status ?? 200;
      for (const [k, v] of Object.entries(reply.headers ?? {})) res.setHeader(k, v);
      if (reply.json !== undefined) {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(reply.json));
      } else {
        res.end(reply.body ?? '');
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    url: `${base}/lumen/requests`,
    calls,
    otherCalls,
    get maxConcurrent() {
      return maxConcurrent;
    },
    handle(fn) {
      handler = fn;
    },
    handleOther(fn) {
      other = fn;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A valid IntakeRequest (coordinates given, so no geocoding), as a partner would return it. */
export function request(protocolNumber: string, requestedAt: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    protocolNumber,
    assetType: 'POLE',
    requestedAt,
    requester: { name: 'Maria Aparecida dos Santos', phone: '+5511987654321' },
    lampType: 'LED',
    address: { street: 'Rua Augusta', number: '1500', neighborhood: 'Consolação', latitude: -23.5573, longitude: -46.6602 },
    problem: { description: 'Lâmpada do poste apagada há três noites.' },
    ...overrides,
  };
}

/** `count` requests one second apart from `from`, numbered from `first`. */
export function requests(prefix: string, count: number, from = Date.parse('2026-03-14T12:00:00.000Z'), first = 1): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => request(`${prefix}-${String(first + i).padStart(5, '0')}`, new Date(from + (first + i) * 1000).toISOString()));
}

/**
 * A partner that keeps its requests ordered by requestedAt and answers `since`
 * (inclusive) and `limit` as the contract asks, with nextSince and hasMore. Note
 * the inclusive since: the last item of a page comes again on the next one.
 */
export function pagedPartner(items: () => Record<string, unknown>[]): StubHandler {
  return (call) => {
    const since = call.since ? Date.parse(call.since) : -Infinity;
    const limit = Number(call.limit ?? 200);
    const all = items()
      .filter((it) => Date.parse(it.requestedAt as string) >= since)
      .sort((a, b) => Date.parse(a.requestedAt as string) - Date.parse(b.requestedAt as string));
    const page = all.slice(0, limit);
    const last = page.at(-1);
    return { json: { items: page, ...(last ? { nextSince: new Date(Date.parse(last.requestedAt as string)).toISOString() } : {}), hasMore: all.length > limit } };
  };
}

export const PARTNER_KEY = 'partner-issued-key-0123456789';

/** A polling-mode partner on a tenant of its own, polled every `interval` seconds. */
export async function makePollingPartner(
  deps: ServiceDeps,
  url: string,
  opts: { interval?: number; code?: string; scopes?: string[]; intakePolicy?: 'automatic' | 'manual'; key?: string | null } = {},
) {
  const tenant = await makeTenant(deps, { intakePolicy: opts.intakePolicy ?? 'automatic' });
  // Created without the job queue, so the poller is not woken: each test starts polling
  // itself (reconcile or poll-now) and controls when the first call happens.
  return makePartner({ config: deps.config, db: deps.db, reads: deps.reads, log: deps.log }, {
    tenantId: tenant.id,
    ...(opts.code ? { code: opts.code } : {}),
    scopes: opts.scopes ?? ['canCreateServiceOrders'],
    transport: 'polling',
    pollingUrl: url,
    pollingKey: opts.key === undefined ? PARTNER_KEY : opts.key,
    pollingIntervalSeconds: opts.interval ?? 1,
  });
}
