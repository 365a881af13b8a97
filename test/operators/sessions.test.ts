/**
 * Console sessions: sign-in sets an HttpOnly, SameSite=Strict cookie (Secure behind an
 * https LUMEN_PUBLIC_URL) and stores only a hash; GET answers the same shape; idle (8 h)
 * and absolute (7 days) limits, driven by editing the session row; CSRF (Origin and
 * X-CSRF-Token) on every change made with the cookie; sign-out; a disabled operator
 * stops at once, on another instance too; throttled sign-ins with Retry-After; the
 * answer never tells whether an e-mail exists; passwords, session ids and tokens are
 * never logged or echoed.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { makeAlert, makePartner, makeTenant } from '../support/factories.js';
import { recordReliability } from '../support/reliability.js';
import { seedDemo, seedDemoOperator } from '../../src/services/demo/index.js';
import { makeOperator, makeToken, sessionFetch, signIn, tokenFetch, type MadeOperator } from './support.js';

let t: TestApp;
let second: TestApp;
let city: { id: string; name: string };
let partner: { id: string };
let op: MadeOperator;
/** Every secret handed out in this file: none may show up in a log line. */
const secrets: string[] = [];

beforeAll(async () => {
  // Loopback is a trusted proxy here, so each test names its client with X-Forwarded-For.
  t = await startTestApp({ env: { LUMEN_SIGN_IN_FAILURES_PER_ADDRESS: '15', LUMEN_TRUSTED_PROXIES: '127.0.0.1/32,::1/128', LUMEN_TEST_LOG_LEVEL: 'debug' } });
  // Another instance on the same database, served over an https public URL.
  second = await startTestApp({ db: t.db, env: { LUMEN_PUBLIC_URL: 'https://lumen.city.example', LUMEN_TEST_LOG_LEVEL: 'debug' } });
  city = await makeTenant(t.rt, { intakePolicy: 'manual' });
  partner = await makePartner(t.rt, { tenantId: city.id });
  op = await makeOperator(t.rt, { grants: [{ tenantId: city.id, role: 'triager' }], name: 'Ana Souza' });
  secrets.push(op.password);
});
// Every test starts with no failed sign-ins counted (all come from one loopback address).
afterEach(async () => {
  await t.rt.db.deleteFrom('sign_in_failure').execute();
});
afterAll(async () => {
  await second?.stop();
  await t?.stop();
});

function signInRaw(app: TestApp, email: string, password: string, headers: Record<string, string> = {}) {
  return app.fetch('/api/admin/session', { method: 'POST', json: { email, password }, headers });
}

