import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorTransaction } from '../../src/services/operations/transaction.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeTeam, makeTenant } from '../support/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

describe('operatorTransaction', () => {
  it('runs an action again when Postgres breaks a deadlock by aborting it', async () => {
    const tenantId = (await makeTenant(t.rt)).id;
    const a = await makeTeam(t.rt, { tenantId });
    const b = await makeTeam(t.rt, { tenantId });
    const other = new pg.Client({ connectionString: t.db.url, application_name: 'test-other-writer' });
    await other.connect();
    try {
      // The other writer waits long before checking for deadlocks, so the action is the victim.
      await other.query(`SET deadlock_timeout = '20s'`);
      await other.query('BEGIN');
      await other.query('SELECT id FROM team WHERE id = $1 FOR UPDATE', [b.id]);
      let attempts = 0;
      const action = operatorTransaction(t.rt, async (tx) => {
        attempts++;
        await sql`SELECT id FROM team WHERE id = ${a.id} FOR UPDATE`.execute(tx);
        await sql`SELECT id FROM team WHERE id = ${b.id} FOR UPDATE`.execute(tx);
        return attempts;
      });
      const waitingOnLock = async () => {
        const { rows } = await t.rt.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
        return rows[0]!.n >= 1;
      };
      await until(waitingOnLock, 'the action to wait for the other writer');
      // Close the cycle: the other writer now wants the row the action holds.
      const closing = other.query('SELECT id FROM team WHERE id = $1 FOR UPDATE', [a.id]);
      await closing;
      await other.query('COMMIT');
      expect(await action).toBe(2);
      expect(t.logs.text).toContain('operator action hit a lock conflict; running it again');
    } finally {
      await other.end();
    }
  });

  it('does not retry other failures', async () => {
    let attempts = 0;
    await expect(
      operatorTransaction(t.rt, async () => {
        attempts++;
        throw Object.assign(new Error('unique violation'), { code: '23505' });
      }),
    ).rejects.toThrow('unique violation');
    expect(attempts).toBe(1);
  });
});
