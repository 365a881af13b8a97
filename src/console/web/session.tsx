/**
 * Who is signed in, the city being worked on, and what the operator's role there
 * allows. The console offers only what the role allows; the API refuses the rest
 * anyway (the console is never the guard).
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { bearerToken, call, sessionRequest, setCsrfToken } from './api.js';

export type Role = 'viewer' | 'triager' | 'city-admin';

export interface Grant {
  tenantId: string;
  tenantName: string;
  role: Role;
}

export interface Operator {
  id: string;
  email: string;
  name: string;
  platformAdmin: boolean;
  grants: Grant[];
}

interface SessionBody {
  operator: Operator;
  csrfToken: string;
}

function isSessionBody(json: unknown): json is SessionBody {
  const o = json as SessionBody | null;
  return !!o && typeof o === 'object' && !!o.operator && Array.isArray(o.operator.grants) && typeof o.csrfToken === 'string';
}

/**
 * The current operator: from the session cookie (GET /api/admin/session), or, for a
 * tab given an admin token, a platform-wide operator over every tenant (what such a
 * token may do). null when nobody is signed in.
 */
export async function loadSession(): Promise<Operator | null> {
  if (bearerToken()) {
    const tenants = await call('listTenants');
    return {
      id: 'token',
      email: '',
      name: 'admin token',
      platformAdmin: true,
      grants: tenants.items.map((t) => ({ tenantId: t.id, tenantName: t.name, role: 'city-admin' as const })),
    };
  }
  const res = await sessionRequest('GET');
  // 401: nobody is signed in; 404: a server without sessions (admin tokens only).
  if (res.status !== 200 || !isSessionBody(res.json)) return null;
  setCsrfToken(res.json.csrfToken);
  return res.json.operator;
}

export async function signIn(email: string, password: string): Promise<Operator> {
  const res = await sessionRequest('POST', { email, password });
  if (!isSessionBody(res.json)) throw new Error('unexpected answer');
  setCsrfToken(res.json.csrfToken);
  return res.json.operator;
}

export async function signOut(): Promise<void> {
  await sessionRequest('DELETE');
  setCsrfToken(null);
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