describe('sign-in', () => {
  it('answers the operator and a CSRF token, sets an HttpOnly SameSite=Strict cookie, stores only its hash', async () => {
    const res = await signInRaw(t, op.email.toUpperCase(), op.password);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as { operator: unknown; csrfToken: string };
    expect(body).toEqual({ operator: { id: op.id, email: op.email, name: 'Ana Souza', platformAdmin: false, grants: [{ tenantId: city.id, tenantName: city.name, role: 'triager' }] }, csrfToken: expect.any(String) });
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^lumen_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=604800$/);
    const id = /^lumen_session=([^;]+)/.exec(cookie)![1]!;
    secrets.push(id, body.csrfToken);
    const rows = await t.rt.db.selectFrom('operator_session').selectAll().where('operator_id', '=', op.id).execute();
    expect(rows.some((r) => r.id_hash.equals(createHash('sha256').update(id).digest()))).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(id);
    // The same for GET, and a new id on every sign-in.
    const again = await signIn(t, op.email, op.password);
    secrets.push(again.cookie.split('=')[1]!, again.csrfToken);
    expect(again.cookie).not.toBe(`lumen_session=${id}`);
    const current = await sessionFetch(t, again)('/session');
    expect(current.status).toBe(200);
    expect(await current.json()).toEqual({ operator: body.operator, csrfToken: again.csrfToken });
    expect((await t.fetch('/api/admin/session')).status).toBe(401);
    const token = await makeToken(t.rt, { operator: op.email });
    secrets.push(token.token);
    expect((await tokenFetch(t, token.token)('/session')).status).toBe(401);
  });

  it('marks the cookie Secure when LUMEN_PUBLIC_URL is https', async () => {
    const res = await signInRaw(second, op.email, op.password);
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).toMatch(/; Secure$/);
    secrets.push(/^lumen_session=([^;]+)/.exec(res.headers.get('set-cookie')!)![1]!);
  });

  it('never tells whether an e-mail exists: same status and body for an unknown e-mail, a wrong password, a disabled operator; each audited', async () => {
    const disabled = await makeOperator(t.rt, { grants: [{ tenantId: city.id, role: 'viewer' }] });
    expect((await t.cli('operator', 'disable', disabled.email)).code).toBe(0);
    const answers = [];
    for (const [email, password] of [
      ['nobody@city.example', 'whatever-password-1'],
      [op.email, 'the-wrong-password'],
      [disabled.email, disabled.password],
    ] as const) {
      const res = await signInRaw(t, email, password);
      const { requestId: _r, ...problem } = (await res.json()) as Record<string, unknown>;
      answers.push({ status: res.status, problem, cookie: res.headers.get('set-cookie') });
    }
    expect(answers[0]).toEqual({ status: 401, problem: expect.objectContaining({ type: 'urn:lumen:problem:invalid-credentials' }), cookie: null });
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    const audit = await t.rt.db.selectFrom('audit_log').select(['action', 'entity_id', 'note']).where('action', '=', 'session.sign-in-failed').orderBy('id').execute();
    expect(audit.slice(-3).map((a) => a.note?.split(';')[0])).toEqual(['unknown account', 'wrong password', 'operator disabled']);
    // The e-mail typed for an unknown account is not kept (it may be a password in the wrong field).
    expect(JSON.stringify(audit)).not.toContain('nobody@city.example');
  });

  // About a hundred sign-ins, each a scrypt: over 30 s on a loaded two-core machine.
  it('slows a guesser down by address, doubling the wait, while the operator signs in from elsewhere; never a lockout anyone can cause', { timeout: 120_000 }, async () => {
    const target = await makeOperator(t.rt, { grants: [{ tenantId: city.id, role: 'viewer' }] });
    secrets.push(target.password);
    const from = (address: string) => ({ 'x-forwarded-for': address });
    /** Moves every throttle row's last failure back, as time passing would. */
    const later = (seconds: number) => t.rt.pool.query(`UPDATE sign_in_failure SET last_failure_at = last_failure_at - make_interval(secs => $1)`, [seconds]);

    // The operator's usual place: a sign-in from there.
    expect((await signInRaw(t, target.email, target.password, from('203.0.113.10'))).status).toBe(200);
    // A guesser at another address: five failures, then a wait of 1 s, 2 s, 4 s … after each further one.
    const attacker = from('198.51.100.7');
    for (let i = 0; i < 5; i++) expect((await signInRaw(t, target.email, `wrong-password-${i}`, attacker)).status).toBe(401);
    const blocked = await signInRaw(t, target.email, target.password, attacker);
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get('retry-after')).toBe('1');
    expect(((await blocked.json()) as { type: string }).type).toBe('urn:lumen:problem:rate-limited');
    const waits: string[] = [];
    for (let i = 0; i < 4; i++) {
      await later(3600);
      expect((await signInRaw(t, target.email, `still-wrong-${i}`, attacker)).status).toBe(401);
      waits.push((await signInRaw(t, target.email, 'another-guess', attacker)).headers.get('retry-after')!);
    }
    expect(waits).toEqual(['2', '4', '8', '16']);
    // Meanwhile the operator, from anywhere else, is not affected.
    expect((await signInRaw(t, target.email, target.password, from('203.0.113.10'))).status).toBe(200);
    expect((await signInRaw(t, target.email, target.password, from('192.0.2.44'))).status).toBe(200);
    // An unknown e-mail is slowed exactly alike (no existence leak through 429 either).
    for (let i = 0; i < 5; i++) expect((await signInRaw(t, 'ghost@city.example', `wrong-password-${i}`, attacker)).status).toBe(401);
    expect((await signInRaw(t, 'ghost@city.example', 'wrong-password-x', attacker)).status).toBe(429);

    // Per address (LUMEN_SIGN_IN_FAILURES_PER_ADDRESS=15 here): other e-mails, same client.
    await t.rt.db.deleteFrom('sign_in_failure').execute();
    const statuses: number[] = [];
    for (let i = 0; i < 16; i++) statuses.push((await signInRaw(t, `someone-${i}@city.example`, 'wrong-password', from('198.51.100.99'))).status);
    expect(statuses).toEqual([...Array(15).fill(401), 429]);

    // Guessing spread over many addresses (ten times the per-account limit): new places wait,
    // the operator's usual one does not.
    await t.rt.db.deleteFrom('sign_in_failure').execute();
    for (let i = 0; i < 50; i++) expect((await signInRaw(t, target.email, 'wrong-password', from(`100.64.0.${i + 1}`))).status).toBe(401);
    expect((await signInRaw(t, target.email, target.password, from('100.64.1.1'))).status).toBe(429);
    expect((await signInRaw(t, target.email, target.password, from('203.0.113.10'))).status).toBe(200);
    recordReliability('Security: operators and sessions', {
      item: 'failed console sign-ins: a delay, never a lockout',
      figure: 'per e-mail and address past 5 failures, then per address past 30 (15 in the test), then per e-mail past 50 from anywhere but its usual addresses: 429 with Retry-After 1, 2, 4, 8, 16 s … (at most 15 min); the right password from the operator\'s usual or any other address still signs in',
      detail: 'test/operators/sessions.test.ts',
    });
  });
});

