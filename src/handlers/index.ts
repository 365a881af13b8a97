import type { Scope } from '../db/tables/foundation.js';
import type { PartnerPrincipal } from '../http/auth.js';
import type { Handler } from '../http/surface.js';
import { getServiceOrder, listPoles, listServiceOrders } from './city-data.js';
import { listEvents } from './events.js';
import { getHealth } from './health.js';
import { createServiceOrder, getRequest } from './intake.js';

interface PartnerOperation {
  /** Any one of these scopes is enough; empty means any valid key (N3). */
  readonly scopes: readonly Scope[];
  readonly handler: Handler<PartnerPrincipal>;
}

/** Every operation of openapi/partner.yaml, by operationId, with the scopes of N3. */
export const PARTNER_OPERATIONS: Readonly<Record<string, PartnerOperation>> = {
  getHealth: { scopes: [], handler: getHealth },
  createServiceOrder: { scopes: ['canCreateServiceOrders', 'canCreateAlerts'], handler: createServiceOrder },
  listPoles: { scopes: ['canReadCityData'], handler: listPoles },
  listServiceOrders: { scopes: ['canReadCityData'], handler: listServiceOrders },
  getServiceOrder: { scopes: ['canReadCityData'], handler: getServiceOrder },
  getRequest: { scopes: ['canCreateServiceOrders', 'canCreateAlerts'], handler: getRequest },
  listEvents: { scopes: [], handler: listEvents },
};
