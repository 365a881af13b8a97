/**
 * Anchor of the fan-out row: a plain Node script that signs and POSTs the same
 * bodies Lumen delivered (same headers, HMAC-SHA256 of the raw body), over
 * keep-alive connections, `concurrency` requests in flight, and prints
 * {sent, failed, ms} as one JSON object.
 *
 *   node --import tsx bench/drivers/webhook-anchor.ts '{"url":…,"secret":…,"concurrency":8,"bodiesFile":…}'
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';

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
agent.destroy();
const result: AnchorResult = { sent: events.length, failed, ms };
process.stdout.write(JSON.stringify(result) + '\n');
