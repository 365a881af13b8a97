import { expect } from 'vitest';
import type { TestApp } from '../support/app.js';

export interface Page<T> {
  items: T[];
  page: number;
  pageSize: number;
  total: number;
  nextCursor: string | null;
}

export interface PoleItem {
  id: string;
  code: string;
  address: string;
  neighborhood: string;
  latitude: number;
  longitude: number;
  active: boolean;
  updatedAt: string;
  device: { id: string; identifier: string; online: boolean | null; relayOn: boolean | null; lastCommunicationAt: string | null } | null;
}

export interface OrderItem {
  id: string;
  number: string;
  status: string;
  priority: string;
  type: string;
  address: string;
  neighborhood: string | null;
  latitude: number | null;
  longitude: number | null;
  poleId: string | null;
  team: { id: string; name: string } | null;
  openedAt: string;
  updatedAt: string;
  closedAt: string | null;
}

export type ListPath = '/api/external/poles' | '/api/external/service-orders';

/** One page; fails the test on anything but 200. */
export async function getPage<T>(t: TestApp, path: ListPath, apiKey: string, query: Record<string, string | number> = {}): Promise<Page<T>> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
  const res = await t.fetch(`${path}${qs ? `?${qs}` : ''}`, { apiKey });
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body as Page<T>;
}

export async function problemOf(res: Response): Promise<{ type: string; status: number; errors?: { pointer: string; message: string }[] }> {
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return (await res.json()) as { type: string; status: number; errors?: { pointer: string; message: string }[] };
}

/** Rule 2 with page numbers: every page of one round, until a short page. */
export async function walkPages<T extends { updatedAt: string }>(t: TestApp, path: ListPath, apiKey: string, updatedSince: string | null, pageSize: number, between?: (page: number) => Promise<void>): Promise<T[]> {
  const seen: T[] = [];
  for (let page = 1; ; page++) {
    const q: Record<string, string | number> = { page, pageSize };
    if (updatedSince) q.updatedSince = updatedSince;
    const p = await getPage<T>(t, path, apiKey, q);
    seen.push(...p.items);
    if (p.items.length < pageSize) return seen;
    await between?.(page);
  }
}

/** The cursor walk: first page by updatedSince, then nextCursor until null. */
export async function walkCursor<T extends { updatedAt: string }>(t: TestApp, path: ListPath, apiKey: string, updatedSince: string | null, pageSize: number, between?: (page: number) => Promise<void>): Promise<T[]> {
  const seen: T[] = [];
  const q: Record<string, string | number> = { pageSize };
  if (updatedSince) q.updatedSince = updatedSince;
  let p = await getPage<T>(t, path, apiKey, q);
  seen.push(...p.items);
  for (let n = 1; p.nextCursor; n++) {
    await between?.(n);
    p = await getPage<T>(t, path, apiKey, { cursor: p.nextCursor, pageSize });
    seen.push(...p.items);
  }
  return seen;
}

export const maxUpdatedAt = (items: { updatedAt: string }[], fallback: string | null): string | null =>
  items.reduce<string | null>((m, i) => (m === null || i.updatedAt > m ? i.updatedAt : m), fallback);

/**
 * Waits until everything committed so far is below the visibility horizon (a
 * background transaction of the job queue may briefly hold it back). Polls with a
 * deadline; no fixed sleep.
 */
export async function settle(t: TestApp, deadlineMs = 10_000): Promise<void> {
  const { rows } = await t.rt.pool.query<{ now: string }>(`SELECT clock_timestamp()::text AS now`);
  const mark = rows[0]!.now;
  const until = Date.now() + deadlineMs;
  for (;;) {
    const r = await t.rt.pool.query<{ ok: boolean }>(`SELECT lumen_visibility_horizon() > $1::timestamptz AS ok`, [mark]);
    if (r.rows[0]!.ok) return;
    if (Date.now() > until) throw new Error('the visibility horizon did not pass the last commit in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}
