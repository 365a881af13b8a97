import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { DB } from '../../src/db/schema.js';
import { cityCellsQuery, cityPolesQuery } from '../../src/db/repositories/operations/city-map.repository.js';

/**
 * The city map's statements, compiled, kept beside the tests for review (their timings
 * on a million poles are the bench row city-map). A change to any shows up here.
 */
const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: new pg.Pool({ max: 1 }) }) });
const BOX = { south: -25.45, west: -49.3, north: -25.4, east: -49.25 };

function render(q: { compile(db: Kysely<DB>): { sql: string; parameters: readonly unknown[] } }): string {
  const c = q.compile(db);
  return `${c.sql}\n-- parameters: ${JSON.stringify(c.parameters)}\n`;
}

describe('compiled SQL of the city map', () => {
  it('the whole city at zoom 12: level-14 rollup rows, open work moved between states', async () => {
    await expect(render(cityCellsQuery('T', 14, null, {}))).toMatchFileSnapshot('./__snapshots__/city-map-whole-city.sql');
  });
  it('a viewport at zoom 15 filtered by priority and telegestor state: only the matching open work', async () => {
    await expect(render(cityCellsQuery('T', 17, BOX, { priority: 'High', telegestor: 'off' }))).toMatchFileSnapshot('./__snapshots__/city-map-viewport-filtered.sql');
  });
  it('a viewport at zoom 18: the poles one by one', async () => {
    await expect(render(cityPolesQuery('T', BOX, {}, 1000))).toMatchFileSnapshot('./__snapshots__/city-map-poles.sql');
  });
});
