import type { PartnerPrincipal } from '../http/auth.js';
import type { Handler } from '../http/surface.js';
import { parseIdempotencyKey, readPartnerRequest, submitIntake } from '../services/intake/index.js';

/** POST /api/external/service-orders: register a request (2.5/2.6, N1). A replay says so in `Idempotent-Replayed: true`. */
export const createServiceOrder: Handler<PartnerPrincipal> = async ({ deps, principal, request, lang, signal }) => {
  const idempotencyKey = parseIdempotencyKey(request.headers['idempotency-key']);
  const result = await submitIntake(deps, principal, request.body, { idempotencyKey, lang, signal, checkedByHttp: true });
  return { status: result.status, body: result.body, ...(result.replayed ? { headers: { 'idempotent-replayed': 'true' } } : {}) };
};

/** GET /api/external/requests/{protocolNumber}: a request this partner sent, as it stands now. */
export const getRequest: Handler<PartnerPrincipal> = async ({ deps, principal, request, lang }) => ({
  status: 200,
  body: await readPartnerRequest(deps, principal, request.params.protocolNumber!, lang),
});
