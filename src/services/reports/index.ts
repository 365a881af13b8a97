/**
 * Reports for a city's council: the dashboard's figures (backlog, time to triage and to
 * repair, SLA compliance) and CSV exports of its orders, alerts and audit log.
 *
 * This file is the capability's only door (test/unit/boundaries.test.ts).
 */
export { alertsCsv, auditCsv, serviceOrdersCsv, type CsvExport } from './export.js';
export { periodOf, tenantReport, type Period } from './report.js';
