import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { createOrderFromAlert, discardAlert, getAlert, linkAlert, listAlerts, reclassifyAlert, setAlertLocation } from './alerts.js';
import { listAuditEntries } from './audit.js';
import { getPartnerPolling, listRejectedInboundItems, pollPartnerNow } from './inbound-items.js';
import { createPartner, getPartner, listPartners, rotatePartnerKey, rotatePartnerWebhookSecret, updatePartner } from './partners.js';
import { assignServiceOrder, cancelServiceOrder, completeServiceOrder, getServiceOrder, startServiceOrder } from './service-orders.js';
import { createTeam, listTeams } from './teams.js';
import { createTenant, getTenant, listTenants, setTenantIntakePolicy } from './tenants.js';
import { changeSessionPassword, createSession, deleteSession, getSession } from './session.js';
import { createOperator, disableOperator, enableOperator, getOperator, grantOperatorRole, listOperators, revokeOperatorRole } from './operators.js';
import { createAdminToken, listAdminTokens, revokeAdminToken } from './admin-tokens.js';
import { getWebhookDelivery, listWebhookDeliveries, redeliverWebhook, redeliverWebhooksSince } from './webhook-deliveries.js';

/**
 * Every operation of openapi/admin.yaml, by operationId. One file per tag exports
 * handlers named exactly as their operationIds; add one line per operation here.
 * The role each operation needs is declared in the document (x-lumen-role) and checked
 * by the admin surface and, on the tenant of the rows touched, by the services.
 */
export const ADMIN_OPERATIONS: Readonly<Record<string, Handler<AdminPrincipal>>> = {
  // Tenants
  listTenants,
  createTenant,
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
  // Session (console sign-in)
  createSession,
  getSession,
  deleteSession,
  changeSessionPassword,
  // Operators
  listOperators,
  createOperator,
  getOperator,
  disableOperator,
  enableOperator,
  grantOperatorRole,
  revokeOperatorRole,
  // AdminTokens
  listAdminTokens,
  createAdminToken,
  revokeAdminToken,
};
