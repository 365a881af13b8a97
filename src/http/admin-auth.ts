import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Config } from '../config.js';
import { AppError } from '../lib/errors.js';
import { keyMatches, parseKey } from '../lib/api-key.js';
import type { Executor } from '../db/database.js';
import type { Actor } from '../services/audit/index.js';
import { findLiveAdminToken } from '../db/repositories/operators/admin-token.repository.js';
import { accessOfToken, resumeSession, SESSION_COOKIE, type AdminAccess } from '../services/operators/index.js';
import type { ClientInfo } from './surface.js';

/** Who is calling the admin API: resolved from `Authorization: Bearer lmn_adm_...` or the console's session cookie, on every request. */
export interface AdminPrincipal {
  /** The admin token that carried the request; null for a console session. */
  readonly tokenId: string | null;
  readonly tokenName: string | null;
  /** As recorded in status history and the audit log. */
  readonly actor: Actor;
  /** Tenants and roles this caller may reach (every handler checks it: services/operators/access.ts). */
  readonly access: AdminAccess;
  /** The operator behind a session or an operator's token; null for a service token. */
  readonly operator: { readonly id: string; readonly email: string; readonly name: string } | null;
  /** The console session, when the request came with its cookie. */
  readonly session: { readonly id: string; readonly csrfToken: string } | null;
}

const CHALLENGE = { 'www-authenticate': 'Bearer realm="lumen-admin"' };
const SAFE_METHODS = new Set(['get', 'head', 'options']);

function bearer(headers: IncomingHttpHeaders): string | undefined {
  const raw = headers.authorization;
  if (!raw) return undefined;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(raw);
  return m?.[1];
}

/** The value of one cookie of the request, or undefined. */
export function cookieValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  for (const part of (headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * Origins a browser request may come from: LUMEN_PUBLIC_URL's, only. Without it (outside
 * production, where it is required) a loopback origin of any port (`http://localhost:8080`,
 * `http://127.0.0.1:…`, `http://[::1]:…`): a developer's own machine. Never the origin of
 * the Host header, which the client writes itself.
 */
export function sameOrigin(config: Config, headers: IncomingHttpHeaders, _client: ClientInfo): boolean {
  const origin = headers.origin;
  if (typeof origin !== 'string' || origin === 'null') return false;
  if (config.publicOrigin !== null) return origin === config.publicOrigin;
  return /^https?:\/\/(localhost|127(?:\.\d{1,3}){3}|\[::1\])(:\d{1,5})?$/i.test(origin);
}

function csrfMatches(presented: string | string[] | undefined, expected: string): boolean {
  if (typeof presented !== 'string') return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * 401 invalid-admin-token for a missing, malformed, unknown, revoked or expired token,
 * a token whose operator is disabled, a partner API key (whatever header carries it),
 * and a session cookie that names no live session. A request with the session cookie
 * that changes state (POST, PUT, PATCH, DELETE) must come from Lumen's own origin and
 * carry the session's X-CSRF-Token (403 csrf-failed otherwise); Bearer requests are
 * not sent by browsers on their own and need neither. Nothing is cached: every request
 * reads the token or session row and its operator.
 */
export async function authenticateAdmin(db: Executor, config: Config, headers: IncomingHttpHeaders, request: { method: string; client: ClientInfo }): Promise<AdminPrincipal> {
  if (headers.authorization !== undefined || headers['x-api-key'] !== undefined) return authenticateToken(db, headers);
  const sessionId = cookieValue(headers, SESSION_COOKIE);
  if (!sessionId) throw new AppError('invalid-admin-token', {}, undefined, CHALLENGE);
  const live = await resumeSession(db, sessionId);
  if (!live) throw new AppError('invalid-admin-token', {}, undefined, CHALLENGE);
  if (!SAFE_METHODS.has(request.method.toLowerCase())) {
    if (!sameOrigin(config, headers, request.client) || !csrfMatches(headers['x-csrf-token'], live.session.csrf_token)) throw new AppError('csrf-failed');
  }
  const operator = { id: live.operator.id, email: live.operator.email, name: live.operator.name };
  return {
    tokenId: null,
    tokenName: null,
    actor: { kind: 'operator', name: operator.email, operatorId: operator.id, access: live.access },
    access: live.access,
    operator,
    session: { id: live.session.id, csrfToken: live.session.csrf_token },
  };
}

async function authenticateToken(db: Executor, headers: IncomingHttpHeaders): Promise<AdminPrincipal> {
  const presented = bearer(headers);
  const parsed = presented ? parseKey(presented) : null;
  if (!presented || !parsed || parsed.kind !== 'admin') throw new AppError('invalid-admin-token', {}, undefined, CHALLENGE);
  const row = await findLiveAdminToken(db, parsed.keyId);
  if (!row || !keyMatches(presented, row.key_hash)) throw new AppError('invalid-admin-token', {}, undefined, CHALLENGE);
  const access = await accessOfToken(db, row);
  if (!access) throw new AppError('invalid-admin-token', {}, undefined, CHALLENGE);
  const operator = row.operator_id && row.owner_email && row.owner_name ? { id: row.operator_id, email: row.owner_email, name: row.owner_name } : null;
  const actor: Actor = operator
    ? { kind: 'operator', name: operator.email, tokenId: row.id, operatorId: operator.id, access }
    : { kind: 'admin-token', name: row.name, tokenId: row.id, access };
  return { tokenId: row.id, tokenName: row.name, actor, access, operator, session: null };
}