describe('a session in use', () => {
  it('needs Lumen\'s own Origin and the X-CSRF-Token for every change; refusals change nothing', async () => {
    const s = await signIn(t, op.email, op.password);
    secrets.push(s.cookie.split('=')[1]!, s.csrfToken);
    const alert = await makeAlert(t.rt, { tenantId: city.id, externalSystemId: partner.id });
    const attempts = [
      sessionFetch(t, s, { csrf: false }),
      sessionFetch(t, s, { origin: 'https://evil.example' }),
      sessionFetch(t, s, { origin: null }),
      sessionFetch(t, { ...s, csrfToken: s.csrfToken.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) }),
    ];
    // An origin that only matches the Host header the client wrote itself is foreign too.
    const hostMatched = sessionFetch(t, s, { origin: 'http://evil.example' });
    attempts.push((path, init = {}) => hostMatched(path, { ...init, headers: { ...init.headers, host: 'evil.example' } }));
    for (const call of attempts) {
      const res = await call(`/alerts/${alert.id}/discard`, { json: { reason: 'csrf' } });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { type: string }).type).toBe('urn:lumen:problem:csrf-failed');
    }
    expect((await t.rt.db.selectFrom('alert').select('status').where('id', '=', alert.id).executeTakeFirstOrThrow()).status).toBe('Pending');
    // Reads need no token; the right Origin and token go through, audited as the operator.
    expect((await sessionFetch(t, s, { csrf: false })(`/alerts/${alert.id}`)).status).toBe(200);
    expect((await sessionFetch(t, s)(`/alerts/${alert.id}/discard`, { json: { reason: 'duplicada' } })).status).toBe(200);
    const audit = await t.rt.db.selectFrom('audit_log').select(['actor', 'operator_id']).where('entity_id', '=', alert.id).execute();
    expect(audit).toEqual([{ actor: `operator:${op.email}`, operator_id: op.id }]);
    // A sign-in form posted from another site is refused too.
    expect((await signInRaw(t, op.email, op.password, { origin: 'https://evil.example' })).status).toBe(403);
  });

  it('ends after 8 idle hours and 7 days after sign-in (times moved in the row, not waited for)', async () => {
    const s = await signIn(t, op.email, op.password);
    secrets.push(s.cookie.split('=')[1]!, s.csrfToken);
    const call = sessionFetch(t, s);
    const hash = createHash('sha256').update(s.cookie.split('=')[1]!).digest();
    const row = () => t.rt.db.updateTable('operator_session').where('id_hash', '=', hash);
    await row().set({ last_seen_at: sql<Date>`now() - interval '7 hours 59 minutes'` }).execute();
    expect((await call('/session')).status).toBe(200);
    // That request was a use: the idle clock starts again.
    const seen = await t.rt.db.selectFrom('operator_session').select(sql<number>`extract(epoch FROM now() - last_seen_at)`.as('idle')).where('id_hash', '=', hash).executeTakeFirstOrThrow();
    expect(Number(seen.idle)).toBeLessThan(60);
    await row().set({ last_seen_at: sql<Date>`now() - interval '8 hours 1 second'` }).execute();
    expect((await call('/session')).status).toBe(401);
    const fresh = await signIn(t, op.email, op.password);
    secrets.push(fresh.cookie.split('=')[1]!, fresh.csrfToken);
    const freshHash = createHash('sha256').update(fresh.cookie.split('=')[1]!).digest();
    expect((await sessionFetch(t, fresh)('/session')).status).toBe(200);
    await t.rt.db.updateTable('operator_session').where('id_hash', '=', freshHash).set({ created_at: sql<Date>`now() - interval '7 days'`, expires_at: sql<Date>`now() - interval '1 second'` }).execute();
    expect((await sessionFetch(t, fresh)('/session')).status).toBe(401);
  });

  it('signs out: 204, the cookie cleared, the session gone on every instance', async () => {
    const s = await signIn(t, op.email, op.password);
    secrets.push(s.cookie.split('=')[1]!, s.csrfToken);
    expect((await sessionFetch(t, s, { csrf: false })('/session', { method: 'DELETE' })).status).toBe(403);
    const out = await sessionFetch(t, s)('/session', { method: 'DELETE' });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^lumen_session=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0/);
    expect((await sessionFetch(t, s)('/session')).status).toBe(401);
    expect((await sessionFetch(second, s)('/session')).status).toBe(401);
  });

  it('changes one\'s own password from the session: the current one checked, other sessions ended, this one kept', async () => {
    const me = await makeOperator(t.rt, { grants: [{ tenantId: city.id, role: 'viewer' }] });
    const here = await signIn(t, me.email, me.password);
    const elsewhere = await signIn(t, me.email, me.password);
    secrets.push(me.password, here.cookie.split('=')[1]!, here.csrfToken, elsewhere.cookie.split('=')[1]!, elsewhere.csrfToken, 'my new long password');
    const call = sessionFetch(t, here);
    const wrong = await call('/session/password', { json: { currentPassword: 'not-my-password', newPassword: 'my new long password' } });
    expect(wrong.status).toBe(422);
    expect(((await wrong.json()) as { errors: { pointer: string }[] }).errors[0]!.pointer).toBe('/currentPassword');
    expect((await call('/session/password', { json: { currentPassword: me.password, newPassword: 'short' } })).status).toBe(422);
    expect((await sessionFetch(t, here, { csrf: false })('/session/password', { json: { currentPassword: me.password, newPassword: 'my new long password' } })).status).toBe(403);
    expect((await call('/session/password', { json: { currentPassword: me.password, newPassword: 'my new long password' } })).status).toBe(204);
    expect((await call('/session')).status).toBe(200);
    expect((await sessionFetch(t, elsewhere)('/session')).status).toBe(401);
    expect((await signInRaw(t, me.email, me.password)).status).toBe(401);
    await signIn(t, me.email, 'my new long password');
  });

  it('a disabled operator\'s sessions and tokens stop at once, on another instance too', async () => {
    const victim = await makeOperator(t.rt, { grants: [{ tenantId: city.id, role: 'city-admin' }] });
    secrets.push(victim.password);
    const s = await signIn(t, victim.email, victim.password);
    const token = await makeToken(t.rt, { operator: victim.email });
    secrets.push(s.cookie.split('=')[1]!, s.csrfToken, token.token);
    expect((await sessionFetch(second, s)('/tenants')).status).toBe(200);
    expect((await tokenFetch(second, token.token)('/tenants')).status).toBe(200);
    // A platform admin disables them through the API of the first instance.
    const admin = await makeOperator(t.rt, { platformAdmin: true });
    secrets.push(admin.password);
    const adminSession = await signIn(t, admin.email, admin.password);
    secrets.push(adminSession.cookie.split('=')[1]!, adminSession.csrfToken);
    expect((await sessionFetch(t, adminSession)(`/operators/${victim.id}/disable`, { method: 'POST' })).status).toBe(200);
    expect((await sessionFetch(second, s)('/tenants')).status).toBe(401);
    expect((await tokenFetch(second, token.token)('/tenants')).status).toBe(401);
    expect((await sessionFetch(t, s)('/tenants')).status).toBe(401);
    // Enabled again: the token works again, the ended session does not come back.
    expect((await t.cli('operator', 'enable', victim.email)).code).toBe(0);
    expect((await tokenFetch(second, token.token)('/tenants')).status).toBe(200);
    expect((await sessionFetch(t, s)('/tenants')).status).toBe(401);
  });
});

