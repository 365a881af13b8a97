import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { GeocodeHit, GeocodeQuery } from './index.js';

/** House numbers farther apart than this are not "the same place" (Brazilian numbering counts metres). */
export const MAX_HOUSE_NUMBER_DISTANCE = 200;

/**
 * The tenant's own poles as a geocoder: the active pole on the same street (accent-,
 * case- and abbreviation-insensitive, see lumen_street_key in 0003_intake.sql, made
 * cheaper in 0013_pole_import.sql) whose house number is nearest to the request's,
 * within MAX_HOUSE_NUMBER_DISTANCE; in the same neighborhood when both name one.
 * Without a house number ("S/N") a street alone is too vague to place a pole, so
 * there is no match.
 *
 *   SELECT latitude, longitude FROM pole
 *   WHERE tenant_id = $1 AND active AND lumen_street_key(address) = lumen_street_key($2)   -- pole_street_key_idx
 *     AND abs(lumen_house_number(address) - $3) <= 200
 *     AND ($4::text IS NULL OR neighborhood = '' OR lumen_text_key(neighborhood) = lumen_text_key($4))
 *   ORDER BY abs(lumen_house_number(address) - $3), id LIMIT 1
 *
 * EXPLAIN ANALYZE (generic plan, 200,000 poles in the tenant): Limit -> Sort (top-N) ->
 * Index Scan using pole_street_key_idx, Index Cond: tenant_id and the street key;
 * about 1.5 ms.
 */
export async function geocodeByPoles(db: Executor, q: GeocodeQuery): Promise<GeocodeHit | null> {
  const number = houseNumber(q.number);
  if (number === null) return null;
  const neighborhood = q.neighborhood?.trim() ? q.neighborhood : null;
  const row = await db
    .selectFrom('pole')
    .select(['latitude', 'longitude'])
    .where('tenant_id', '=', q.tenantId)
    // A literal, not a parameter, so the planner can use the partial index (WHERE active).
    .where(sql<boolean>`active`)
    .where(sql<boolean>`lumen_street_key(address) = lumen_street_key(${q.street})`)
    .where(sql<boolean>`abs(lumen_house_number(address) - ${number}::integer) <= ${MAX_HOUSE_NUMBER_DISTANCE}`)
    .where(sql<boolean>`(${neighborhood}::text IS NULL OR neighborhood = '' OR lumen_text_key(neighborhood) = lumen_text_key(${neighborhood}::text))`)
    .orderBy(sql`abs(lumen_house_number(address) - ${number}::integer)`)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return row ? { latitude: row.latitude, longitude: row.longitude, source: 'poles' } : null;
}

/** "1500", "1500A", "nº 12" -> the integer; "S/N", "", null -> null. */
export function houseNumber(raw: string | null): number | null {
  if (raw === null) return null;
  const m = /^\s*(?:n[oº°.]*\s*)?([0-9]{1,7})/i.exec(raw);
  return m ? Number(m[1]) : null;
}
