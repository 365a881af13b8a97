import { randomBytes } from 'node:crypto';
import type { ServiceDeps } from '../../src/services/deps.js';
import { cliActor } from '../../src/services/audit/index.js';
import { createAdminToken, createOperator, type CreateAdminTokenInput, type TenantRole } from '../../src/services/operators/index.js';
import type { TestApp } from '../support/app.js';

let counter = 0;

export interface MadeOperator {
  id: string;
  email: string;
  password: string;
}

/** An operator made as the CLI would, with a known password. */
export async function makeOperator(deps: ServiceDeps, o: { grants?: { tenantId: string; role: TenantRole }[]; platformAdmin?: boolean; email?: string; name?: string } = {}): Promise<MadeOperator> {
  const email = o.email ?? `op-${process.pid}-${++counter}-${randomBytes(3).toString('hex')}@city.example`;
  const password = `pw-${randomBytes(12).toString('base64url')}`;
  const { operator } = await createOperator(deps, cliActor(), { email, name: o.name ?? `Operator ${counter}`, platformAdmin: o.platformAdmin ?? false, grants: o.grants ?? [], password });
  return { id: operator.id, email: operator.email, password };
}

/** A token issued on the server (CLI actor), e.g. `{ operator: email }` or a service token with grants. */
export async function makeToken(deps: ServiceDeps, input: Omit<CreateAdminTokenInput, 'name'> & { name?: string }): Promise<{ id: string; token: string }> {
  const t = await createAdminToken(deps, cliActor(), { name: input.name ?? `token-${++counter}`, ...input });
  return { id: t.id, token: t.token };
}

export interface Session {
  cookie: string;
  csrfToken: string;
  setCookie: string;
}

/** Signs in through the API, as the console does. */
export async function signIn(t: TestApp, email: string, password: string): Promise<Session> {
  const res = await t.fetch('/api/admin/session', { method: 'POST', json: { email, password } });
  if (res.status !== 200) throw new Error(`sign-in of ${email} answered ${res.status}: ${await res.text()}`);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const body = (await res.json()) as { csrfToken: string };
  return { cookie: setCookie.split(';')[0]!, csrfToken: body.csrfToken, setCookie };
}

/** A fetch against /api/admin as the console: the cookie, its own Origin and the CSRF header on changes. */
export function sessionFetch(t: TestApp, s: Session, o: { csrf?: boolean; origin?: string | null } = {}) {
  return (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const method = init.method ?? (init.json !== undefined ? 'POST' : 'GET');
    const headers = new Headers(init.headers);
    headers.set('cookie', s.cookie);
    const origin = o.origin === undefined ? t.baseUrl : o.origin;
    if (origin !== null && method !== 'GET') headers.set('origin', origin);
    if (o.csrf !== false && method !== 'GET') headers.set('x-csrf-token', s.csrfToken);
    return t.fetch(`/api/admin${path}`, { ...init, headers, method });
  };
}

/** A fetch against /api/admin with a bearer token. */
export function tokenFetch(t: TestApp, token: string) {
  return (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${token}`);
    return t.fetch(`/api/admin${path}`, { ...init, headers, method: init.method ?? (init.json !== undefined ? 'POST' : 'GET') });
  };
}
