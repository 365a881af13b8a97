import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { TestEventResult } from '../../../generated/admin/types.gen.js';
import type { TestPingEvent } from '../../../generated/partner/types.gen.js';
import { insertDelivery } from '../../db/repositories/webhook-delivery.repository.js';
import { actorLabel, recordAudit, type Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { requirePartner, requireWebhookPartner } from './deliveries.js';
import { wakeDeliveries } from './dispatch.js';

const MESSAGE = 'Test event sent by the city operator from Lumen: your receiver is reachable when it answers 2xx. No action is needed.';
const OWN_MESSAGE = 'Test event your integration asked for (POST /api/external/integration/test-event): your receiver is reachable when it answers 2xx. No action is needed.';

/**
 * Sends a `Test.Ping` to a partner's webhook: writes a test event (never an event: it
 * has no alert and never appears in events polling) and its delivery, which the pump
 * signs and sends like any other, retries on the schedule and logs. Its ordering key is
 * its own id, so it waits behind nothing and holds nothing back. Sent whatever event
 * types the partner subscribed to (an operator asked for it). Needs city-admin on the
 * partner's tenant (another tenant's partner is not-found); a partner that cannot
 * receive webhooks (disabled, polling, no URL or secret) is a conflict and nothing is
 * written. Audited as `webhook.test-event`.
 */
export async function sendTestEvent(deps: ServiceDeps, partnerCode: string, actor: Actor): Promise<TestEventResult> {
  const partner = await requirePartner(deps, actor.access, partnerCode, 'city-admin');
  requireWebhookPartner(partner);
  return deps.db.transaction().execute(async (tx) => {
    const { rows } = await sql<{ now: Date }>`SELECT now() AS now`.execute(tx);
    const occurredAt = rows[0]!.now;
    const envelope: TestPingEvent = { eventId: randomUUID(), eventType: 'Test.Ping', occurredAt: occurredAt.toISOString(), partnerCode: partner.code, message: actor.kind === 'partner' ? OWN_MESSAGE : MESSAGE };
    const requestedBy = actorLabel(actor);
    await tx
      .insertInto('test_event')
      .values({ id: envelope.eventId, tenant_id: partner.tenant_id, external_system_id: partner.id, body: JSON.stringify(envelope), requested_by: requestedBy, created_at: occurredAt })
      .execute();
    const d = await insertDelivery(tx, { test_event_id: envelope.eventId, external_system_id: partner.id, ordering_key: envelope.eventId, requested_by: requestedBy });
    await wakeDeliveries(tx);
    await recordAudit(tx, actor, { tenantId: partner.tenant_id, action: 'webhook.test-event', entityType: 'partner', entityId: partner.id, before: null, after: { eventId: envelope.eventId, deliveryId: d.id } });
    return { partnerCode: partner.code, eventId: envelope.eventId, eventType: 'Test.Ping', occurredAt: envelope.occurredAt, deliveryId: d.id };
  });
}
