import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '../../lib/errors.js';
import type { Executor } from '../../db/database.js';
import { findOperator, findOperatorByEmail, grantsOfOperators, type OperatorRow } from '../../db/repositories/operators/operator.repository.js';
import { clearSignInFailure, countSignInFailure, endSession, endSessionsOf, findLiveSession, insertSession, signInFailures, sweepSessionsOf, touchSession, usualAddresses, type SessionRow } from '../../db/repositories/operators/session.repository.js';
import { updateOperator } from '../../db/repositories/operators/operator.repository.js';
import { checkPassword, hashPassword } from './password.js';
import { recordAudit, type Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { accessOfOperator } from './principal.js';
import { PASSWORD_MAX_LENGTH, verifyPassword } from './password.js';
import { normalizeEmail } from './accounts.js';
import type { AdminAccess, TenantRole } from './access.js';

/** Console sessions: idle 8 h, absolute 7 days (from sign-in). */
export const SESSION_IDLE_SECONDS = 8 * 3600;
export const SESSION_ABSOLUTE_SECONDS = 7 * 24 * 3600;
export const SESSION_COOKIE = 'lumen_session';

/**
 * Failed sign-ins are counted in 15-minute windows, in the database (every instance
 * counts together), under three keys, and answered with a delay, never a lockout:
 *
 * - the e-mail (as typed, known or not) from one client address: past
 *   LUMEN_SIGN_IN_FAILURES_PER_ACCOUNT (5) failures, the next attempt from that address
 *   must wait 1 s after the last failure, then 2, 4, 8 … up to 15 minutes (429 with
 *   Retry-After). Somebody guessing from one address slows to a crawl; the operator, from
 *   anywhere else, is not affected.
 * - the client address, whatever the e-mail: past LUMEN_SIGN_IN_FAILURES_PER_ADDRESS
 *   (30), the same doubling delay for that address.
 * - the e-mail from any address (guessing spread over many addresses): past ten times
 *   the per-account limit, the same delay, except from the addresses the operator
 *   signed in from recently (its sessions of the last 30 days still on record): the right
 *   password from the operator's usual place always gets in.
 */
export const SIGN_IN_WINDOW_SECONDS = 15 * 60;
/** The longest wait one key can impose. */
const MAX_DELAY_SECONDS = 15 * 60;
/** How far back an address counts as one the operator uses. */
const USUAL_ADDRESS_DAYS = 30;

export function hashSessionId(id: string): Buffer {
  return createHash('sha256').update(id, 'utf8').digest();
}

/** What the console learns about the operator signed in (POST and GET /api/admin/session). */
export interface SessionOperatorView {
  id: string;
  email: string;
  name: string;
  platformAdmin: boolean;
  grants: { tenantId: string; tenantName: string; role: TenantRole }[];
}

export interface SessionView {
  operator: SessionOperatorView;
  csrfToken: string;
}

export async function sessionOperatorView(db: Executor, operator: OperatorRow): Promise<SessionOperatorView> {
  const grants = await grantsOfOperators(db, [operator.id]);
  return { id: operator.id, email: operator.email, name: operator.name, platformAdmin: operator.platform_admin, grants: grants.map((g) => ({ tenantId: g.tenant_id, tenantName: g.tenant_name, role: g.role })) };
}

const accountKey = (email: string): string => `account:${createHash('sha256').update(email).digest('hex')}`;
const pairKey = (email: string, address: string): string => `pair:${createHash('sha256').update(`${email}\n${address}`).digest('hex')}`;
const addressKey = (address: string): string => `address:${address}`;

/** Seconds still to wait under a key: none up to the limit, then 1, 2, 4 … (capped) after its last failure. */
function delayOf(failures: number, limit: number, secondsSinceLast: number): number {
  if (failures < limit) return 0;
  const delay = Math.min(MAX_DELAY_SECONDS, 2 ** (failures - limit));
  return Math.max(0, Math.ceil(delay - secondsSinceLast));
}

function signInRefused(): AppError {
  return new AppError('invalid-credentials');
}

export interface SignInInput {
  email: unknown;
  password: unknown;
  /** The client's address, for the per-address throttle and the audit log. */
  address: string;
  requestId?: string;
}

/**
 * The throttle's keys for an e-mail and an address (the pair first); 429 with Retry-After
 * while any of them asks for a delay (see SIGN_IN_WINDOW_SECONDS), before any password
 * is checked.
 */
async function throttleKeys(deps: ServiceDeps, email: string, address: string): Promise<string[]> {
  const perAccount = deps.config.signInFailuresPerAccount;
  const perAddress = deps.config.signInFailuresPerAddress;
  const keys = [pairKey(email, address), accountKey(email), ...(perAddress > 0 ? [addressKey(address)] : [])];
  const counts = await signInFailures(deps.db, keys, SIGN_IN_WINDOW_SECONDS);
  let wait = 0;
  for (const c of counts) {
    if (c.key.startsWith('pair:')) wait = Math.max(wait, delayOf(c.failures, perAccount, c.secondsSinceLast));
    else if (c.key.startsWith('address:')) wait = Math.max(wait, delayOf(c.failures, perAddress, c.secondsSinceLast));
    else {
      const accountWait = delayOf(c.failures, perAccount * 10, c.secondsSinceLast);
      if (accountWait > 0) {
        const operator = await findOperatorByEmail(deps.db, normalizeEmail(email) ?? '');
        const usual = operator ? await usualAddresses(deps.db, operator.id, USUAL_ADDRESS_DAYS) : [];
        if (!usual.includes(address)) wait = Math.max(wait, accountWait);
      }
    }
  }
  if (wait > 0) throw new AppError('rate-limited', { retryAfter: wait }, undefined, { 'retry-after': String(wait) });
  return keys;
}

/**
 * Signs an operator in: a new session (a new id every time), its id returned once for
 * the cookie, only its hash stored. Wrong e-mail, wrong password, no password set and a
 * disabled operator all get the same 401 after the same work (an unknown e-mail is
 * checked against a dummy hash). Past the failures allowed per account or per address
 * in the window: 429 with the seconds left, before any password is checked. Failures
 * are audited (the e-mail typed is not kept when it names no operator: it may be a
 * password typed in the wrong field).
 */
export async function signIn(deps: ServiceDeps, input: SignInInput): Promise<SessionView & { sessionId: string }> {
  const typed = typeof input.email === 'string' ? input.email.trim().toLowerCase().slice(0, 254) : '';
  const password = typeof input.password === 'string' ? input.password.slice(0, PASSWORD_MAX_LENGTH) : '';
  const keys = await throttleKeys(deps, typed, input.address);
  const email = normalizeEmail(typed);
  const operator = email ? await findOperatorByEmail(deps.db, email) : undefined;
  const matches = await verifyPassword(password, operator?.password_hash ?? null);
  const actor: Actor = { kind: 'operator', name: operator?.email ?? 'unknown', operatorId: operator?.id, requestId: input.requestId, access: { platformAdmin: false, grants: new Map() } };
  if (!operator || !matches || operator.disabled_at) {
    await deps.db.transaction().execute(async (tx) => {
      for (const key of keys) await countSignInFailure(tx, key, SIGN_IN_WINDOW_SECONDS);
      await recordAudit(tx, actor, {
        tenantId: null,
        action: 'session.sign-in-failed',
        entityType: 'operator',
        entityId: operator?.id ?? '-',
        before: null,
        after: null,
        note: `${!operator ? 'unknown account' : operator.disabled_at ? 'operator disabled' : 'wrong password'}; client ${input.address}`,
      });
    });
    throw signInRefused();
  }
  const sessionId = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(32).toString('base64url');
  await deps.db.transaction().execute(async (tx) => {
    await clearSignInFailure(tx, keys[0]!);
    await sweepSessionsOf(tx, operator.id);
    const session = await insertSession(tx, { id_hash: hashSessionId(sessionId), operator_id: operator.id, csrf_token: csrfToken, absoluteSeconds: SESSION_ABSOLUTE_SECONDS, client_address: input.address.slice(0, 100) });
    await recordAudit(tx, actor, { tenantId: null, action: 'session.sign-in', entityType: 'operator', entityId: operator.id, before: null, after: { sessionId: session.id }, note: `client ${input.address}` });
  });
  return { sessionId, csrfToken, operator: await sessionOperatorView(deps.db, operator) };
}

/** The live session a cookie names, with its operator and their access now; null when none (unknown, ended, idle, expired, operator disabled). */
export async function resumeSession(db: Executor, sessionId: string): Promise<{ session: SessionRow; operator: OperatorRow; access: AdminAccess } | null> {
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(sessionId)) return null;
  const found = await findLiveSession(db, hashSessionId(sessionId), SESSION_IDLE_SECONDS);
  if (!found) return null;
  await touchSession(db, found.session.id);
  return { ...found, access: await accessOfOperator(db, found.operator) };
}

