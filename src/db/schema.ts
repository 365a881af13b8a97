import type { CityDataTables } from './tables/city-data.js';
import type { CompletionTables } from './tables/completion.js';
import type { DomainTables } from './tables/domain.js';
import type { EventsTables } from './tables/events.js';
import type { FoundationTables } from './tables/foundation.js';
import type { IntakeTables } from './tables/intake.js';
import type { OperationsTables } from './tables/operations.js';
import type { OperatorsTables } from './tables/operators.js';
import type { PollingTables } from './tables/polling.js';
import type { TelemetryAlertsTables } from './tables/telemetry-alerts.js';
import type { UndoTables } from './tables/undo.js';

/** Every table Lumen owns. Each domain keeps its table types in tables/<domain>.ts. */
export interface DB extends FoundationTables, DomainTables, OperationsTables, IntakeTables, PollingTables, CityDataTables, EventsTables, TelemetryAlertsTables, OperatorsTables, UndoTables, CompletionTables {}
