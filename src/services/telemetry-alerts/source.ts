import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';

/** The reason of telemetry alerts, created in a tenant's catalogue on first use (operators may change its priority and SLA). */
export const LAMP_OUT_REASON = 'TELEMETRY_LAMP_OUT';

/** Code of a tenant's telemetry source: the ExternalSystem its telemetry alerts come from. */
export function telemetrySourceCode(tenantId: string): string {
  return `lumen-telemetry-${tenantId.replaceAll('-', '').slice(0, 12)}`;
}

/**
 * The ExternalSystem Lumen's own telemetry alerts are registered by, so they take the
 * intake path like a partner's request (numbering, city policy, events): one per tenant,
 * with no API key (nothing can call Lumen as it) and no transport target; plus the
 * TELEMETRY_LAMP_OUT reason and the mapping of that code to it. Idempotent, also when
 * two instances make it at once.
 */
export async function ensureTelemetrySource(db: Executor, tenantId: string): Promise<{ externalSystemId: string; code: string }> {
  const code = telemetrySourceCode(tenantId);
  await sql`
    WITH es AS (
      INSERT INTO external_system (tenant_id, code, scopes, transport, event_types)
      VALUES (${tenantId}, ${code}, ARRAY['canCreateServiceOrders']::text[], 'webhook', ARRAY[]::text[])
      ON CONFLICT (code) DO NOTHING
    ), r AS (
      INSERT INTO reason (tenant_id, code, name_pt, name_en, priority, sla_hours)
      VALUES (${tenantId}, ${LAMP_OUT_REASON}, 'Lâmpada apagada (telemetria)', 'Lamp out (telemetry)', 'High', 24)
      ON CONFLICT DO NOTHING
    )
    SELECT 1`.execute(db);
  const es = await db.selectFrom('external_system').select(['id', 'tenant_id']).where('code', '=', code).executeTakeFirstOrThrow();
  if (es.tenant_id !== tenantId) throw new Error(`external system ${code} belongs to another tenant`);
  await sql`
    INSERT INTO reason_mapping (external_system_id, partner_code, tenant_id, reason_code)
    VALUES (${es.id}, ${LAMP_OUT_REASON}, ${tenantId}, ${LAMP_OUT_REASON})
    ON CONFLICT (external_system_id, partner_code) DO NOTHING`.execute(db);
  return { externalSystemId: es.id, code };
}
