import type { Scope } from '../db/tables/foundation.js';
import type { PartnerPrincipal } from '../http/auth.js';
import type { Handler } from '../http/surface.js';
import { getServiceOrder, listPoles, listServiceOrders } from './city-data.js';
import { listEvents } from './events.js';
import { getHealth } from './health.js';
import { createServiceOrder, getRequest } from './intake.js';
import {
  getIntegration,
  getIntegrationDelivery,
  listIntegrationAttachmentFailures,
  listIntegrationDeliveries,
  listIntegrationRejectedItems,
  redeliverDeadIntegrationDeliveries,
  redeliverIntegrationDelivery,
  rotateIntegrationWebhookSecret,
  sendIntegrationTestEvent,
} from './integration.js';

/** Self-service: the key's own integration only (src/services/integration). */
const MANAGE: readonly Scope[] = ['canManageIntegration'];

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
  getIntegration: { scopes: MANAGE, handler: getIntegration },
  listIntegrationDeliveries: { scopes: MANAGE, handler: listIntegrationDeliveries },
  getIntegrationDelivery: { scopes: MANAGE, handler: getIntegrationDelivery },
  redeliverIntegrationDelivery: { scopes: MANAGE, handler: redeliverIntegrationDelivery },
  redeliverDeadIntegrationDeliveries: { scopes: MANAGE, handler: redeliverDeadIntegrationDeliveries },
  sendIntegrationTestEvent: { scopes: MANAGE, handler: sendIntegrationTestEvent },
  rotateIntegrationWebhookSecret: { scopes: MANAGE, handler: rotateIntegrationWebhookSecret },
  listIntegrationRejectedItems: { scopes: MANAGE, handler: listIntegrationRejectedItems },
  listIntegrationAttachmentFailures: { scopes: MANAGE, handler: listIntegrationAttachmentFailures },
};
