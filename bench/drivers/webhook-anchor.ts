/**
 * Anchor of the fan-out row: a plain Node script that signs and POSTs the same
 * bodies Lumen delivered, with the headers Lumen sends a partner on its default
 * signature scheme (both: X-Lumen-Signature, X-Lumen-Signature-V2 and the Standard
 * Webhooks three, a traceparent), over keep-alive connections, `concurrency` requests
 * in flight, and prints {sent, failed, ms, cpuMs, waitMs} as one JSON object (cpuMs: this
 * process's CPU time while sending; waitMs: its thread's wait for a core meanwhile).
 *
 *   node --import tsx bench/drivers/webhook-anchor.ts '{"url":…,"secret":…,"concurrency":8,"bodiesFile":…}'
 */
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { schedStat } from '../harness/cpu.js';

export interface AnchorInput {
  url: string;
  secret: string;
  concurrency: number;
  /** NDJSON lines {eventId, eventType, body}. */
  bodiesFile: string;
}

export interface AnchorResult {
  sent: number;
  failed: number;
  ms: number;
  cpuMs: number;
  /** Its main thread's wait for a core while sending, ms (null off Linux). */
  waitMs: number | null;
}

const input = JSON.parse(process.argv[2] ?? '{}') as AnchorInput;
const events = readFileSync(input.bodiesFile, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as { eventId: string; eventType: string; body: string });
const agent = new http.Agent({ keepAlive: true, maxSockets: input.concurrency });
const target = new URL(input.url);

function post(e: { eventId: string; eventType: string; body: string }): Promise<number> {
  const body = Buffer.from(e.body, 'utf8');
  const signature = `sha256=${createHmac('sha256', input.secret).update(body).digest('hex')}`;
  const t = Math.floor(Date.now() / 1000);
  const v2 = `t=${t},v2=${createHmac('sha256', input.secret).update(`${t}.`).update(body).digest('hex')}`;
  const standard = `v1,${createHmac('sha256', input.secret).update(`${e.eventId}.${t}.`).update(body).digest('base64')}`;
  return new Promise((resolve, reject) => {
    const req = http.request(
      target,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': String(body.length),
          'x-lumen-signature': signature,
          'x-lumen-signature-v2': v2,
          'webhook-id': e.eventId,
          'webhook-timestamp': String(t),
          'webhook-signature': standard,
          traceparent: `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-00`,
          'x-lumen-event-id': e.eventId,
          'x-lumen-event-type': e.eventType,
          'x-lumen-timestamp': new Date().toISOString(),
          'x-lumen-delivery-attempt': '1',
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

let next = 0;
let failed = 0;
const started = process.hrtime.bigint();
const cpuAtStart = process.cpuUsage();
const waitAtStart = schedStat('self')?.waitMs ?? null;
await Promise.all(
  Array.from({ length: input.concurrency }, async () => {
    while (next < events.length) {
      const e = events[next++]!;
      const status = await post(e);
      if (status < 200 || status > 299) failed++;
    }
  }),
);
const ms = Number(process.hrtime.bigint() - started) / 1e6;
const cpu = process.cpuUsage(cpuAtStart);
agent.destroy();
const waitAtEnd = schedStat('self')?.waitMs ?? null;
const result: AnchorResult = { sent: events.length, failed, ms, cpuMs: (cpu.user + cpu.system) / 1000, waitMs: waitAtStart === null || waitAtEnd === null ? null : waitAtEnd - waitAtStart };
process.stdout.write(JSON.stringify(result) + '\n');
