import { sql } from 'kysely';
import type { Executor } from '../../database.js';

export interface AttentionRow {
  pending: number;
  pending_overdue: number;
  not_geolocated: number;
  overdue_orders: number;
  dead_deliveries: number;
  rejected_items: number;
  failed_attachment_urls: number;
}

/** A dead delivery of an event that nobody asked to redeliver yet (over webhook_delivery `d`). */
const DEAD_AND_WAITING = sql<boolean>`d.status = 'dead' AND d.event_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM webhook_delivery r WHERE r.redelivery_of = d.id)`;

/**
 * What waits for an operator in one tenant, counted in one statement. A dead delivery
 * counts until someone asked for its redelivery (a dead test event does not: the
 * operator who sent it sees it in the delivery log); a rejected item until a later valid
 * item replaced it or an operator dismissed it; a failed URL until it was dismissed
 * (a retry that succeeds deletes it).
 */
export async function countAttention(db: Executor, tenantId: string): Promise<AttentionRow> {
  const { rows } = await sql<AttentionRow>`
    SELECT
      (SELECT count(*) FROM alert WHERE tenant_id = ${tenantId} AND status = 'Pending')::int AS pending,
      (SELECT count(*) FROM alert WHERE tenant_id = ${tenantId} AND status = 'Pending' AND sla_due_at < now())::int AS pending_overdue,
      (SELECT count(*) FROM alert WHERE tenant_id = ${tenantId} AND latitude IS NULL AND status IN ('Pending', 'Linked'))::int AS not_geolocated,
      (SELECT count(*) FROM service_order WHERE tenant_id = ${tenantId} AND status IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS') AND sla_due_at < now())::int AS overdue_orders,
      (SELECT count(*) FROM webhook_delivery d JOIN external_system e ON e.id = d.external_system_id
        WHERE e.tenant_id = ${tenantId} AND ${DEAD_AND_WAITING})::int AS dead_deliveries,
      (SELECT count(*) FROM rejected_inbound_item WHERE tenant_id = ${tenantId} AND resolved_at IS NULL AND dismissed_at IS NULL)::int AS rejected_items,
      (SELECT count(*) FROM attachment_failure WHERE tenant_id = ${tenantId} AND dismissed_at IS NULL)::int AS failed_attachment_urls
  `.execute(db);
  return rows[0]!;
}

/**
 * What waits for one partner (its self-service view), by the same rules as the tenant's
 * counts above.
 */
export async function countPartnerAttention(db: Executor, externalSystemId: string): Promise<{ dead_deliveries: number; rejected_items: number; attachment_failures: number }> {
  const { rows } = await sql<{ dead_deliveries: number; rejected_items: number; attachment_failures: number }>`
    SELECT
      (SELECT count(*) FROM webhook_delivery d WHERE d.external_system_id = ${externalSystemId} AND ${DEAD_AND_WAITING})::int AS dead_deliveries,
      (SELECT count(*) FROM rejected_inbound_item WHERE external_system_id = ${externalSystemId} AND resolved_at IS NULL AND dismissed_at IS NULL)::int AS rejected_items,
      (SELECT count(*) FROM attachment_failure WHERE external_system_id = ${externalSystemId} AND dismissed_at IS NULL)::int AS attachment_failures
  `.execute(db);
  return rows[0]!;
}
