import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { sql } from 'kysely';
import { startTestApp, type TestApp } from '../support/app.js';

export interface IntakeTestApp extends TestApp {
  /** Where this app's local blob store keeps files. */
  readonly blobDir: string;
}

/** The whole service with a data directory (and so a blob store) of its own, removed on stop. */
export async function startIntakeApp(env: Record<string, string> = {}): Promise<IntakeTestApp> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lumen-intake-'));
  const app = await startTestApp({ env: { LUMEN_DATA_DIR: dataDir, ...env } });
  const stopApp = app.stop.bind(app);
  return Object.assign(app, {
    blobDir: path.join(dataDir, 'blobs'),
    async stop() {
      await stopApp();
      rmSync(dataDir, { recursive: true, force: true });
    },
  }) as IntakeTestApp;
}

/** Every file under a directory, as paths relative to it. */
export function listFiles(dir: string, base = dir): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((f) => {
    const full = path.join(dir, f);
    return statSync(full).isDirectory() ? listFiles(full, base) : [path.relative(base, full)];
  });
}

/** Smallest valid images of each accepted type. */
export const JPEG = Buffer.from(
  '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=',
  'base64',
);
export const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
export const WEBP = Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64');

/** A 2.5 body; `over` replaces top-level fields. */
export function intakeBody(protocolNumber: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    protocolNumber,
    assetType: 'POLE',
    requestedAt: '2026-03-14T09:30:00.000-03:00',
    requester: { name: 'Maria Aparecida dos Santos', phone: '+5511987654321' },
    lampType: 'LED',
    address: { street: 'Rua Augusta', number: '1500', neighborhood: 'Consolação', reference: 'Em frente à padaria', latitude: -23.5573, longitude: -46.6602 },
    problem: { description: 'Lâmpada do poste apagada há três noites.', additionalNotes: 'A rua fica totalmente escura depois das 19h.' },
    ...over,
  };
}

export async function post(t: TestApp, apiKey: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return t.fetch('/api/external/service-orders', { method: 'POST', apiKey, json: body, headers });
}

export async function postJson(t: TestApp, apiKey: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; text: string; res: Response }> {
  const res = await post(t, apiKey, body, headers);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text, res };
}

export interface StubServer {
  url: string;
  port: number;
  requests: { method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer }[];
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 for the test: attachment host, geocoder, S3. */
export async function startStub(handler: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void | Promise<void>): Promise<StubServer> {
  const requests: StubServer['requests'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body });
      Promise.resolve(handler(req, res, body)).catch((err: unknown) => {
        res.statusCode = 500;
        res.end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls a condition until it holds or the deadline passes (no sleeps as synchronisation). */
export async function eventually<T>(fn: () => Promise<T>, accept: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (accept(v)) return v;
    if (Date.now() > deadline) {
      expect.fail(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(v)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The number sequences a tenant has (migration 0112: one per counter and year, created by its first number). */
export async function numberSequences(t: TestApp, tenantId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
     WHERE s.nspname = 'tenant_number' AND c.relkind = 'S' AND c.relname LIKE ${'%\\_' + tenantId.replaceAll('-', '') + '\\_%'}`.execute(t.rt.db);
  return rows[0]!.n;
}

/** The last number each of a tenant's counters handed out (0: none): alert, and service_order of this UTC year. */
export async function lastNumbers(t: TestApp, tenantId: string): Promise<{ alert: number; service_order: number }> {
  const { rows } = await sql<{ alert: number; service_order: number }>`SELECT lumen_last_number(${tenantId}::uuid, 'alert', 0) AS alert,
     lumen_last_number(${tenantId}::uuid, 'service_order', ${new Date().getUTCFullYear()}::integer) AS service_order`.execute(t.rt.db);
  return rows[0]!;
}

/** Counts of the rows intake writes, for "nothing left behind" checks. */
export async function intakeFootprint(t: TestApp, tenantId: string): Promise<Record<string, number>> {
  const count = async (table: 'alert' | 'service_order' | 'alert_attachment' | 'attachment_failure'): Promise<number> =>
    Number((await t.rt.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('tenant_id', '=', tenantId).executeTakeFirstOrThrow()).n);
  const keys = Number(
    (
      await t.rt.db
        .selectFrom('idempotency_key as k')
        .innerJoin('external_system as e', 'e.id', 'k.external_system_id')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('e.tenant_id', '=', tenantId)
        .executeTakeFirstOrThrow()
    ).n,
  );
  return { alerts: await count('alert'), orders: await count('service_order'), counters: await numberSequences(t, tenantId), attachments: await count('alert_attachment'), failures: await count('attachment_failure'), keys };
}
