import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { DB } from '../../src/db/schema.js';
import { polePageQuery, serviceOrderPageQuery, type PageQuery } from '../../src/db/repositories/city-data.repository.js';

/**
 * The two list queries, compiled, kept beside the tests for review (their plans on a
 * million poles are in docs/sql/city-data-reads.md). A change to either shows up here.
 */
const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: new pg.Pool({ max: 1 }) }) });

const keyset: PageQuery = { tenantId: 'T', since: '2026-03-14T12:00:00.000000Z', horizon: '2026-03-14T12:05:00.000000Z', after: { u: '2026-03-14T12:01:00.123456Z', id: 'I' }, skip: 0, limit: 1001 };
const fromStart: PageQuery = { tenantId: 'T', since: null, horizon: '2026-03-14T12:05:00.000000Z', after: null, skip: 0, limit: 501 };

function render(q: { compile(): { sql: string; parameters: readonly unknown[] } }): string {
  const c = q.compile();
  return `${c.sql}\n-- parameters: ${JSON.stringify(c.parameters)}\n`;
}

describe('compiled SQL of the list reads', () => {
  it('poles: keyset continuation with updatedSince', async () => {
    await expect(render(polePageQuery(db, keyset))).toMatchFileSnapshot('./__snapshots__/poles-page-keyset.sql');
  });
  it('poles: first page without updatedSince', async () => {
    await expect(render(polePageQuery(db, fromStart))).toMatchFileSnapshot('./__snapshots__/poles-page-first.sql');
  });
  it('service orders: keyset continuation with updatedSince', async () => {
    await expect(render(serviceOrderPageQuery(db, keyset))).toMatchFileSnapshot('./__snapshots__/service-orders-page-keyset.sql');
  });
});
