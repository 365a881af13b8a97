/**
 * `lumen operator …` and `lumen admin-token …`: accounts, roles, passwords read from a
 * file or standard input (never an argument), actions audited as the system user or
 * `--as EMAIL`, tokens narrowed to an operator or to grants.
 */
import { writeFileSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { cliJson, LogSink, startTestApp, type TestApp } from '../support/app.js';
import { makeTenant } from '../support/factories.js';
import { signIn, tokenFetch } from './support.js';

let t: TestApp;
let city: { id: string };
let other: { id: string };
beforeAll(async () => {
  t = await startTestApp();
  city = await makeTenant(t.rt);
  other = await makeTenant(t.rt);
});
afterAll(async () => {
  await t?.stop();
});

async function withStdin(input: string, ...argv: string[]) {
  const out = new LogSink();
  const err = new LogSink();
  const code = await runCli(argv, { env: t.env, stdout: out, stderr: err, stdin: Readable.from([input]), isTTY: false });
  return { code, stdout: out.lines.join('\n'), stderr: err.lines.join('\n') };
}

describe('lumen operator', () => {
  it('creates an operator with a password made once, lists without it, and the password signs in', async () => {
    const out = await t.cli('operator', 'create', '--email', 'Joao@City.example', '--name', 'João', '--role', 'triager', '--tenant', city.id, '--tenant', other.id);
    expect(out.code, out.stderr).toBe(0);
    const password = /Password \(shown once[^\n]*\n\s+(\S+)/.exec(out.stdout)?.[1];
    expect(password).toBeDefined();
    const listed = cliJson(await t.cli('operator', 'list', '--json'));
    const joao = listed.operators.find((o: { email: string }) => o.email === 'joao@city.example');
    expect(joao).toMatchObject({ name: 'João', platformAdmin: false, passwordSet: true, disabledAt: null });
    expect(joao.grants.map((g: { tenantId: string; role: string }) => [g.tenantId, g.role]).sort()).toEqual([[city.id, 'triager'], [other.id, 'triager']].sort());
    expect(JSON.stringify(listed)).not.toContain(password);
    const s = await signIn(t, 'joao@city.example', password!);
    expect(s.csrfToken).toBeTruthy();
    expect((await t.cli('operator', 'create', '--email', 'joao@city.example', '--name', 'Again', '--role', 'viewer', '--tenant', city.id)).code).toBe(1);
    expect((await t.cli('operator', 'create', '--email', 'x@city.example', '--name', 'X', '--role', 'viewer')).code).toBe(2);
    expect((await t.cli('operator', 'create', '--email', 'x@city.example', '--name', 'X', '--role', 'boss', '--tenant', city.id)).code).toBe(2);
  });

  it('sets a password from a file or standard input, never from an argument, and ends the operator\'s sessions', async () => {
    cliJson(await t.cli('operator', 'create', '--email', 'maria@city.example', '--name', 'Maria', '--role', 'viewer', '--tenant', city.id, '--json'));
    const dir = mkdtempSync(path.join(os.tmpdir(), 'lumen-pw-'));
    const file = path.join(dir, 'pw');
    writeFileSync(file, 'a long file password\n', { mode: 0o600 });
    expect((await t.cli('operator', 'set-password', 'maria@city.example', '--password-file', file)).code).toBe(0);
    const s = await signIn(t, 'maria@city.example', 'a long file password');
    expect((await withStdin('from standard input 123\n', 'operator', 'set-password', 'maria@city.example', '--password-file', '-')).code).toBe(0);
    expect((await t.fetch('/api/admin/session', { headers: { cookie: s.cookie } })).status).toBe(401);
    await signIn(t, 'maria@city.example', 'from standard input 123');
    // No terminal and no file: refused; a password as an argument is not an option at all.
    const noTty = await withStdin('', 'operator', 'set-password', 'maria@city.example');
    expect(noTty.code).toBe(2);
    expect(noTty.stderr).toContain('--password-file');
    expect((await t.cli('operator', 'set-password', 'maria@city.example', '--password', 'on the command line')).code).toBe(2);
    expect((await withStdin('short\n', 'operator', 'set-password', 'maria@city.example', '--password-file', '-')).code).toBe(1);
  });

  it('grants, revokes, makes platform admin, disables; audited as the system user or --as EMAIL', async () => {
    cliJson(await t.cli('operator', 'create', '--email', 'chefe@city.example', '--name', 'Chefe', '--role', 'platform-admin', '--json'));
    const made = cliJson(await t.cli('operator', 'create', '--email', 'rui@city.example', '--name', 'Rui', '--role', 'viewer', '--tenant', city.id, '--json'));
    const granted = cliJson(await t.cli('--as', 'chefe@city.example', 'operator', 'grant', 'rui@city.example', '--tenant', city.id, '--role', 'city-admin', '--json'));
    expect(granted.grants).toEqual([expect.objectContaining({ tenantId: city.id, role: 'city-admin' })]);
    expect(cliJson(await t.cli('operator', 'grant', 'rui@city.example', '--role', 'platform-admin', '--json')).platformAdmin).toBe(true);
    expect(cliJson(await t.cli('operator', 'revoke', 'rui@city.example', '--role', 'platform-admin', '--json')).platformAdmin).toBe(false);
    expect(cliJson(await t.cli('operator', 'revoke', made.operator.id, '--tenant', city.id, '--json')).grants).toEqual([]);
    expect(cliJson(await t.cli('operator', 'disable', 'rui@city.example', '--json')).disabledAt).not.toBeNull();
    const audit = await t.rt.db.selectFrom('audit_log').select(['action', 'actor', 'operator_id']).where('entity_id', '=', made.operator.id).orderBy('id').execute();
    const chefe = await t.rt.db.selectFrom('operator').select('id').where('email', '=', 'chefe@city.example').executeTakeFirstOrThrow();
    expect(audit.map((a) => a.action)).toEqual(['operator.create', 'operator.grant', 'operator.platform-admin', 'operator.platform-admin', 'operator.revoke', 'operator.disable']);
    expect(audit[1]).toEqual({ action: 'operator.grant', actor: 'cli:chefe@city.example', operator_id: chefe.id });
    expect(audit[2]!.actor).toMatch(/^cli:/);
    expect(audit[2]!.operator_id).toBeNull();
    expect(JSON.stringify(await t.rt.db.selectFrom('audit_log').selectAll().execute())).not.toMatch(/scrypt\$/);
    const unknown = await t.cli('--as', 'nobody@city.example', 'operator', 'list');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no enabled operator');
  });
});

describe('lumen admin-token', () => {
  it('keeps making a platform-wide service token with --name only; --operator and --tenant/--role narrow it', async () => {
    const platform = cliJson(await t.cli('admin-token', 'create', '--name', 'script', '--json'));
    expect(platform).toMatchObject({ scope: 'platform', operator: null, grants: [] });
    expect(((await (await tokenFetch(t, platform.token)('/tenants')).json()) as { items: unknown[] }).items.length).toBeGreaterThanOrEqual(2);

    const narrow = cliJson(await t.cli('admin-token', 'create', '--name', 'city-reader', '--tenant', city.id, '--role', 'viewer', '--expires', '2099-01-01T00:00:00Z', '--json'));
    expect(narrow).toMatchObject({ scope: 'grants', grants: [{ tenantId: city.id, role: 'viewer' }], expiresAt: '2099-01-01T00:00:00.000Z' });
    expect(((await (await tokenFetch(t, narrow.token)('/tenants')).json()) as { items: { id: string }[] }).items.map((x) => x.id)).toEqual([city.id]);

    cliJson(await t.cli('operator', 'create', '--email', 'ana@city.example', '--name', 'Ana', '--role', 'triager', '--tenant', other.id, '--json'));
    const owned = cliJson(await t.cli('admin-token', 'create', '--name', 'ana-laptop', '--operator', 'ana@city.example', '--json'));
    expect(owned).toMatchObject({ scope: 'owner', operator: { email: 'ana@city.example' } });
    expect(((await (await tokenFetch(t, owned.token)('/tenants')).json()) as { items: { id: string }[] }).items.map((x) => x.id)).toEqual([other.id]);
    // Narrowing to more than the operator holds is refused.
    expect((await t.cli('admin-token', 'create', '--name', 'too-much', '--operator', 'ana@city.example', '--tenant', city.id, '--role', 'viewer')).code).toBe(1);
    expect((await t.cli('admin-token', 'create', '--name', 'half', '--tenant', city.id)).code).toBe(2);

    const listed = cliJson(await t.cli('admin-token', 'list', '--json'));
    expect(JSON.stringify(listed)).not.toContain(owned.token);
    expect(cliJson(await t.cli('admin-token', 'revoke', owned.id, '--json')).revokedAt).not.toBeNull();
    expect((await tokenFetch(t, owned.token)('/tenants')).status).toBe(401);
  });
});
