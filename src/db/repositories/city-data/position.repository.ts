import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../database.js';

/**
 * Reads of the two city-data lists (GET /api/external/poles and /service-orders);
 * the page statement itself is in repositories/city-data/page.repository.ts. Positions are
 * (updated_at, id) with updated_at as an ISO string with microseconds: the database
 * keeps microseconds, and a keyset position rounded to milliseconds would serve
 * items twice or loop forever on a page of same-millisecond items.
 */

/** updated_at as `2026-03-14T12:41:07.532123Z`, exact. */
export function microsIso(column: string): RawBuilder<string> {
  return sql<string>`to_char(${sql.ref(column)} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

export interface Position {
  /** updated_at with microseconds (microsIso). */
  readonly u: string;
  readonly id: string;
}
