import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, type Dispatcher } from 'undici';
import { Budget, SharedBudget } from './budget.js';

/**
 * The one HTTP client for every URL Lumen is given: attachment downloads, the
 * geocoder, webhooks and partner polling. It refuses plain http and non-public
 * addresses (unless allowLoopback, for tests and development), resolves DNS itself
 * and checks the address it actually connects to, so a DNS answer that changes
 * between a check and the connection cannot reach an internal address.
 *
 * The transport is undici (keep-alive connection pools per origin, the guard as the
 * pools' connect-time lookup): per attempt it costs about half of node:http's CPU,
 * which a webhook fan-out spends most of its time in.
 */
export interface OutboundRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** Whole request, connect to last byte. */
  timeoutMs: number;
  /** Enforced while streaming. */
  maxResponseBytes: number;
  /** Allow http:// and loopback addresses (LUMEN_ALLOW_LOOPBACK). */
  allowLoopback: boolean;
  /** Default 0: a 3xx is returned as a response; > 0 follows, re-checking every hop. */
  maxRedirects?: number;
  signal?: AbortSignal;
  /** Whose share of the process's places the request takes (a city's id); none: the whole budget. */
  shareKey?: string;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The URL that answered (after redirects). */
  url: string;
}

export type OutboundErrorKind = 'invalid-url' | 'insecure-scheme' | 'blocked-address' | 'timeout' | 'too-large' | 'network' | 'tls' | 'too-many-redirects' | 'aborted';

export class OutboundError extends Error {
  constructor(
    readonly kind: OutboundErrorKind,
    message: string,
    /** For blocked-address: the URL named a host whose DNS answer was refused (not an address literal). */
    readonly viaName = false,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

/** The deprecated IPv4-compatible IPv6 addresses (::a.b.c.d), bar :: and ::1. */
const IPV4_COMPATIBLE = new net.BlockList();
IPV4_COMPATIBLE.addSubnet('::', 96, 'ipv6');
const UNSPECIFIED_OR_LOOPBACK6 = new net.BlockList();
UNSPECIFIED_OR_LOOPBACK6.addAddress('::', 'ipv6');
UNSPECIFIED_OR_LOOPBACK6.addAddress('::1', 'ipv6');

/**
 * Why an address may not be reached, or null when it may. Only global unicast is
 * allowed (and loopback where LUMEN_ALLOW_LOOPBACK says so): every special-purpose
 * range of the IANA IPv4 and IPv6 registries is refused, by the range names of
 * ipaddr.js, a maintained list of them (private, shared, link-local with the cloud
 * metadata address, multicast, reserved, documentation, benchmarking, Teredo, 6to4,
 * NAT64, ORCHID, deprecated site-local, ...). An IPv4-mapped IPv6 address
 * (::ffff:a.b.c.d, in any spelling) is judged as the IPv4 address it carries; the
 * deprecated IPv4-compatible form (::a.b.c.d, ::/96) is refused whatever it carries.
 */
export function addressRefusal(address: string, allowLoopback: boolean): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address.replace(/%.*$/, ''));
  } catch {
    return `unparseable address ${address}`;
  }
  if (ip.kind() === 'ipv6') {
    // Checked on the address's own bytes (Node's parser): ipaddr.js reads ::a.b.c.d as mapped.
    const bare = address.replace(/%.*$/, '');
    if (IPV4_COMPATIBLE.check(bare, 'ipv6') && !UNSPECIFIED_OR_LOOPBACK6.check(bare, 'ipv6')) return `non-public address ${address} (IPv4-compatible)`;
    const v6 = ip as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) ip = v6.toIPv4Address();
  }
  const range = ip.range();
  if (range === 'unicast') return null;
  if (range === 'loopback') return allowLoopback ? null : `loopback address ${address}`;
  return `non-public address ${address} (${range})`;
}

/** Turns a host name into every address it has (the operating system's resolver by default). */
export type OutboundResolver = (hostname: string) => Promise<dns.LookupAddress[]>;

const systemResolver: OutboundResolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });
let resolver: OutboundResolver = systemResolver;

/**
 * Replaces name resolution for outbound calls (null: back to the system resolver).
 * A seam for tests, which play DNS answers (including ones that change between
 * calls) without a DNS server; nothing in Lumen calls it. The guard below checks
 * whatever the resolver answers, exactly as it checks real DNS.
 */
export function setOutboundResolver(next: OutboundResolver | null): void {
  resolver = next ?? systemResolver;
}

/**
 * The connection's own lookup: resolves once, refuses the name if any answer is not
 * allowed, and hands the socket the address it checked (no second resolution).
 */
