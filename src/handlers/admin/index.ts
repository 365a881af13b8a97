import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { bulkTriageAlerts, createOrderFromAlert, discardAlert, getAlert, getAlertDuplicates, getAlertGroup, getAlertTimeline, linkAlert, listAlerts, reclassifyAlert, setAlertLocation, undoAction } from './alerts.js';
import { dismissAttachmentFailure, getAlertAttachment, listAttachmentFailures, retryAttachmentFailure } from './attachments.js';
import { listAuditEntries } from './audit.js';
import { acceptRejectedInboundItem, dismissRejectedInboundItem, getPartnerPolling, listRejectedInboundItems, pollPartnerNow, retryRejectedInboundItem } from './inbound-items.js';
import { createPartner, getPartner, listPartners, rotatePartnerKey, rotatePartnerWebhookSecret, updatePartner } from './partners.js';
import { getCityMap, getPole, listMapPoles } from './poles.js';
import { applyPartnerReasonMapping, createReason, listPartnerReasonCodes, listReasons, mapPartnerReasonCode, unmapPartnerReasonCode } from './reasons.js';
import { assignServiceOrder, cancelServiceOrder, clearPlannedVisit, setPlannedVisit, completeServiceOrder, getServiceOrder, getServiceOrderTimeline, listServiceOrders, setServiceOrderPole, startServiceOrder } from './service-orders.js';
import { createMaterial, getServiceOrderCompletion, getServiceOrderPhoto, listMaterials, updateMaterial, uploadServiceOrderPhoto } from './completion.js';
import { exportAlerts, exportAuditEntries, exportServiceOrders, getTenantReport } from './reports.js';
import { addTeamMember, createTeam, listMyTeamOrders, listOperatorTeams, listTeamMembers, listTeams, removeTeamMember } from './teams.js';
import { createTenant, getTenant, getTenantAlertGrouping, getTenantAttention, listSupplyFaults, setTenantAlertGrouping, listTenants, searchTenantPlaces, setTenantExtent, setTenantIntakePolicy } from './tenants.js';
import { changeSessionPassword, createSession, deleteSession, getSession } from './session.js';
import { createOperator, disableOperator, enableOperator, getOperator, grantOperatorRole, listOperators, resetOperatorPassword, revokeOperatorRole } from './operators.js';
import { createAdminToken, listAdminTokens, revokeAdminToken } from './admin-tokens.js';
import { getWebhookDelivery, listWebhookDeliveries, redeliverDeadWebhooks, redeliverWebhook, redeliverWebhooksSince, sendPartnerTestEvent } from './webhook-deliveries.js';

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
  getTenantAttention,
  setTenantExtent,
  searchTenantPlaces,
  // Reports
  getTenantReport,
  exportServiceOrders,
  exportAlerts,
  exportAuditEntries,
  // Teams
  listTeams,
  listTeamMembers,
  addTeamMember,
  removeTeamMember,
  listOperatorTeams,
  listMyTeamOrders,
  createTeam,
  // Alerts (triage)
  listAlerts,
  getAlert,
  getAlertTimeline,
  getAlertDuplicates,
  getAlertGroup,
  getTenantAlertGrouping,
  setTenantAlertGrouping,
  listSupplyFaults,
  bulkTriageAlerts,
  undoAction,
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
  setPlannedVisit,
  clearPlannedVisit,
  completeServiceOrder,
  getServiceOrderCompletion,
  uploadServiceOrderPhoto,
  getServiceOrderPhoto,
  listMaterials,
  createMaterial,
  updateMaterial,
  cancelServiceOrder,
  // Partners
  listPartners,
  createPartner,
  getPartner,
  updatePartner,
  rotatePartnerKey,
  rotatePartnerWebhookSecret,
  // Poles
  listMapPoles,
  getPole,
  getCityMap,
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
  acceptRejectedInboundItem,
  // WebhookDeliveries (events)
  listWebhookDeliveries,
  getWebhookDelivery,
  redeliverWebhook,
  redeliverWebhooksSince,
  redeliverDeadWebhooks,
  sendPartnerTestEvent,
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
  resetOperatorPassword,
  // AdminTokens
  listAdminTokens,
  createAdminToken,
  revokeAdminToken,
};
