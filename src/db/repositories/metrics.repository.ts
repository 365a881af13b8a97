import { sql } from 'kysely';
import type { Executor } from '../database.js';

/**
 * What /metrics reads from the database at each scrape: state shared by every
 * instance (each reports the same numbers; aggregate them with max, not sum). Labels
 * carry partner codes only, never tenant data.
 */

export interface QueueDepthRow {
  queue: string;
  state: string;
  n: number;
}

/** Jobs per queue waiting (created, retry) or running (active), zero included for every queue. */
export async function queueDepths(db: Executor): Promise<QueueDepthRow[]> {
  const { rows } = await sql<QueueDepthRow>`SELECT q.name AS queue, s.state,
      (SELECT count(*) FROM pgboss.job j WHERE j.name = q.name AND j.state = s.state::pgboss.job_state)::int AS n
    FROM pgboss.queue q CROSS JOIN (VALUES ('created'), ('retry'), ('active')) s (state)`.execute(db);
  return rows;
}

export interface QueueValueRow {
  queue: string;
  value: number;
}

/** Per queue: seconds since its oldest waiting job (created or retry) became due; 0 when none is due. */
export async function oldestDueJobAge(db: Executor): Promise<QueueValueRow[]> {
  const { rows } = await sql<QueueValueRow>`SELECT q.name AS queue,
      coalesce(extract(epoch FROM now() - (
        SELECT min(j.start_after) FROM pgboss.job j
         WHERE j.name = q.name AND j.state IN ('created', 'retry') AND j.start_after <= now()
      )), 0)::float8 AS value
    FROM pgboss.queue q`.execute(db);
  return rows;
}

export interface PartnerValueRow {
  partner: string;
  value: number;
}

/** Per webhook partner: seconds since its oldest delivery became due and is not done yet (0 when none is due). */
export async function oldestDueDeliveryAge(db: Executor): Promise<PartnerValueRow[]> {
  const { rows } = await sql<PartnerValueRow>`SELECT es.code AS partner,
      coalesce(extract(epoch FROM now() - (
        SELECT min(d.next_attempt_at) FROM webhook_delivery d
         WHERE d.external_system_id = es.id AND d.status IN ('pending', 'failed') AND d.next_attempt_at <= now()
      )), 0)::float8 AS value
    FROM external_system es WHERE es.transport = 'webhook'`.execute(db);
  return rows;
}

/**
 * Per polling partner: events not confirmed yet, those with a position after the
 * confirmed one plus those not positioned yet (after positioned_seq; an event whose
 * transaction committed late below it is not counted until it is positioned).
 */
export async function eventsWaiting(db: Executor): Promise<PartnerValueRow[]> {
  const { rows } = await sql<PartnerValueRow>`SELECT es.code AS partner,
      ((SELECT count(*) FROM event_position p WHERE p.external_system_id = es.id AND p.published_at > coalesce(c.confirmed_at, '-infinity'))
       + (SELECT count(*) FROM event e WHERE e.external_system_id = es.id AND e.write_seq > coalesce(c.positioned_seq, 0)))::float8 AS value
    FROM external_system es LEFT JOIN event_cursor c ON c.external_system_id = es.id
   WHERE es.transport = 'polling'`.execute(db);
  return rows;
}

/**
 * Per enabled partner Lumen polls (a polling URL): seconds since Lumen last held
 * everything the partner had (a poll whose last answer said hasMore false), or since
 * the partner was registered when that never happened.
 */
export async function partnerPollLag(db: Executor): Promise<PartnerValueRow[]> {
  const { rows } = await sql<PartnerValueRow>`SELECT es.code AS partner,
      extract(epoch FROM now() - coalesce(s.last_caught_up_at, es.created_at))::float8 AS value
    FROM external_system es LEFT JOIN partner_poll_state s ON s.external_system_id = es.id
   WHERE es.polling_url IS NOT NULL AND es.enabled`.execute(db);
  return rows;
}
