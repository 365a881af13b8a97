import type { RowDefinition } from '../harness/context.js';
import { bulkTriageRow } from './bulk-triage.js';
import { consoleBundleRow } from './console-bundle.js';
import { consoleInboxRow } from './console-inbox.js';
import { consoleLoadRow } from './console-load.js';
import { cityMapRow } from './city-map.js';
import { consoleMapRow } from './console-map.js';
import { eventLatencyRow } from './event-latency.js';
import { eventsPollingRow } from './events-polling.js';
import { executableRow } from './executable.js';
import { fullSyncRow } from './full-sync.js';
import { incrementalSyncRow } from './incremental-sync.js';
import { inboxSearchRow } from './inbox-search.js';
import { intakeRow } from './intake.js';
import { poleImportRow } from './pole-import.js';
import { polePageRow } from './pole-page.js';
import { reportDashboardRow, reportExportRow } from './reports.js';
import { telemetryRow } from './telemetry.js';
import { webhookFanoutRow } from './webhook-fanout.js';

/**
 * Every row, in the order they run: the executable first (it needs the empty
 * database), intake before the large seeds, telemetry after the read rows (it restamps
 * their city's poles), and the webhook fan-out last (a backlog
 * it leaves behind must not delay another row's deliveries).
 */
export const ROWS: readonly RowDefinition[] = [
  executableRow,
  intakeRow,
  polePageRow,
  consoleMapRow,
  cityMapRow,
  consoleInboxRow,
  inboxSearchRow,
  consoleLoadRow,
  consoleBundleRow,
  fullSyncRow,
  incrementalSyncRow,
  telemetryRow,
  poleImportRow,
  eventsPollingRow,
  eventLatencyRow,
  reportExportRow,
  reportDashboardRow,
  bulkTriageRow,
  webhookFanoutRow,
];
