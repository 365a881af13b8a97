import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { Reads } from '../db/read-replica.js';
import type { Logger } from '../lib/logger.js';

/** What every service needs; built once in main and passed down (no globals). */
export interface ServiceDeps {
  readonly config: Config;
  readonly db: Database;
  /** Where partner reads run: the replica of LUMEN_READ_DATABASE_URL while usable, else `db`. Writes always go to `db`. */
  readonly reads: Reads;
  readonly log: Logger;
}
