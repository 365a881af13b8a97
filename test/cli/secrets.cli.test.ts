/**
 * Secrets never need to be typed on a command line: read from a file or standard
 * input, or made by Lumen and shown once.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { openSecret, partnerSecretAad } from '../../src/lib/secret-box.js';
import { cliJson, LogSink, startTestApp, type TestApp } from '../support/app.js';
import { makeTenant } from '../support/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

const storedSecret = async (code: string) => {
  const row = await t.rt.db.selectFrom('external_system').select(['id', 'webhook_secret_enc', 'polling_key_enc']).where('code', '=', code).executeTakeFirstOrThrow();
  return {
    webhook: row.webhook_secret_enc ? openSecret(t.rt.config.secretKey, row.webhook_secret_enc, partnerSecretAad(row.id, 'webhook_secret_enc')) : null,
    polling: row.polling_key_enc ? openSecret(t.rt.config.secretKey, row.polling_key_enc, partnerSecretAad(row.id, 'polling_key_enc')) : null,
  };
};

async function withStdin(input: string, ...argv: string[]) {
  const out = new LogSink();
  const err = new LogSink();
  const code = await runCli(argv, { env: t.env, stdout: out, stderr: err, stdin: Readable.from([input]) });
  return { code, stdout: out.lines.join('\n'), stderr: err.lines.join('\n') };
}

describe('secrets on the CLI', () => {
  it('reads the webhook secret from a file and the polling key from standard input', async () => {
    const tenant = await makeTenant(t.rt);
    const dir = mkdtempSync(path.join(tmpdir(), 'lumen-secret-'));
    writeFileSync(path.join(dir, 'secret'), 'a-secret-from-a-file-1234\n', { mode: 0o600 });
    cliJson(await t.cli('partner', 'create', '--tenant', tenant.id, '--code', 'secret-file', '--scopes', 'canReadCityData', '--webhook-url', 'https://partner.example/hooks', '--webhook-secret-file', path.join(dir, 'secret'), '--json'));
    expect(await storedSecret('secret-file')).toEqual({ webhook: 'a-secret-from-a-file-1234', polling: null });

    const updated = await withStdin('polling-key-from-stdin\n', 'partner', 'update', 'secret-file', '--polling-url', 'https://partner.example/lumen/requests', '--polling-key-file', '-', '--json');
    expect(updated.code, updated.stderr).toBe(0);
    expect((await storedSecret('secret-file')).polling).toBe('polling-key-from-stdin');
  });

  it('makes a webhook secret when none is given and shows it once', async () => {
    const tenant = await makeTenant(t.rt);
    const made = cliJson(await t.cli('partner', 'create', '--tenant', tenant.id, '--code', 'secret-made', '--scopes', 'canReadCityData', '--webhook-url', 'https://partner.example/hooks', '--json'));
    expect(made.webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect((await storedSecret('secret-made')).webhook).toBe(made.webhookSecret);
    const shown = cliJson(await t.cli('partner', 'show', 'secret-made', '--json'));
    expect(JSON.stringify(shown)).not.toContain(made.webhookSecret);
  });

  it('warns about a secret on the command line, and refuses it in production, pointing at the -file form', async () => {
    const tenant = await makeTenant(t.rt);
    const warned = await t.cli('partner', 'create', '--tenant', tenant.id, '--code', 'secret-argv', '--scopes', 'canReadCityData', '--webhook-url', 'https://partner.example/hooks', '--webhook-secret', 'y'.repeat(24), '--json');
    expect(warned.code).toBe(0);
    expect(warned.stderr).toMatch(/^warning: --webhook-secret on the command line can be read by every user of this machine .*--webhook-secret-file PATH, or --webhook-secret-file - /m);
    const { cli } = await import('../support/app.js');
    const production = await cli({ ...t.env, LUMEN_ENVIRONMENT: 'production', LUMEN_PUBLIC_URL: 'https://lumen.city.example' }, 'partner', 'update', 'secret-argv', '--polling-key', 'z'.repeat(24), '--json');
    expect(production.code).toBe(2);
    expect(production.stderr).toMatch(/--polling-key on the command line is refused in production.*--polling-key-file PATH/);
    expect((await storedSecret('secret-argv')).polling).toBeNull();
    // Clearing a secret (`none`) is no secret: no warning.
    const cleared = await t.cli('partner', 'update', 'secret-argv', '--webhook-secret', 'none', '--json');
    expect(cleared.stderr).toBe('');
  });

  it('refuses a secret given twice, and names a missing file', async () => {
    const tenant = await makeTenant(t.rt);
    const both = await t.cli('partner', 'create', '--tenant', tenant.id, '--code', 'secret-both', '--scopes', 'canReadCityData', '--webhook-secret', 'x'.repeat(20), '--webhook-secret-file', '/nonexistent');
    expect(both.code).toBe(2);
    const missing = await t.cli('partner', 'create', '--tenant', tenant.id, '--code', 'secret-missing', '--scopes', 'canReadCityData', '--webhook-secret-file', '/nonexistent/secret');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no such file/);
    expect(await t.rt.db.selectFrom('external_system').select('code').where('code', 'in', ['secret-both', 'secret-missing']).execute()).toEqual([]);
  });
});

describe('--json with logging turned up', () => {
  it('keeps stdout to exactly one JSON object; log lines go to stderr', async () => {
    const { cli } = await import('../support/app.js');
    const out = await cli({ ...t.env, LUMEN_LOG_LEVEL: 'debug' }, 'tenant', 'create', '--name', 'Cidade Registrada', '--json');
    expect(out.code).toBe(0);
    const lines = out.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ name: 'Cidade Registrada' });
    expect(out.stderr).toMatch(/"level":"(debug|info)"/);
  });
});
