/**
 * LUMEN_PASSWORD_COST: the scrypt cost (log2 N) of new password hashes. 15 by default,
 * never below 15 in production; a stored hash keeps the cost it was made with, so a
 * change of the setting leaves every operator able to sign in.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { setPasswordCost } from '../../src/services/operators/index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeTenant } from '../support/factories.js';
import { makeOperator, signIn } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

describe('the password hash cost', () => {
  it('is 15 unless set, 10 to 20 when set, and never below 15 in production', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'lumen-cost-'));
    expect(loadConfig({ LUMEN_DATA_DIR: dir }).passwordCost).toBe(15);
    expect(loadConfig({ LUMEN_DATA_DIR: dir, LUMEN_PASSWORD_COST: '17' }).passwordCost).toBe(17);
    expect(loadConfig({ LUMEN_DATA_DIR: dir, LUMEN_PASSWORD_COST: '10' }).passwordCost).toBe(10);
    for (const bad of ['9', '21', 'high']) expect(() => loadConfig({ LUMEN_DATA_DIR: dir, LUMEN_PASSWORD_COST: bad })).toThrow(/LUMEN_PASSWORD_COST/);
    const production = { LUMEN_ENVIRONMENT: 'production', DATABASE_URL: 'postgres://x/y', LUMEN_SECRET_KEY: '22'.repeat(32), LUMEN_PUBLIC_URL: 'https://lumen.city.example' };
    expect(loadConfig(production).passwordCost).toBe(15);
    expect(loadConfig({ ...production, LUMEN_PASSWORD_COST: '16' }).passwordCost).toBe(16);
    expect(() => loadConfig({ ...production, LUMEN_PASSWORD_COST: '14' })).toThrow(/LUMEN_PASSWORD_COST below 15 is refused when LUMEN_ENVIRONMENT=production/);
  });

  it('hashes new passwords at the cost set, and signs in operators whose hashes have another', async () => {
    const city = await makeTenant(t.rt, { intakePolicy: 'manual' });
    const grants = [{ tenantId: city.id, role: 'viewer' as const }];
    const cheap = await makeOperator(t.rt, { grants });
    setPasswordCost(15);
    let dear: Awaited<ReturnType<typeof makeOperator>>;
    try {
      dear = await makeOperator(t.rt, { grants });
    } finally {
      setPasswordCost(Number(t.env.LUMEN_PASSWORD_COST));
    }
    const stored = async (id: string) => (await t.rt.db.selectFrom('operator').select('password_hash').where('id', '=', id).executeTakeFirstOrThrow()).password_hash;
    expect(await stored(cheap.id)).toMatch(/^scrypt\$10\$8\$1\$/);
    expect(await stored(dear.id)).toMatch(/^scrypt\$15\$8\$1\$/);
    // Both sign in on the app hashing at 10, and a wrong password is still wrong for each.
    for (const op of [cheap, dear]) {
      expect((await signIn(t, op.email, op.password)).csrfToken).toBeTruthy();
      expect((await t.fetch('/api/admin/session', { method: 'POST', json: { email: op.email, password: `${op.password}x` } })).status).toBe(401);
    }
  });
});
