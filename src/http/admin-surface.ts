import adminDocument from '../../generated/openapi/admin.json' with { type: 'json' };
import { AppError } from '../lib/errors.js';
import { holdsRoleSomewhere, isTenantRole, requirePlatformAdmin } from '../services/operators/index.js';
import { ADMIN_OPERATIONS } from '../handlers/admin/index.js';
import { authenticateAdmin, type AdminPrincipal } from './admin-auth.js';
import { createOpenApi } from '../lib/openapi.js';
import type { ApiSurface } from './surface.js';

/**
 * The role each operation needs (`x-lumen-role` in openapi/admin.yaml): a tenant role
 * (viewer, triager, city-admin) held on the tenant of what it touches, `platform-admin`,
 * `operator` (any signed-in caller; the service decides what it may see) or `public`
 * (no credentials: the console's sign-in).
 */
export type OperationRole = 'public' | 'operator' | 'viewer' | 'triager' | 'city-admin' | 'platform-admin';
const ROLES: readonly OperationRole[] = ['public', 'operator', 'viewer', 'triager', 'city-admin', 'platform-admin'];

/** The administrative API of openapi/admin.yaml under /api/admin. */
export async function createAdminSurface(): Promise<ApiSurface<AdminPrincipal>> {
  const document = adminDocument as unknown as Record<string, unknown>;
  const api = await createOpenApi(document);
  const declared = api.getOperations().map((o) => o.operationId!);
  const missing = declared.filter((id) => !ADMIN_OPERATIONS[id]);
  if (missing.length > 0) throw new Error(`admin operations without a handler: ${missing.join(', ')}`);
  const roles = new Map<string, OperationRole>();
  for (const op of api.getOperations()) {
    const role = (op as unknown as Record<string, unknown>)['x-lumen-role'];
    if (!(ROLES as readonly unknown[]).includes(role)) throw new Error(`admin operation ${op.operationId} declares no x-lumen-role (one of ${ROLES.join(', ')})`);
    roles.set(op.operationId!, role as OperationRole);
  }
  return {
    name: 'admin',
    basePath: '/api/admin',
    api,
    document,
    authenticate: (deps, headers, request) => authenticateAdmin(deps.db, deps.config, headers, request),
    isPublic: (operationId) => roles.get(operationId) === 'public',
    /**
     * A first, coarse gate from the operation's role: platform-admin operations need a
     * platform admin; triager and city-admin operations need that role on some tenant.
     * The service then checks the role on the tenant of the very row it acts on (a
     * tenant the caller cannot see answers not-found, as an unknown id).
     */
    authorize: (principal, operationId) => {
      const role = roles.get(operationId);
      if (role === 'platform-admin') requirePlatformAdmin(principal.access);
      else if (role !== 'viewer' && isTenantRole(role) && !holdsRoleSomewhere(principal.access, role)) throw new AppError('forbidden', { scopes: role });
    },
    handlers: ADMIN_OPERATIONS,
  };
}
