import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { createOrderFromAlert, discardAlert, getAlert, getAlertDuplicates, getAlertTimeline, linkAlert, listAlerts, reclassifyAlert, setAlertLocation } from './alerts.js';
import { dismissAttachmentFailure, getAlertAttachment, listAttachmentFailures, retryAttachmentFailure } from './attachments.js';
import { listAuditEntries } from './audit.js';
import { dismissRejectedInboundItem, getPartnerPolling, listRejectedInboundItems, pollPartnerNow, retryRejectedInboundItem } from './inbound-items.js';
import { createPartner, getPartner, listPartners, rotatePartnerKey, updatePartner } from './partners.js';
import { listMapPoles } from './poles.js';
import { applyPartnerReasonMapping, createReason, listPartnerReasonCodes, listReasons, mapPartnerReasonCode, unmapPartnerReasonCode } from './reasons.js';
import { assignServiceOrder, cancelServiceOrder, completeServiceOrder, getServiceOrder, getServiceOrderTimeline, listServiceOrders, setServiceOrderPole, startServiceOrder } from './service-orders.js';
import { createTeam, listTeams } from './teams.js';
import { getTenant, getTenantAttention, listTenants, setTenantIntakePolicy } from './tenants.js';
import { getWebhookDelivery, listWebhookDeliveries, redeliverDeadWebhooks, redeliverWebhook, redeliverWebhooksSince } from './webhook-deliveries.js';

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
  getTenantAttention,
  // Teams
  listTeams,
  createTeam,
  // Alerts (triage)
  listAlerts,
  getAlert,
  getAlertTimeline,
  getAlertDuplicates,
  createOrderFromAlert,
  linkAlert,
  discardAlert,
  reclassifyAlert,
  setAlertLocation,
  // Attachments (of alerts)
  getAlertAttachment,
  listAttachmentFailures,
  retryAttachmentFailure,
  dismissAttachmentFailure,
  // ServiceOrders
  listServiceOrders,
  getServiceOrder,
  getServiceOrderTimeline,
  setServiceOrderPole,
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
  // Poles
  listMapPoles,
  // Reasons
  listReasons,
  createReason,
  listPartnerReasonCodes,
  mapPartnerReasonCode,
  unmapPartnerReasonCode,
  applyPartnerReasonMapping,
  // Audit
  listAuditEntries,
  // InboundItems (partner polling)
  getPartnerPolling,
  pollPartnerNow,
  listRejectedInboundItems,
  dismissRejectedInboundItem,
  retryRejectedInboundItem,
  // WebhookDeliveries (events)
  listWebhookDeliveries,
  getWebhookDelivery,
  redeliverWebhook,
  redeliverWebhooksSince,
  redeliverDeadWebhooks,
};