describe('the demo operator and what is never logged', () => {
  it('the demo operator of a first start signs in with its one-time password, as city-admin of the demo city', async () => {
    const demo = await seedDemo(t.rt, `demo-${Date.now()}`);
    const operator = await seedDemoOperator(t.rt, demo.tenant.id);
    secrets.push(operator.password, demo.partner.apiKey);
    const s = await signIn(t, operator.email, operator.password);
    secrets.push(s.cookie.split('=')[1]!, s.csrfToken);
    const body = (await (await sessionFetch(t, s)('/session')).json()) as { operator: { grants: unknown[] } };
    expect(body.operator.grants).toEqual([{ tenantId: demo.tenant.id, tenantName: demo.tenant.name, role: 'city-admin' }]);
  });

  it('never writes a password, a session id, a CSRF token or a token to the logs or the audit log', async () => {
    const logs = `${t.logs.text}\n${second.logs.text}`;
    expect(logs.length).toBeGreaterThan(1000);
    expect(logs).toContain('"request"');
    const audit = JSON.stringify(await t.rt.db.selectFrom('audit_log').selectAll().execute());
    const found = secrets.filter((s) => logs.includes(s) || audit.includes(s));
    expect(found).toEqual([]);
    recordReliability('Security: operators and sessions', {
      item: 'passwords, session ids, CSRF tokens and admin tokens in the logs (debug level) and the audit log',
      figure: `0 of ${secrets.length} found`,
      detail: 'every secret handed out or typed in test/operators/sessions.test.ts searched for in two instances\' log output and every audit row',
    });
  });
});
