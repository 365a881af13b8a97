import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { DB } from '../../src/db/schema.js';
import { pageStatement, type PageStatement } from '../../src/db/repositories/city-data/page.repository.js';
import { readStartStatement, walkPageStatement, type WalkKey } from '../../src/db/repositories/city-data/read-walk.repository.js';

/**
 * The statements of the list reads, compiled, kept beside the tests for review (their
 * plans on a million poles are in docs/sql/city-data-reads.md). A change to any shows up here.
 */
const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: new pg.Pool({ max: 1 }) }) });

const H = '2026-03-14T12:05:00.000000Z';
const keyset: PageStatement = {
  tenantId: 'T',
  since: '2026-03-14T12:00:00.000000Z',
  horizon: H,
  after: { u: '2026-03-14T12:01:00.123456Z', id: 'I' },
  skip: 0,
  limit: 1000,
  rankHorizon: null,
  matching: { kind: 'count', side: 'low', unless: { cacheHorizon: '2026-03-14T12:04:00.000000Z', cacheBelow: 41 } },
};
const fromStart: PageStatement = { tenantId: 'T', since: null, horizon: H, after: null, skip: 0, limit: 500, rankHorizon: null, matching: { kind: 'none' } };
const ranked: PageStatement = { ...fromStart, after: { u: '2026-03-14T12:01:00.123456Z', id: 'I' }, skip: 3000, limit: 1000, rankHorizon: '2026-03-14T12:02:00.000000Z' };
const sinceFirst: PageStatement = { ...fromStart, since: '2026-03-14T12:00:00.000000Z', matching: { kind: 'count', side: 'mid-then-low', unless: null } };
const walk: WalkKey = { externalSystemId: 'E', tenantId: 'T', resource: 'pole', since: null, pageSize: 1000 };

function render(q: { compile(db: Kysely<DB>): { sql: string; parameters: readonly unknown[] } }): string {
  const c = q.compile(db);
  return `${c.sql}\n-- parameters: ${JSON.stringify(c.parameters)}\n`;
}

describe('compiled SQL of the list reads', () => {
  it('poles: keyset continuation with updatedSince and a cached total', async () => {
    await expect(render(pageStatement('pole', keyset))).toMatchFileSnapshot('./__snapshots__/poles-page-keyset.sql');
  });
  it('poles: first page without updatedSince', async () => {
    await expect(render(pageStatement('pole', fromStart))).toMatchFileSnapshot('./__snapshots__/poles-page-first.sql');
  });
  it('poles: a cursor page without updatedSince, its horizon read by the page statement itself', async () => {
    const cursor: PageStatement = { ...fromStart, horizon: null, after: { u: '2026-03-14T12:01:00.123456Z', id: 'I' }, limit: 1000 };
    await expect(render(pageStatement('pole', cursor))).toMatchFileSnapshot('./__snapshots__/poles-page-cursor.sql');
  });
  it('poles: a walk\'s page > 1 without updatedSince, its horizon and the walk\'s start read by the page statement itself, continuing after the page before', async () => {
    const inOrder: PageStatement = { ...fromStart, horizon: null, after: { walk, page: 7, target: 6000 }, limit: 1000 };
    await expect(render(pageStatement('pole', inOrder))).toMatchFileSnapshot('./__snapshots__/poles-page-walk-in-order.sql');
    expect(() => pageStatement('pole', { ...inOrder, horizon: H })).toThrow(/walk's start only/);
    expect(() => pageStatement('service_order', inOrder)).toThrow(/walk's start only/);
    expect(() => pageStatement('pole', { ...inOrder, after: { walk: { ...walk, since: H }, page: 7, target: 6000 } })).toThrow(/walk's start only/);
  });
  it('refuses a statement horizon where the answer depends on the horizon (updatedSince, a rank to check)', () => {
    expect(() => pageStatement('pole', { ...sinceFirst, horizon: null })).toThrow(/own horizon/);
    expect(() => pageStatement('pole', { ...ranked, horizon: null })).toThrow(/own horizon/);
  });
  it('poles: first page with updatedSince and no cached total', async () => {
    await expect(render(pageStatement('pole', sinceFirst))).toMatchFileSnapshot('./__snapshots__/poles-page-first-since.sql');
  });
  it('poles: a page placed by counting from a ranked position (OFFSET fallback)', async () => {
    await expect(render(pageStatement('pole', ranked))).toMatchFileSnapshot('./__snapshots__/poles-page-offset.sql');
  });
  it('service orders: keyset continuation with updatedSince and a cached total', async () => {
    await expect(render(pageStatement('service_order', keyset))).toMatchFileSnapshot('./__snapshots__/service-orders-page-keyset.sql');
  });
  it('walk: what a page > 1 reads before the page, and writes after it', async () => {
    await expect(render(readStartStatement(walk, 7, 6000))).toMatchFileSnapshot('./__snapshots__/walk-read-start.sql');
    const write = walkPageStatement(walk, {
      page: 7,
      restart: false,
      checkpoint: { position: { u: '2026-03-14T12:01:00.123456Z', id: 'I' }, rank: { rank: 7000, horizon: '2026-03-14T12:02:00.000000Z', below: 9000 }, horizon: '2026-03-14T12:02:00.000000Z' },
      total: null,
    });
    await expect(render(write)).toMatchFileSnapshot('./__snapshots__/walk-save-page.sql');
  });
});
