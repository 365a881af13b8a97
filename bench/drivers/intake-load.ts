/**
 * Load driver of the intake row, run as its own process so the load generator does
 * not share an event loop with anything else: autocannon POSTs intake requests for
 * a fixed time, each with a new protocolNumber and a new Idempotency-Key, and prints
 * one JSON object with the outcome.
 *
 *   node --import tsx bench/drivers/intake-load.ts '{"url":…,"apiKey":…,"connections":16,"seconds":10}'
 */
/// <reference path="../autocannon.d.ts" />
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { intakeBody } from '../harness/payloads.js';

interface Input {
  url: string;
  apiKey: string;
  connections: number;
  seconds: number;
}

export interface IntakeLoadResult {
  requests: number;
  seconds: number;
  status2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
}

const input = JSON.parse(process.argv[2] ?? '{}') as Input;
const runId = randomUUID().slice(0, 8);
let n = 0;

const result = await autocannon({
  url: input.url,
  connections: input.connections,
  duration: input.seconds,
  timeout: 30,
  requests: [
    {
      method: 'POST',
      path: '/api/external/service-orders',
      setupRequest(req) {
        n += 1;
        req.headers = {
          'content-type': 'application/json',
          'x-api-key': input.apiKey,
          'idempotency-key': randomUUID(),
          'accept-language': 'en',
        };
        req.body = JSON.stringify(intakeBody(`BENCH-${runId}-${n}`));
        return req;
      },
    },
  ],
});

const codes: Record<string, number> = {};
for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) codes[code] = stat.count;
const out: IntakeLoadResult = {
  requests: result['2xx'] + result.non2xx,
  seconds: result.duration,
  status2xx: result['2xx'],
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  statusCodes: codes,
  latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max, mean: result.latency.mean },
};
process.stdout.write(JSON.stringify(out) + '\n');