function guardedLookup(allowLoopback: boolean): net.LookupFunction {
  return (hostname, options, callback) => {
    const check = (list: dns.LookupAddress[]): void => {
      for (const a of list) {
        const refusal = addressRefusal(a.address, allowLoopback);
        // One refused answer refuses the name: a host that resolves to internal addresses is not a public host.
        if (refusal) return callback(Object.assign(new Error(`${hostname} resolves to a ${refusal}`), { code: 'LUMEN_BLOCKED' }), '', 0);
      }
      const first = list.find((a) => (options as dns.LookupOptions).family === undefined || (options as dns.LookupOptions).family === 0 || a.family === (options as dns.LookupOptions).family) ?? list[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      if ((options as dns.LookupOptions).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, [first]);
      callback(null, first.address, first.family);
    };
    // The socket's callback runs outside the promise, as it would after dns.lookup.
    Promise.resolve()
      .then(() => resolver(hostname))
      .then(
        (list) => process.nextTick(check, list),
        (err: NodeJS.ErrnoException) => process.nextTick(() => callback(err, '', 0)),
      );
  };
}

// Keep-alive pools, one set per loopback policy: a connection's address was checked when it opened.
const agents = new Map<string, Agent>();
function agentFor(allowLoopback: boolean): Agent {
  const key = String(allowLoopback);
  let agent = agents.get(key);
  if (!agent) {
    agent = new Agent({
      // Never more connections to one origin than requests may be in progress (each holds one, idle ones are reused).
      connections: connections.total.capacity,
      // One request at a time per connection: a partner's server that answers late holds only its own connection.
      pipelining: 1,
      keepAliveTimeout: 4_000,
      keepAliveMaxTimeout: 60_000,
      // No timers of undici's own per request: every request has its deadline (timeoutMs, whole request) in once().
      headersTimeout: 0,
      bodyTimeout: 0,
      connect: { lookup: guardedLookup(allowLoopback), minVersion: 'TLSv1.2' },
    });
    agents.set(key, agent);
  }
  return agent;
}

function errorCode(err: unknown): string | undefined {
  const e = err as { code?: string; cause?: { code?: string } };
  return e?.code && e.code !== 'UND_ERR_SOCKET' ? e.code : (e?.cause?.code ?? e?.code);
}

function classify(err: unknown): OutboundError {
  if (err instanceof OutboundError) return err;
  const e = err as Error & { cause?: Error };
  const code = errorCode(err);
  const message = e?.cause?.message && e.cause.message !== e.message ? `${e.message}: ${e.cause.message}` : (e?.message ?? String(err));
  if (code === 'LUMEN_BLOCKED') return new OutboundError('blocked-address', e?.cause?.message ?? message, true);
  if (code?.startsWith('ERR_TLS') || code?.startsWith('ERR_SSL') || /SSL|TLS|certificate|self[- ]signed|CERT_/i.test(`${code} ${message}`)) return new OutboundError('tls', message);
  return new OutboundError('network', `${code ?? 'error'}: ${message}`);
}

/** Verdicts on the address literals of URLs already seen (a webhook fan-out posts to one URL thousands of times a second). */
const literalVerdicts = new Map<string, string | null>();
const MAX_LITERAL_VERDICTS = 256;

/** Why the URL's host, when it is an address literal, may not be reached; null when it may, or when the host is a name (checked at connect time). */
function literalRefusal(hostname: string, allowLoopback: boolean): string | null {
  const key = `${allowLoopback ? '1' : '0'}${hostname}`;
  let verdict = literalVerdicts.get(key);
  if (verdict === undefined) {
    const hostLiteral = hostname.replace(/^\[|\]$/g, '');
    verdict = net.isIP(hostLiteral) ? addressRefusal(hostLiteral, allowLoopback) : null;
    if (literalVerdicts.size >= MAX_LITERAL_VERDICTS) literalVerdicts.clear();
    literalVerdicts.set(key, verdict);
  }
  return verdict;
}

/**
 * One request and its whole answer, through the pool's dispatch with a handler of its
 * own: the answer's bytes are gathered as they arrive, without the stream and abort
 * listeners undici's request() makes for every answer (half of an attempt's CPU in a
 * webhook fan-out, measured: 82 against 42 µs per POST). The first reason to stop wins:
 * the deadline (connect to last byte), the caller's abort, the size bound; the promise
 * settles at once and the connection of an answer cut short is closed, not reused.
 */
function once(req: OutboundRequest, url: URL): Promise<OutboundResponse> {
  const refusal = literalRefusal(url.hostname, req.allowLoopback);
  if (refusal) return Promise.reject(new OutboundError('blocked-address', `refused ${refusal}`));
  const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body);
  const headers: Record<string, string> = { 'user-agent': 'Lumen', ...req.headers };
  return new Promise<OutboundResponse>((resolve, reject) => {
    let controller: Dispatcher.DispatchController | null = null;
    let stopped: OutboundError | null = null;
    let done = false;
    let status = 0;
    let answerHeaders: Record<string, string | string[] | undefined> = {};
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (err: Error | null): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve({ status, headers: answerHeaders, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), url: url.toString() });
    };
    const stop = (e: OutboundError): void => {
      if (stopped || done) return;
      stopped = e;
      // Not on a connection yet: it is aborted when it gets one (onRequestStart).
      controller?.abort(e);
      settle(e);
    };
    const timer = setTimeout(() => stop(new OutboundError('timeout', `no complete answer within ${req.timeoutMs} ms`)), req.timeoutMs);
    const onAbort = (): void => stop(new OutboundError('aborted', 'aborted'));
    if (req.signal?.aborted) return onAbort();
    req.signal?.addEventListener('abort', onAbort, { once: true });
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (stopped) c.abort(stopped);
      },
      onResponseStart(c, statusCode, h) {
        if (statusCode < 200) return;
        status = statusCode;
        answerHeaders = h as Record<string, string | string[] | undefined>;
        // 204 and 304 have no content by definition (the parser reads none), like a HEAD's answer.
        const length = statusCode === 204 || statusCode === 304 ? '0' : h['content-length'];
        if (typeof length === 'string' && /^\d+$/.test(length) && Number(length) > req.maxResponseBytes) {
          stop(new OutboundError('too-large', `answer of ${length} bytes exceeds ${req.maxResponseBytes}`));
        }
      },
      onResponseData(c, chunk) {
        size += chunk.length;
        if (size > req.maxResponseBytes) return stop(new OutboundError('too-large', `answer exceeds ${req.maxResponseBytes} bytes`));
        chunks.push(chunk);
      },
      onResponseEnd() {
        // Handed over once the connection is back in its pool: undici frees a connection
        // of one request at a time only at the event loop's next check phase (an
        // immediate it queues right after this callback), so a caller that sends its
        // next request as soon as it has this answer (the webhook pump) found every
        // connection busy and opened another: 16 connections to a partner for 8 requests
        // in flight. The microtask runs after undici has queued its immediate, so this
        // one runs after it, and the next request reuses the connection.
        queueMicrotask(() => setImmediate(settle, null));
      },
      onResponseError(c, err) {
        settle(stopped ?? classify(err));
      },
    };
    try {
      agentFor(req.allowLoopback).dispatch({ origin: url.origin, path: `${url.pathname}${url.search}`, method: req.method ?? 'GET', headers, body }, handler);
    } catch (err) {
      // A request undici refuses before sending (a header it cannot send, say).
      settle(classify(err));
    }
  });
}

