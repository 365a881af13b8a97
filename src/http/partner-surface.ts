import partnerDocument from '../../generated/openapi/partner.json' with { type: 'json' };
import { PARTNER_OPERATIONS } from '../handlers/index.js';
import { authenticatePartnerCounted, requireScope, type PartnerPrincipal } from './auth.js';
import { createOpenApi } from '../lib/openapi.js';
import { rateLimitHeaders } from './rate-limit.js';
import { InProgressLimit } from './in-progress.js';
import type { ApiSurface, Handler } from './surface.js';

/** The partner API of openapi/partner.yaml under /api/external. */
export async function createPartnerSurface(): Promise<ApiSurface<PartnerPrincipal>> {
  // Intake requests in progress per key (POST /service-orders), in this process.
  let intake: InProgressLimit | null = null;
  const document = partnerDocument as unknown as Record<string, unknown>;
  const api = await createOpenApi(document);
  const declared = api.getOperations().map((o) => o.operationId!);
  const missing = declared.filter((id) => !PARTNER_OPERATIONS[id]);
  if (missing.length > 0) throw new Error(`partner operations without a handler: ${missing.join(', ')}`);
  const handlers: Record<string, Handler<PartnerPrincipal>> = Object.fromEntries(Object.entries(PARTNER_OPERATIONS).map(([id, op]) => [id, op.handler]));
  return {
    name: 'partner',
    basePath: '/api/external',
    api,
    document,
    // The key and the rate limit (every operation, /events included: its own minimum
    // interval applies on top) in one statement.
    // From the in-process key cache and rate counters when this process runs them (lumen serve).
    authenticate: (deps, headers, { operationId }) => {
      const opts = { anyOfScopes: PARTNER_OPERATIONS[operationId]?.scopes ?? [], defaultLimitPerMinute: deps.config.rateLimitPerMinute };
      return deps.partnerKeys ? deps.partnerKeys.authenticate(headers, opts) : authenticatePartnerCounted(deps.db, headers, opts);
    },
    authorize: (principal, operationId) => requireScope(principal, PARTNER_OPERATIONS[operationId]?.scopes ?? []),
    // Counted by authenticate; this only reports the quota on the answer, and when the
    // key is a rotated one still working for its overlap, when it stops.
    rateLimit: async (_deps, principal) => ({
      ...(principal.quota ? rateLimitHeaders(principal.quota) : {}),
      ...(principal.keyExpiresAt ? { 'lumen-key-expires': principal.keyExpiresAt.toISOString() } : {}),
    }),
    admit: (deps, principal, operationId) => {
      if (operationId !== 'createServiceOrder') return null;
      intake ??= new InProgressLimit(deps.config.intakeConcurrencyPerKey);
      return intake.enter(principal.externalSystemId);
    },
    handlers,
  };
}
