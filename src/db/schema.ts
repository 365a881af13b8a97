import type { DomainTables } from './tables/domain.js';
import type { FoundationTables } from './tables/foundation.js';

/** Every table Lumen owns. Each domain keeps its table types in tables/<domain>.ts. */
export interface DB extends FoundationTables, DomainTables {}