function parseTarget(raw: string, allowLoopback: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundError('invalid-url', 'not an absolute URL');
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && allowLoopback) return url;
  throw new OutboundError('insecure-scheme', url.protocol === 'http:' ? 'only https URLs are allowed' : `scheme ${url.protocol} is not allowed`);
}

/** LUMEN_OUTBOUND_CONNECTIONS's default: outbound requests in progress at once, in this process. */
export const DEFAULT_OUTBOUND_CONNECTIONS = 64;
let connections = new SharedBudget(new Budget(DEFAULT_OUTBOUND_CONNECTIONS), 50);

/**
 * Sets how many outbound requests (attachment downloads, geocoding, webhooks, partner
 * polls together) may be in progress at once in this process; past it a request waits
 * for one to finish. Set once at start, from LUMEN_OUTBOUND_CONNECTIONS.
 */
export function setOutboundConnectionLimit(limit: number, sharePercent = 50): void {
  if (limit === connections.total.capacity && sharePercent === connections.sharePercent) return;
  connections = new SharedBudget(new Budget(limit), sharePercent);
  for (const agent of agents.values()) void agent.destroy().catch(() => {});
  agents.clear();
}

/** Outbound requests in progress and waiting for a place now (for tests and diagnostics). */
export function outboundConnectionsInUse(): { inUse: number; waiting: number; limit: number } {
  return { inUse: connections.total.inUse, waiting: connections.total.waiting, limit: connections.total.capacity };
}

/**
 * One outbound request, its redirects included, holds one of the process's places
 * (LUMEN_OUTBOUND_CONNECTIONS) from its first connection to its last byte; without a
 * free place it waits (abortable by `signal`), and `timeoutMs` counts from when it has
 * one. A request never opens more than one connection at a time, and the keep-alive
 * pools only reuse an idle connection or open one when none is idle, so the
 * connections open at once to any one host stay within the same number.
 */
export async function outboundRequest(req: OutboundRequest): Promise<OutboundResponse> {
  let url = parseTarget(req.url, req.allowLoopback);
  // A city's requests take at most its share of the places (LUMEN_TENANT_BUDGET_SHARE).
  const place = await connections.acquire(req.shareKey ?? null, 1, req.signal).catch(() => {
    throw new OutboundError('aborted', 'aborted');
  });
  try {
    const maxRedirects = req.maxRedirects ?? 0;
    const deadline = Date.now() + req.timeoutMs;
    for (let hop = 0; ; hop++) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new OutboundError('timeout', `no complete answer within ${req.timeoutMs} ms`);
      const res = await once({ ...req, timeoutMs: remaining }, url);
      const location = res.headers.location;
      if (maxRedirects === 0 || res.status < 300 || res.status > 399 || typeof location !== 'string') return res;
      if (hop >= maxRedirects) throw new OutboundError('too-many-redirects', `more than ${maxRedirects} redirects`);
      url = parseTarget(new URL(location, url).toString(), req.allowLoopback);
    }
  } finally {
    place.release();
  }
}
