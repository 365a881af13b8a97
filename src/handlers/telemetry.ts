import type { TelemetryBatch, TelemetryResult } from '../../generated/telemetry/types.gen.js';
import type { Handler } from '../http/surface.js';
import { ingestReports, type TelemetryPrincipal } from '../services/city-data/index.js';

/** POST /api/telemetry/reports */
export const ingestTelemetryReports: Handler<TelemetryPrincipal> = async ({ deps, principal, request }) => {
  const batch = request.body as TelemetryBatch;
  const body: TelemetryResult = await ingestReports(deps, principal.tenantId, batch.reports);
  const unknown = body.received - body.applied - body.stale - body.rejected.length;
  deps.metrics.telemetry({ applied: body.applied, stale: body.stale, unknown, rejected: body.rejected.length });
  return { status: 200, body };
};

/** Every operation of openapi/telemetry.yaml, by operationId. */
export const TELEMETRY_OPERATIONS: Readonly<Record<string, Handler<TelemetryPrincipal>>> = {
  ingestTelemetryReports,
};
