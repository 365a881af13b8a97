/**
 * The partner's webhook receiver of the fan-out and latency rows, in its own
 * process: verifies every signature as a partner must (HMAC-SHA256 of the raw body
 * with the shared secret, constant-time comparison, 401 when it differs), answers
 * 204, and records when each event arrived (epoch ms, sub-millisecond).
 *
 *   fork('bench/drivers/webhook-receiver.ts', [secret]) — talks to its parent over IPC:
 *   parent -> {type: 'reset' | 'stats' | 'arrivals' | 'push', on?: boolean}
 *   child  -> {type: 'listening', port}, {type: 'stats', ...}, {type: 'arrivals', arrivals},
 *             {type: 'arrival', eventId, at} (while push is on)
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { schedStat } from '../harness/cpu.js';

/** What the bench asks the receiver. */
export type ReceiverRequest = { type: 'reset' } | { type: 'stats' } | { type: 'arrivals' } | { type: 'push'; on: boolean };

/** What the receiver tells the bench. */
export type ReceiverMessage =
  | { type: 'listening'; port: number }
  | { type: 'reset' }
  | { type: 'push' }
  | { type: 'stats'; count: number; first: number; last: number; duplicates: number; badSignatures: number; peakInFlight: number; connectionsOpened: number; cpuMs: number; waitMs: number | null }
  | { type: 'arrivals'; arrivals: [string, number][] }
  | { type: 'arrival'; eventId: string; at: number };

const secret = process.argv[2] ?? '';
if (!secret || !process.send) {
  process.stderr.write('usage: fork webhook-receiver.ts with the webhook secret as its argument\n');
  process.exit(2);
}
const send = (m: ReceiverMessage): void => {
  process.send!(m);
};

const now = (): number => performance.timeOrigin + performance.now();

let arrivals = new Map<string, number>();
let duplicates = 0;
let badSignatures = 0;
let inFlight = 0;
let peakInFlight = 0;
/** TCP connections accepted since the last reset: a keep-alive client opens one per request it has in flight at once. */
let connectionsOpened = 0;
let push = false;
/** This process's CPU time at the last reset: stats report what serving used since (its start, compiling this script, excluded). */
let cpuBase = process.cpuUsage();
/** Its main thread's wait for a core at the last reset (null off Linux). */
let waitBase = schedStat('self')?.waitMs ?? null;

function signatureOk(body: Buffer, header: string | undefined): boolean {
  if (!header?.startsWith('sha256=')) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(body).digest('hex'), 'utf8');
  const given = Buffer.from(header.slice('sha256='.length), 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  inFlight++;
  if (inFlight > peakInFlight) peakInFlight = inFlight;
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = now();
    const body = Buffer.concat(chunks);
    if (!signatureOk(body, req.headers['x-lumen-signature'] as string | undefined)) {
      badSignatures++;
      inFlight--;
      res.writeHead(401).end();
      return;
    }
    const eventId = String(req.headers['x-lumen-event-id'] ?? '');
    if (arrivals.has(eventId)) duplicates++;
    else {
      arrivals.set(eventId, at);
      if (push) send({ type: 'arrival', eventId, at });
    }
    inFlight--;
    res.writeHead(204).end();
  });
});

server.on('connection', () => {
  connectionsOpened++;
});

process.on('message', (m: ReceiverRequest) => {
  switch (m.type) {
    case 'reset':
      arrivals = new Map();
      duplicates = 0;
      badSignatures = 0;
      peakInFlight = 0;
      connectionsOpened = 0;
      cpuBase = process.cpuUsage();
      waitBase = schedStat('self')?.waitMs ?? null;
      send({ type: 'reset' });
      break;
    case 'push':
      push = m.on;
      send({ type: 'push' });
      break;
    case 'stats': {
      let first = Infinity;
      let last = -Infinity;
      for (const at of arrivals.values()) {
        if (at < first) first = at;
        if (at > last) last = at;
      }
      const cpu = process.cpuUsage(cpuBase);
      const wait = schedStat('self')?.waitMs;
      const waitMs = wait === undefined || waitBase === null ? null : wait - waitBase;
      send({ type: 'stats', count: arrivals.size, first, last, duplicates, badSignatures, peakInFlight, connectionsOpened, cpuMs: (cpu.user + cpu.system) / 1000, waitMs });
      break;
    }
    case 'arrivals':
      send({ type: 'arrivals', arrivals: [...arrivals.entries()] });
      break;
  }
});
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => {
  send({ type: 'listening', port: (server.address() as { port: number }).port });
});
