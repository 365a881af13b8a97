import adminDocument from '../../generated/openapi/admin.json' with { type: 'json' };
import { ADMIN_OPERATIONS } from '../handlers/admin/index.js';
import { authenticateAdmin, type AdminPrincipal } from './admin-auth.js';
import { createOpenApi } from './openapi.js';
import type { ApiSurface } from './surface.js';

/** The administrative API of openapi/admin.yaml under /api/admin. */
export async function createAdminSurface(): Promise<ApiSurface<AdminPrincipal>> {
  const document = adminDocument as unknown as Record<string, unknown>;
  const api = await createOpenApi(document);
  const declared = api.getOperations().map((o) => o.operationId!);
  const missing = declared.filter((id) => !ADMIN_OPERATIONS[id]);
  if (missing.length > 0) throw new Error(`admin operations without a handler: ${missing.join(', ')}`);
  return {
    name: 'admin',
    basePath: '/api/admin',
    api,
    document,
    authenticate: (deps, headers) => authenticateAdmin(deps.db, headers),
    // Every admin token may call every admin operation.
    authorize: () => {},
    handlers: ADMIN_OPERATIONS,
  };
}
