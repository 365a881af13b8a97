/**
 * City data: the partner reads of poles and service orders (date cursor and keyset walks, totals), the demo city, pole import and telemetry.
 *
 * This file is the capability's only door: code outside src/services/city-data/ imports
 * from here, never from the files behind it (test/unit/boundaries.test.ts).
 */
export { seedDemoCity, type DemoCity } from './demo.js';
export { type Progress } from './pole-import/parse.js';
export { UnusableFileError, importPoles, type PoleImportSummary } from './pole-import/service.js';
export { forgetUnusedReads } from './read-cache.js';
export { DEFAULT_PAGE_SIZE, listPoles, listServiceOrders, type ListRequest } from './reads.js';
export { readServiceOrder } from './service-order-read.js';
export { ingestTelemetryFile, type TelemetryFileOptions, type TelemetryFileSummary } from './telemetry-file.js';
export { authenticateTelemetry, createTelemetryKey, ingestReports, listKeys, revokeKey, telemetryBatchesInProgress, type TelemetryKeyView, type TelemetryPrincipal } from './telemetry.js';
