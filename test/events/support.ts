import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import type { EventType } from '../../generated/partner/types.gen.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { emitEvent, type EventSubject } from '../../src/services/events/outbox.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { testEnv } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { makeEventSubject, makePartner, makeTenant } from '../support/factories.js';

export const WEBHOOK_SECRET = 'whsec-test-0123456789abcdef';

/** One request as a webhook receiver saw it: raw bytes, headers, arrival time. */
export interface Received {
  raw: Buffer;
  headers: http.IncomingHttpHeaders;
  at: number;
  status: number;
}

export type Reply = { status: number; headers?: Record<string, string>; hang?: boolean };

/** A real HTTP receiver on 127.0.0.1; `reply` decides each answer (default 204). */
export async function startReceiver(reply: (req: Received, index: number) => Reply = () => ({ status: 204 })) {
  const received: Received[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: Received = { raw: Buffer.concat(chunks), headers: req.headers, at: Date.now(), status: 0 };
      const r = reply(entry, received.length);
      entry.status = r.hang ? 0 : r.status;
      received.push(entry);
      if (r.hang) {
        hanging.add(res);
        return;
      }
      res.writeHead(r.status, r.headers).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/lumen`,
    received,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `check` until it returns a truthy value or the deadline passes. */
export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 10_000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A tenant and a partner (webhook mode when `webhookUrl` is given, else polling). */
export async function makeEventPartner(deps: ServiceDeps, o: { webhookUrl?: string; code?: string } = {}) {
  const tenant = await makeTenant(deps);
  const partner = await makePartner(deps, {
    tenantId: tenant.id,
    ...(o.code ? { code: o.code } : {}),
    scopes: [],
    transport: o.webhookUrl ? 'webhook' : 'polling',
    ...(o.webhookUrl ? { webhookUrl: o.webhookUrl, webhookSecret: WEBHOOK_SECRET } : {}),
  });
  return { tenantId: tenant.id, partner };
}

export async function subjectFor(deps: ServiceDeps, p: { tenantId: string; partner: { id: string } }, withOrder = true): Promise<EventSubject> {
  return makeEventSubject(deps, { tenantId: p.tenantId, externalSystemId: p.partner.id, withOrder });
}

/** Emits events in one transaction of their own, as an operator action would. */
export async function emit(deps: ServiceDeps, ...items: (readonly [EventType, EventSubject])[]) {
  return deps.db.transaction().execute(async (tx) => {
    const out = [];
    for (const [type, subject] of items) out.push(await emitEvent(tx, type, subject));
    return out;
  });
}

/**
 * A database of the test file's own and a runtime on it without the delivery worker or
 * any job, opened before the file's tests and closed after them: the statements under
 * test are the only ones that claim or settle deliveries. `rt` and the database's `url`
 * are set once the tests run.
 */
export function runtimeWithoutWorkers(): { rt: Runtime; url: string } {
  const holder = {} as { rt: Runtime; url: string };
  let db: TestDatabase | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
    holder.url = db.url;
    holder.rt = await openRuntime(loadConfig(testEnv(db.url)), createLogger('silent'), { migrate: false, work: false, poolSize: 2 });
  });
  afterAll(async () => {
    await holder.rt?.close();
    await db?.drop();
  });
  return holder;
}
