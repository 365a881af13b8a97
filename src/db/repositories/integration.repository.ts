import { sql } from 'kysely';
import type { Executor } from '../database.js';

/**
 * What waits for one partner, counted in one statement, by the same rules as the
 * tenant's attention counts (attention.repository.ts): a dead delivery of an event
 * until a redelivery of it was asked for, a refused polled item until a valid resend
 * or a dismissal, a failed photo URL until the operator dismissed it.
 */
export async function countPartnerAttention(db: Executor, externalSystemId: string): Promise<{ dead_deliveries: number; rejected_items: number; attachment_failures: number }> {
  const { rows } = await sql<{ dead_deliveries: number; rejected_items: number; attachment_failures: number }>`
    SELECT
      (SELECT count(*) FROM webhook_delivery d
        WHERE d.external_system_id = ${externalSystemId} AND d.status = 'dead' AND d.event_id IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM webhook_delivery r WHERE r.redelivery_of = d.id))::int AS dead_deliveries,
      (SELECT count(*) FROM rejected_inbound_item WHERE external_system_id = ${externalSystemId} AND resolved_at IS NULL AND dismissed_at IS NULL)::int AS rejected_items,
      (SELECT count(*) FROM attachment_failure WHERE external_system_id = ${externalSystemId} AND dismissed_at IS NULL)::int AS attachment_failures
  `.execute(db);
  return rows[0]!;
}
