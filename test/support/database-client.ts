import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { createTestDatabase, type TestDatabase } from './database.js';

/**
 * A test database of its own for the calling file, with one client connected to it:
 * created before the file's tests (then `prepare` runs on the client) and dropped after
 * them. For tests that call the database's functions directly, without the app.
 */
export function databaseWithClient(prepare?: (client: pg.Client) => Promise<unknown>): { readonly db: TestDatabase; readonly client: pg.Client } {
  const state = {} as { db: TestDatabase; client: pg.Client };
  beforeAll(async () => {
    state.db = await createTestDatabase();
    state.client = new pg.Client({ connectionString: state.db.url });
    // A server that ends the connection (the drop below) must not end the test process.
    state.client.on('error', () => {});
    await state.client.connect();
    await prepare?.(state.client);
  });
  afterAll(async () => {
    await state.client?.end();
    await state.db?.drop();
  });
  return state;
}
