import { expect } from 'vitest';
import type { TestApp } from '../support/app.js';

/** Parses a CLI run that must succeed with --json: exactly one JSON object on stdout. */
export function cliJson(out: { code: number; stdout: string; stderr: string }): Record<string, any> {
  expect(out.stderr).toBe('');
  expect(out.code).toBe(0);
  const lines = out.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, any>;
}

/** Issues an admin token through the CLI, as an operator would. */
export async function adminToken(t: TestApp, name = 'ops-desk'): Promise<string> {
  return cliJson(await t.cli('admin-token', 'create', '--name', name, '--json')).token as string;
}

/** A fetch against /api/admin with a bearer token. */
export function adminFetch(t: TestApp, token: string | undefined) {
  return (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers);
    if (token) headers.set('authorization', `Bearer ${token}`);
    return t.fetch(`/api/admin${path}`, { ...init, headers, method: init.method ?? (init.json !== undefined ? 'POST' : 'GET') });
  };
}

export async function problemOf(res: Response): Promise<{ type: string; title: string; status: number; detail: string; requestId: string; errors?: { pointer: string; message: string }[] }> {
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return (await res.json()) as never;
}

/** The outbox rows of one alert, in the order they were written. */
export async function outboxOf(t: TestApp, alertId: string) {
  // In the order they were written (write_seq): created_at is when each transaction began,
  // and one that began first may write after another it waited for.
  const rows = await t.rt.db.selectFrom('event').selectAll().where('alert_id', '=', alertId).orderBy('write_seq').execute();
  return rows.map((r) => ({ type: r.event_type, partnerId: r.external_system_id, serviceOrderId: r.service_order_id, sequence: r.sequence, payload: r.payload as Record<string, any> }));
}

export async function alertRow(t: TestApp, id: string) {
  return t.rt.db.selectFrom('alert').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

export async function orderRow(t: TestApp, id: string) {
  return t.rt.db.selectFrom('service_order').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

export async function alertHistory(t: TestApp, id: string) {
  return t.rt.db.selectFrom('alert_status_history').select(['from_status', 'to_status', 'actor', 'note']).where('alert_id', '=', id).orderBy('id').execute();
}

export async function orderHistory(t: TestApp, id: string) {
  return t.rt.db.selectFrom('service_order_status_history').select(['from_status', 'to_status', 'actor', 'note']).where('service_order_id', '=', id).orderBy('id').execute();
}

export async function auditOf(t: TestApp, entityId: string) {
  return t.rt.db.selectFrom('audit_log').selectAll().where('entity_id', '=', entityId).orderBy('id').execute();
}

/** Everything an illegal move must leave untouched. */
export async function snapshot(t: TestApp, alertIds: string[], orderIds: string[]) {
  const db = t.rt.db;
  return JSON.stringify({
    alerts: alertIds.length ? await db.selectFrom('alert').selectAll().where('id', 'in', alertIds).orderBy('id').execute() : [],
    orders: orderIds.length ? await db.selectFrom('service_order').selectAll().where('id', 'in', orderIds).orderBy('id').execute() : [],
    events: (await db.selectFrom('event').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n,
    audit: (await db.selectFrom('audit_log').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n,
    alertHistory: (await db.selectFrom('alert_status_history').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n,
    orderHistory: (await db.selectFrom('service_order_status_history').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n,
  });
}
