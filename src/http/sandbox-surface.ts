import sandboxDocument from '../../generated/openapi/sandbox.json' with { type: 'json' };
import { triggerSandboxEvent } from '../handlers/sandbox.js';
import { authenticatePartner, type PartnerPrincipal } from './auth.js';
import { createOpenApi } from '../lib/openapi.js';
import { enforceRateLimit, rateLimitHeaders } from './rate-limit.js';
import type { ApiSurface, Handler } from './surface.js';

const HANDLERS: Record<string, Handler<PartnerPrincipal>> = { triggerSandboxEvent };

/**
 * The partner sandbox of openapi/sandbox.yaml under /api/external/sandbox: partner keys,
 * the partner's rate limit; the service answers 404 to a tenant that is not a sandbox.
 * Listed before the partner surface, whose base path contains this one.
 */
export async function createSandboxSurface(): Promise<ApiSurface<PartnerPrincipal>> {
  const document = sandboxDocument as unknown as Record<string, unknown>;
  const api = await createOpenApi(document);
  const missing = api.getOperations().map((o) => o.operationId!).filter((id) => !HANDLERS[id]);
  if (missing.length > 0) throw new Error(`sandbox operations without a handler: ${missing.join(', ')}`);
  return {
    name: 'sandbox',
    basePath: '/api/external/sandbox',
    api,
    document,
    authenticate: (deps, headers) => authenticatePartner(deps.db, headers),
    authorize: () => {},
    rateLimit: async (deps, principal) => {
      return rateLimitHeaders(await enforceRateLimit(deps.db, principal.externalSystemId, principal.rateLimitPerMinute ?? deps.config.rateLimitPerMinute));
    },
    handlers: HANDLERS,
  };
}
