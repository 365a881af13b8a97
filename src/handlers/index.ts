import type { Scope } from '../db/tables/foundation.js';
import type { PartnerPrincipal } from '../http/auth.js';
import type { Handler } from '../http/surface.js';
import { AppError } from '../lib/errors.js';
import { getHealth } from './health.js';

interface PartnerOperation {
  /** Any one of these scopes is enough; empty means any valid key (N3). */
  readonly scopes: readonly Scope[];
  readonly handler: Handler<PartnerPrincipal>;
}

const notYet: Handler<PartnerPrincipal> = async () => {
  throw new AppError('unavailable');
};

/** Every operation of openapi/partner.yaml, by operationId, with the scopes of N3. */
export const PARTNER_OPERATIONS: Readonly<Record<string, PartnerOperation>> = {
  getHealth: { scopes: [], handler: getHealth },
  createServiceOrder: { scopes: ['canCreateServiceOrders', 'canCreateAlerts'], handler: notYet },
  listPoles: { scopes: ['canReadCityData'], handler: notYet },
  listServiceOrders: { scopes: ['canReadCityData'], handler: notYet },
  listEvents: { scopes: [], handler: notYet },
};
