/**
 * Who is signed in, the city being worked on, and what the operator's role there
 * allows. The console offers only what the role allows; the API refuses the rest
 * anyway (the console is never the guard).
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { ApiError, call, setCsrfToken, type types } from './api.js';
import { forgetAnswers } from './offline/cache.js';

export type Role = types.OperatorGrant['role'];
export type Grant = types.OperatorGrant;
export type Operator = Pick<types.Operator, 'id' | 'email' | 'name' | 'platformAdmin' | 'grants'>;

/**
 * The current operator, from the session cookie (GET /api/admin/session); null when
 * nobody is signed in.
 */
export async function loadSession(): Promise<Operator | null> {
  try {
    const session = await call('getSession');
    setCsrfToken(session.csrfToken);
    return await withEveryTenant(session.operator);
  } catch (err) {
    // 401: nobody is signed in (or the session ended).
    if (err instanceof ApiError && err.status === 401) return null;
    throw err;
  }
}

export async function signIn(email: string, password: string): Promise<Operator> {
  const session = await call('createSession', { body: { email, password } });
  setCsrfToken(session.csrfToken);
  return withEveryTenant(session.operator);
}

/** A platform admin holds every role on every tenant: the city switcher lists them all. */
async function withEveryTenant(operator: Operator): Promise<Operator> {
  if (!operator.platformAdmin) return operator;
  const tenants = await call('listTenants');
  return { ...operator, grants: tenants.items.map((t) => ({ tenantId: t.id, tenantName: t.name, role: 'city-admin' as const })) };
}

export async function signOut(): Promise<void> {
  try {
    await call('deleteSession');
  } finally {
    setCsrfToken(null);
    await forgetAnswers().catch(() => undefined);
  }
}

const RANK: Record<Role | 'platform-admin', number> = { viewer: 1, triager: 2, 'city-admin': 3, 'platform-admin': 4 };

export type Ability = 'read' | 'triage' | 'administer' | 'platform';

const NEEDS: Record<Ability, number> = { read: 1, triage: 2, administer: 3, platform: 4 };

export interface SessionState {
  operator: Operator;
  tenantId: string;
  setTenant(tenantId: string): void;
  signOut(): void;
  /** The operator's role in the current city. */
  role: Role | 'platform-admin';
  can(ability: Ability, tenantId?: string): boolean;
}

export function roleIn(operator: Operator, tenantId: string): Role | 'platform-admin' | null {
  if (operator.platformAdmin) return 'platform-admin';
  return operator.grants.find((g) => g.tenantId === tenantId)?.role ?? null;
}

export function canIn(operator: Operator, tenantId: string, ability: Ability): boolean {
  const role = roleIn(operator, tenantId);
  return role !== null && RANK[role] >= NEEDS[ability];
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in page');
  return s;
}

const TENANT_KEY = 'lumen.tenant';

export function rememberedTenant(operator: Operator): string {
  const saved = localStorage.getItem(TENANT_KEY);
  if (saved && operator.grants.some((g) => g.tenantId === saved)) return saved;
  return operator.grants[0]?.tenantId ?? '';
}

export function rememberTenant(tenantId: string): void {
  localStorage.setItem(TENANT_KEY, tenantId);
}
