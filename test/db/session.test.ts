/**
 * Lumen's connections run without JIT, whether statements are named or not: a plan
 * estimated expensive (the grouped inbox's count) otherwise spent seconds compiling.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/database.js';
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
});
