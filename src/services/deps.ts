import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../lib/logger.js';

/** What every service needs; built once in main and passed down (no globals). */
export interface ServiceDeps {
  readonly config: Config;
  readonly db: Database;
  readonly log: Logger;
}
