import telemetryDocument from '../../generated/openapi/telemetry.json' with { type: 'json' };
import { TELEMETRY_OPERATIONS } from '../handlers/telemetry.js';
import { authenticateTelemetry, type TelemetryPrincipal } from '../services/city-data/index.js';
import { createOpenApi } from '../lib/openapi.js';
import { enforceRateLimit, rateLimitHeaders } from './rate-limit.js';
import type { ApiSurface } from './surface.js';

/** The telemetry ingestion API of openapi/telemetry.yaml under /api/telemetry. */
export async function createTelemetrySurface(): Promise<ApiSurface<TelemetryPrincipal>> {
  const document = telemetryDocument as unknown as Record<string, unknown>;
  const api = await createOpenApi(document);
  const declared = api.getOperations().map((o) => o.operationId!);
  const missing = declared.filter((id) => !TELEMETRY_OPERATIONS[id]);
  if (missing.length > 0) throw new Error(`telemetry operations without a handler: ${missing.join(', ')}`);
  return {
    name: 'telemetry',
    basePath: '/api/telemetry',
    api,
    document,
    authenticate: (deps, headers) => authenticateTelemetry(deps.db, headers),
    // A telemetry key may call every telemetry operation, for its own tenant only.
    authorize: () => {},
    // Per key, like partner keys: the service default quota (LUMEN_RATE_LIMIT_PER_MINUTE).
    rateLimit: async (deps, principal) => {
      return rateLimitHeaders(await enforceRateLimit(deps.db, `telemetry:${principal.keyPrefix}`, deps.config.rateLimitPerMinute));
    },
    handlers: TELEMETRY_OPERATIONS,
  };
}
