import type { Scope } from '../db/tables/foundation.js';

/** Who calls the Open311 endpoint: a partner key's system, its tenant and scopes. */
export interface Open311Caller {
  readonly externalSystemId: string;
  readonly tenantId: string;
  readonly scopes: readonly Scope[];
}