/** Signs out: the session ends now, on every instance. */
export async function signOut(deps: ServiceDeps, actor: Actor, sessionRowId: string): Promise<void> {
  await deps.db.transaction().execute(async (tx) => {
    await endSession(tx, sessionRowId);
    await recordAudit(tx, actor, { tenantId: null, action: 'session.sign-out', entityType: 'operator', entityId: actor.operatorId ?? '-', before: null, after: { sessionId: sessionRowId } });
  });
}

/** The current session as GET /api/admin/session shows it: the operator's roles as they are now. */
export async function currentSession(deps: ServiceDeps, operatorId: string, csrfToken: string): Promise<SessionView> {
  const operator = await findOperator(deps.db, operatorId);
  if (!operator) throw new AppError('invalid-admin-token');
  return { operator: await sessionOperatorView(deps.db, operator), csrfToken };
}

/**
 * An operator changes their own password from their session: the current one is
 * checked (a wrong one counts as a failed sign-in, throttled alike: a session left open
 * must not become a way to guess it), the new one stored, and every other session of
 * theirs ends; this one stays.
 */
export async function changeOwnPassword(deps: ServiceDeps, actor: Actor, sessionRowId: string, input: { currentPassword: unknown; newPassword: unknown; address: string }): Promise<void> {
  const operator = actor.operatorId ? await findOperator(deps.db, actor.operatorId) : undefined;
  if (!operator) throw new AppError('invalid-admin-token');
  const newPassword = checkPassword(input.newPassword, '/newPassword');
  const keys = await throttleKeys(deps, operator.email, input.address);
  const current = typeof input.currentPassword === 'string' ? input.currentPassword : '';
  if (!(await verifyPassword(current, operator.password_hash))) {
    await deps.db.transaction().execute(async (tx) => {
      for (const key of keys) await countSignInFailure(tx, key, SIGN_IN_WINDOW_SECONDS);
      await recordAudit(tx, actor, { tenantId: null, action: 'session.password-refused', entityType: 'operator', entityId: operator.id, before: null, after: null, note: `wrong current password; client ${input.address}` });
    });
    throw new AppError('validation-failed', { count: 1 }, [{ pointer: '/currentPassword', message: 'is not the current password' }]);
  }
  const hash = await hashPassword(newPassword);
  await deps.db.transaction().execute(async (tx) => {
    await updateOperator(tx, operator.id, { password_hash: hash });
    const ended = await endSessionsOf(tx, operator.id, sessionRowId);
    await recordAudit(tx, actor, { tenantId: null, action: 'operator.set-password', entityType: 'operator', entityId: operator.id, before: null, after: null, note: `changed by the operator; ${ended} other session(s) ended` });
  });
}
