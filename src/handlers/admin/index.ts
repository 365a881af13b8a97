import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { createOrderFromAlert, discardAlert, getAlert, linkAlert, listAlerts, reclassifyAlert, setAlertLocation } from './alerts.js';
import { listAuditEntries } from './audit.js';
import { getPartnerPolling, listRejectedInboundItems, pollPartnerNow } from './inbound-items.js';
import { createPartner, getPartner, listPartners, rotatePartnerKey, rotatePartnerWebhookSecret, updatePartner } from './partners.js';
import { assignServiceOrder, cancelServiceOrder, completeServiceOrder, getServiceOrder, startServiceOrder } from './service-orders.js';
import { createTeam, listTeams } from './teams.js';
import { getTenant, listTenants, setTenantIntakePolicy } from './tenants.js';
import { getWebhookDelivery, listWebhookDeliveries, redeliverWebhook, redeliverWebhooksSince } from './webhook-deliveries.js';

/**
 * Every operation of openapi/admin.yaml, by operationId. One file per tag exports
 * handlers named exactly as their operationIds; add one line per operation here.
 * Every valid admin token may call every operation.
 */
export const ADMIN_OPERATIONS: Readonly<Record<string, Handler<AdminPrincipal>>> = {
  // Tenants
  listTenants,
  getTenant,
  setTenantIntakePolicy,
  // Teams
  listTeams,
  createTeam,
  // Alerts (triage)
  listAlerts,
  getAlert,
  createOrderFromAlert,
  linkAlert,
  discardAlert,
  reclassifyAlert,
  setAlertLocation,
  // ServiceOrders
  getServiceOrder,
  assignServiceOrder,
  startServiceOrder,
  completeServiceOrder,
  cancelServiceOrder,
  // Partners
  listPartners,
  createPartner,
  getPartner,
  updatePartner,
  rotatePartnerKey,
  rotatePartnerWebhookSecret,
  // Audit
  listAuditEntries,
  // InboundItems (partner polling)
  getPartnerPolling,
  pollPartnerNow,
  listRejectedInboundItems,
  // WebhookDeliveries (events)
  listWebhookDeliveries,
  getWebhookDelivery,
  redeliverWebhook,
  redeliverWebhooksSince,
};
