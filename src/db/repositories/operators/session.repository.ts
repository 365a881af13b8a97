import { sql, type Selectable } from 'kysely';
import type { Executor, Tx } from '../../database.js';
import type { OperatorSessionTable } from '../../tables/operators.js';
import type { OperatorRow } from './operator.repository.js';

export type SessionRow = Selectable<OperatorSessionTable>;

export async function insertSession(tx: Tx, row: { id_hash: Buffer; operator_id: string; csrf_token: string; absoluteSeconds: number; client_address: string | null }): Promise<SessionRow> {
  return tx
    .insertInto('operator_session')
    .values({ id_hash: row.id_hash, operator_id: row.operator_id, csrf_token: row.csrf_token, client_address: row.client_address, expires_at: sql<Date>`now() + make_interval(secs => ${row.absoluteSeconds})` })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * The live session with this id hash and its operator: not ended, within its absolute
 * limit, used within the idle limit, and its operator not disabled. Times come from
 * the database clock, the same for every instance. Read on every request (no cache).
 */
export async function findLiveSession(db: Executor, idHash: Buffer, idleSeconds: number): Promise<{ session: SessionRow; operator: OperatorRow } | undefined> {
  const row = await db
    .selectFrom('operator_session as s')
    .innerJoin('operator as o', 'o.id', 's.operator_id')
    .selectAll('s')
    .select(['o.email', 'o.name', 'o.password_hash', 'o.platform_admin', 'o.disabled_at', 'o.created_at as operator_created_at', 'o.updated_at as operator_updated_at'])
    .where('s.id_hash', '=', idHash)
    .where('s.ended_at', 'is', null)
    .where('s.expires_at', '>', sql<Date>`now()`)
    .where('s.last_seen_at', '>', sql<Date>`now() - make_interval(secs => ${idleSeconds})`)
    .where('o.disabled_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const { email, name, password_hash, platform_admin, disabled_at, operator_created_at, operator_updated_at, ...session } = row;
  return { session, operator: { id: session.operator_id, email, name, password_hash, platform_admin, disabled_at, created_at: operator_created_at, updated_at: operator_updated_at } };
}

/** Marks the session used now; written at most once a minute per session (most requests read only). */
export async function touchSession(db: Executor, id: string): Promise<void> {
  await db.updateTable('operator_session').set({ last_seen_at: sql<Date>`now()` }).where('id', '=', id).where('last_seen_at', '<', sql<Date>`now() - interval '1 minute'`).execute();
}

export async function endSession(db: Executor, id: string): Promise<void> {
  await db.updateTable('operator_session').set({ ended_at: sql<Date>`now()` }).where('id', '=', id).where('ended_at', 'is', null).execute();
}

/** Ends every open session of an operator (disabled, or a new password), but `keep` when given. */
export async function endSessionsOf(tx: Tx, operatorId: string, keep?: string): Promise<number> {
  let q = tx.updateTable('operator_session').set({ ended_at: sql<Date>`now()` }).where('operator_id', '=', operatorId).where('ended_at', 'is', null);
  if (keep) q = q.where('id', '<>', keep);
  const res = await q.executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** Forgets an operator's sessions that ended or expired more than a week ago (kept that long for the record). */
export async function sweepSessionsOf(tx: Tx, operatorId: string): Promise<void> {
  await tx
    .deleteFrom('operator_session')
    .where('operator_id', '=', operatorId)
    .where((eb) => eb.or([eb('ended_at', '<', sql<Date>`now() - interval '7 days'`), eb('expires_at', '<', sql<Date>`now() - interval '7 days'`)]))
    .execute();
}

/**
 * Counts one failed sign-in under `key` in a window of `windowSeconds` (a new window
 * when the last one is over) and returns the failures in the current window and when it
 * ends. Windows long over are swept at
 * each failure (an index range, usually empty), so e-mails typed by an attacker do not
 * pile up.
 */
export async function countSignInFailure(db: Executor, key: string, windowSeconds: number): Promise<{ failures: number; windowEnds: Date }> {
  const row = await sql<{ failures: number; window_end: Date }>`
    INSERT INTO sign_in_failure AS f (key, window_start, failures, last_failure_at) VALUES (${key}, now(), 1, now())
    ON CONFLICT (key) DO UPDATE SET
      window_start = CASE WHEN f.window_start <= now() - make_interval(secs => ${windowSeconds}) THEN now() ELSE f.window_start END,
      failures = CASE WHEN f.window_start <= now() - make_interval(secs => ${windowSeconds}) THEN 1 ELSE f.failures + 1 END,
      last_failure_at = now()
    RETURNING failures, window_start + make_interval(secs => ${windowSeconds}) AS window_end`.execute(db);
  await sql`DELETE FROM sign_in_failure WHERE window_start < now() - make_interval(secs => ${windowSeconds * 2})`.execute(db);
  const r = row.rows[0]!;
  return { failures: r.failures, windowEnds: r.window_end };
}

/** Failures under each key in its current window, with the seconds since the last one. */
export async function signInFailures(db: Executor, keys: readonly string[], windowSeconds: number): Promise<{ key: string; failures: number; secondsSinceLast: number }[]> {
  if (keys.length === 0) return [];
  const { rows } = await sql<{ key: string; failures: number; since_last: number }>`
    SELECT key, failures, extract(epoch FROM now() - last_failure_at)::float8 AS since_last
    FROM sign_in_failure
    WHERE key = ANY(${keys}::text[]) AND window_start > now() - make_interval(secs => ${windowSeconds})`.execute(db);
  return rows.map((r) => ({ key: r.key, failures: r.failures, secondsSinceLast: r.since_last }));
}

/** Addresses the operator signed in from in the last `days` days (its sessions'): where the account's own throttle does not apply. */
export async function usualAddresses(db: Executor, operatorId: string, days: number): Promise<string[]> {
  const { rows } = await sql<{ client_address: string }>`
    SELECT DISTINCT client_address FROM operator_session
    WHERE operator_id = ${operatorId} AND client_address IS NOT NULL AND created_at > now() - make_interval(days => ${days})`.execute(db);
  return rows.map((r) => r.client_address);
}

export async function clearSignInFailure(db: Executor, key: string): Promise<void> {
  await db.deleteFrom('sign_in_failure').where('key', '=', key).execute();
}
