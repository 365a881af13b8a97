/**
 * Lumen's connections run without JIT, whether statements are named or not: a plan
 * estimated expensive (the grouped inbox's count) otherwise spent seconds compiling.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createPool, PreparingClient, SessionClient } from '../../src/db/database.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('session settings', () => {
  for (const prepared of [true, false]) {
    it(`turns JIT off on every connection (named statements ${prepared ? 'on' : 'off'}), in both calling styles`, async () => {
      const pool = createPool({ url: db.url, max: 3, prepared });
      try {
        // Several connections at once: each is set before it serves anything.
        const answers = await Promise.all([1, 2, 3].map(() => pool.query<{ jit: string }>('SHOW jit')));
        expect(answers.map((r) => r.rows[0]!.jit)).toEqual(['off', 'off', 'off']);
        const client = await pool.connect();
        try {
          expect((await client.query<{ jit: string }>('SHOW jit')).rows[0]!.jit).toBe('off');
        } finally {
          client.release();
        }
      } finally {
        await pool.end();
      }
    });
  }

  for (const Client of [SessionClient, PreparingClient]) {
    it(`a ${Client.name} the server drops while idle, outside any pool, reports it and does not end the process`, async () => {
      const client = new Client({ connectionString: db.url, application_name: 'lumen-session-drop' });
      await client.connect();
      const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
      const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      // The server's last words (57P01) reach the idle connection as an 'error' event.
      const other = new pg.Client({ connectionString: db.url });
      await other.connect();
      try {
        await other.query('SELECT pg_terminate_backend($1)', [pid]);
      } finally {
        await other.end();
      }
      await ended;
      await expect(client.query('SELECT 1')).rejects.toThrow();
      await client.end().catch(() => {});
    });
  }
});
