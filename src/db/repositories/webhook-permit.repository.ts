import { sql } from 'kysely';
import type { Executor } from '../database.js';

/**
 * Webhook send permits (migration 0098): a partner's attempts on the wire across every
 * instance never exceed its limit, because each attempt holds one of `limit` rows.
 */

/**
 * Takes up to `want` free permits of each partner for `holder`, for `ttlMs`, in one
 * statement; returns how many it now holds of each (those it held before included,
 * renewed). Rows are made on first use; slots above `limit` (a lowered limit) are not
 * granted. Two instances asking at once each take different rows (SKIP LOCKED): the
 * total held never exceeds `limit`.
 */
export async function acquirePermits(
  db: Executor,
  holder: string,
  wants: ReadonlyMap<string, number>,
  limit: number,
  ttlMs: number,
): Promise<Map<string, number>> {
  const ids = [...wants.keys()];
  if (ids.length === 0) return new Map();
  const counts = ids.map((id) => wants.get(id)!);
  await sql`
    INSERT INTO webhook_send_permit (external_system_id, slot)
    SELECT w.id, s.slot FROM unnest(${ids}::uuid[]) AS w(id)
      JOIN external_system x ON x.id = w.id
      CROSS JOIN generate_series(1, ${limit}::int) AS s(slot)
    ON CONFLICT DO NOTHING`.execute(db);
  const { rows } = await sql<{ external_system_id: string; n: string }>`
    WITH want AS MATERIALIZED (
      SELECT w.id, w.n FROM unnest(${ids}::uuid[], ${counts}::int[]) AS w(id, n)),
    free AS MATERIALIZED (
      SELECT p.external_system_id, p.slot FROM webhook_send_permit p
      WHERE p.external_system_id IN (SELECT id FROM want) AND p.slot <= ${limit}
        AND (p.holder IS NULL OR p.held_until < now() OR p.holder = ${holder}::uuid)
      ORDER BY p.external_system_id, p.slot
      FOR UPDATE SKIP LOCKED),
    ranked AS (
      SELECT f.external_system_id, f.slot,
             row_number() OVER (PARTITION BY f.external_system_id ORDER BY (p.holder = ${holder}::uuid) IS NOT TRUE, f.slot) AS rn
      FROM free f JOIN webhook_send_permit p USING (external_system_id, slot)),
    taken AS (
      UPDATE webhook_send_permit p SET holder = ${holder}::uuid, held_until = now() + ${ttlMs} * interval '1 millisecond'
      FROM ranked r JOIN want w ON w.id = r.external_system_id
      WHERE p.external_system_id = r.external_system_id AND p.slot = r.slot AND r.rn <= w.n
      RETURNING p.external_system_id),
    let_go AS (
      -- Held beyond what is wanted now: given back in the same statement.
      UPDATE webhook_send_permit p SET holder = NULL, held_until = NULL
      FROM ranked r JOIN want w ON w.id = r.external_system_id
      WHERE p.external_system_id = r.external_system_id AND p.slot = r.slot AND r.rn > w.n AND p.holder = ${holder}::uuid)
    SELECT external_system_id, count(*) AS n FROM taken GROUP BY external_system_id`.execute(db);
  return new Map(rows.map((r) => [r.external_system_id, Number(r.n)]));
}

/** Extends every permit `holder` holds by `ttlMs`; returns how many it still holds of each partner. */
export async function renewPermits(db: Executor, holder: string, ttlMs: number): Promise<Map<string, number>> {
  const { rows } = await sql<{ external_system_id: string; n: string }>`
    WITH renewed AS (
      UPDATE webhook_send_permit SET held_until = now() + ${ttlMs} * interval '1 millisecond'
      WHERE holder = ${holder}::uuid AND held_until >= now()
      RETURNING external_system_id)
    SELECT external_system_id, count(*) AS n FROM renewed GROUP BY external_system_id`.execute(db);
  return new Map(rows.map((r) => [r.external_system_id, Number(r.n)]));
}

/** Gives back `holder`'s permits of these partners (all of them when `partners` is null). */
export async function releasePermits(db: Executor, holder: string, partners: readonly string[] | null): Promise<void> {
  let q = db.updateTable('webhook_send_permit').set({ holder: null, held_until: null }).where('holder', '=', holder);
  if (partners !== null) {
    if (partners.length === 0) return;
    q = q.where('external_system_id', 'in', partners);
  }
  await q.execute();
}
