import type { Health } from '../../generated/partner/types.gen.js';
import type { PartnerPrincipal } from '../http/auth.js';
import type { Handler } from '../http/surface.js';

/** GET /api/external/health: who this key is, so a partner can check the city before reading. */
export const getHealth: Handler<PartnerPrincipal> = async ({ deps, principal }) => {
  const body: Health = {
    status: 'ok',
    externalSystemCode: principal.externalSystemCode,
    environment: deps.config.environment,
    tenantId: principal.tenantId,
    ibgeCode: principal.ibgeCode,
    serverTime: new Date().toISOString(),
  };
  return { status: 200, body };
};
