import type { RuntimeDeps } from './services/deps.js';
import type { Jobs } from './jobs/index.js';
import type { PartnerKeyCache } from './http/partner-key-cache.js';

/** Everything the HTTP layer and the jobs need; built once by main. */
export interface AppDeps extends RuntimeDeps {
  readonly jobs: Jobs;
  /** Why the process cannot go on (for /livez), or null. Default: always null. */
  readonly failure?: () => string | null;
  /** Stored secrets the configured keys cannot open (for /readyz), or null. */
  readonly secretsProblem?: () => string | null;
  /** Partner keys and rate limits answered in process (lumen serve); absent: every request reads the database. */
  readonly partnerKeys?: PartnerKeyCache;
}
