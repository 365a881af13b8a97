/**
 * Operations: triage of alerts, the service-order lifecycle, reasons and teams.
 *
 * This file is the capability's only door: code outside src/services/operations/ imports
 * from here, never from the files behind it (test/unit/boundaries.test.ts).
 */
export { assignServiceOrder, cancelServiceOrder, completeServiceOrder, getServiceOrder, startServiceOrder } from './order-lifecycle.js';
export { loadServiceOrder, serviceOrderView } from './order-view.js';
export { createReason, listReasons, mapReason, unmapReason, type ReasonMappingView, type ReasonView } from './reasons.js';
export { applyReasonMapping, partnerReasonCodes } from './reason-mappings.js';
export { createTeam, listTeams } from './teams.js';
export { createOrderFromAlert, discardAlert, getAlert, linkAlert, listAlerts, reclassifyAlert, setAlertLocation } from './triage.js';
export { bulkTriage, requireTriageTenant, BULK_MAX_ALERTS, type BulkTriageInput } from './bulk-triage.js';
export { resolveAlert, resolveField, resolveOrder, resolveTeam, type Ref } from './resolve.js';
export { listServiceOrders, orderListFilter, type OrderListInput } from './order-list.js';
export { tenantAttention } from './attention.js';
export { alertTimeline, orderTimeline } from './timeline.js';
export { poleByCode } from './pole-page.js';
export { cityMap, type CityMapInput } from './city-map.js';
export { duplicateSuggestions, mapPoles, poleForOrder, setOrderPole, type MapPolesInput } from './poles.js';
export { undoAction, type UndoRequest, type UndoneAction } from './undo.js';
export { addTeamMember, checkVisitWindow, clearPlannedVisit, listOperatorTeams, listTeamMembers, myTeamOrders, removeTeamMember, setPlannedVisit, VISIT_MAX_HOURS } from './crew.js';
export { alertGroup, getAlertGrouping, setAlertGrouping, supplyFaultMarkers } from './alert-groups.js';
