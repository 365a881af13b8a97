/**
 * Partners help themselves (partner API, /api/external/integration, scope
 * canManageIntegration): the operator's partner tools, each bound to the key's own
 * partner. Every call passes the key's partner, never one named by the request, and a
 * delivery named by id is checked to be that partner's before anything else: another
 * partner's, in the same city or not, is not-found as one that does not exist. Actions
 * are audited as the operator's are, with `partner:<code>` as the actor.
 */
import type { Integration } from '../../../generated/partner/types.gen.js';
import { AppError } from '../../lib/errors.js';
import partnerDocument from '../../../generated/openapi/partner.json' with { type: 'json' };
import { findExternalSystem } from '../../db/repositories/external-system.repository.js';
import { countPartnerAttention } from '../../db/repositories/operations/attention.repository.js';
import { attachmentFailures, MAX_ATTACHMENT_BYTES, type AttachmentFailureView } from '../attachments/index.js';
import type { Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { getWebhookDelivery, listWebhookDeliveries, redeliver, redeliverDead, sendTestEvent, type WebhookDeliveryView } from '../events/index.js';
import { listRejectedInbound } from '../partner-poll/index.js';
import { partnerKeys, rotateWebhookSecret } from '../partners/index.js';
import { isUuid } from '../tenants/index.js';
import type { AdminAccess } from '../operators/index.js';
import type { RejectedStatusFilter } from '../../db/repositories/partner-poll.repository.js';

/** The calling partner, as the partner API authenticated it (the partner API's PartnerPrincipal fits). */
export interface PartnerCaller {
  readonly externalSystemId: string;
  readonly externalSystemCode: string;
  readonly tenantId: string;
  /** The presented key's readable prefix. */
  readonly keyPrefix?: string;
  /** When the presented key stops working (a rotation's overlap); null until rotated. */
  readonly keyExpiresAt?: Date | null;
}

/** Photos per request: the contract's own limit (IntakeRequest.attachments.maxItems), so the two cannot disagree. */
const ATTACHMENTS_PER_REQUEST: number = (partnerDocument as unknown as { components: { schemas: { IntakeRequest: { properties: { attachments: { maxItems: number } } } } } }).components.schemas.IntakeRequest.properties.attachments.maxItems;

/** The caller as an actor: its own partner, with the reach of a city-admin of its city (every service below is also given the partner itself). */
export function partnerActor(p: PartnerCaller, requestId?: string): Actor {
  return { kind: 'partner', name: p.externalSystemCode, access: partnerAccess(p), ...(requestId ? { requestId } : {}) };
}

function partnerAccess(p: PartnerCaller): AdminAccess {
  return { platformAdmin: false, grants: new Map([[p.tenantId, 'city-admin']]) };
}

/** The partner's integration: settings, limits, keys and what waits (schema Integration). */
export async function readIntegration(deps: ServiceDeps, p: PartnerCaller): Promise<Integration> {
  const presentedKeyPrefix = p.keyPrefix ?? '';
  const row = await findExternalSystem(deps.db, p.externalSystemId);
  if (!row) throw new AppError('unauthorized');
  const [keys, waiting] = await Promise.all([partnerKeys(deps.db, row.id), countPartnerAttention(deps.db, row.id)]);
  const previousUntil = row.webhook_previous_secret_until && row.webhook_previous_secret_until.getTime() > Date.now() ? row.webhook_previous_secret_until.toISOString() : null;
  return {
    externalSystemCode: row.code,
    tenantId: row.tenant_id,
    enabled: row.enabled,
    scopes: row.scopes,
    transport: row.transport,
    webhook: { url: row.webhook_url, eventTypes: row.event_types, signature: row.webhook_signature, secretSet: row.webhook_secret_enc !== null, previousSecretUntil: previousUntil },
    polling: { url: row.polling_url, intervalSeconds: row.polling_interval_seconds },
    limits: {
      requestsPerMinute: row.rate_limit_per_minute ?? deps.config.rateLimitPerMinute,
      intakeInProgressPerKey: deps.config.intakeConcurrencyPerKey,
      eventsMinIntervalSeconds: row.events_min_interval_seconds,
      attachmentsPerRequest: ATTACHMENTS_PER_REQUEST,
      attachmentMaxBytes: MAX_ATTACHMENT_BYTES,
      webhookMaxInFlight: deps.config.webhookMaxInFlightPerPartner,
    },
    key: {
      keyPrefix: presentedKeyPrefix,
      expiresAt: p.keyExpiresAt ? p.keyExpiresAt.toISOString() : null,
      // The other working key: the replaced one when this request uses the new key.
      previousKey: keys.previousKey && keys.previousKey.keyPrefix !== presentedKeyPrefix ? keys.previousKey : null,
    },
    attention: { deadDeliveries: waiting.dead_deliveries, openRejectedItems: waiting.rejected_items, attachmentFailures: waiting.attachment_failures },
  };
}

export function listOwnDeliveries(deps: ServiceDeps, p: PartnerCaller, q: { status?: string; since?: string; limit?: number }): Promise<{ partnerCode: string; deliveries: WebhookDeliveryView[] }> {
  return listWebhookDeliveries(deps, partnerAccess(p), { partnerCode: p.externalSystemCode, ...q });
}

/** The delivery, when it is this partner's; not-found otherwise, as one that does not exist. */
async function requireOwnDelivery(deps: ServiceDeps, p: PartnerCaller, deliveryId: string): Promise<void> {
  const own = isUuid(deliveryId)
    ? await deps.db.selectFrom('webhook_delivery').select('id').where('id', '=', deliveryId).where('external_system_id', '=', p.externalSystemId).executeTakeFirst()
    : undefined;
  if (!own) throw new AppError('not-found', { resource: `webhook delivery ${deliveryId}` });
}

export async function getOwnDelivery(deps: ServiceDeps, p: PartnerCaller, deliveryId: string): Promise<WebhookDeliveryView> {
  await requireOwnDelivery(deps, p, deliveryId);
  return getWebhookDelivery(deps, partnerAccess(p), deliveryId);
}

export async function redeliverOwn(deps: ServiceDeps, p: PartnerCaller, deliveryId: string, requestId: string): Promise<WebhookDeliveryView> {
  await requireOwnDelivery(deps, p, deliveryId);
  return redeliver(deps, deliveryId, partnerActor(p, requestId));
}

export function redeliverOwnDead(deps: ServiceDeps, p: PartnerCaller, requestId: string) {
  return redeliverDead(deps, p.externalSystemCode, partnerActor(p, requestId));
}

export function sendOwnTestEvent(deps: ServiceDeps, p: PartnerCaller, requestId: string) {
  return sendTestEvent(deps, p.externalSystemCode, partnerActor(p, requestId));
}

/** A new webhook secret made by Lumen; the replaced one signs beside it for the overlap. */
export async function rotateOwnWebhookSecret(deps: ServiceDeps, p: PartnerCaller, overlapSeconds: number | undefined, requestId: string): Promise<{ webhookSecret: string; previousSecretUntil: string | null }> {
  const row = await findExternalSystem(deps.db, p.externalSystemId);
  if (row && row.transport !== 'webhook') throw new AppError('conflict', { reason: `partner ${p.externalSystemCode} is in polling mode: it has no webhook secret to rotate` });
  if (row && row.webhook_secret_enc === null) throw new AppError('conflict', { reason: `partner ${p.externalSystemCode} has no webhook secret to rotate: the city operator sets the first one` });
  const view = await rotateWebhookSecret(deps, p.externalSystemCode, overlapSeconds === undefined ? {} : { overlapSeconds }, partnerActor(p, requestId));
  return { webhookSecret: view.webhookSecret, previousSecretUntil: view.previousWebhookSecretUntil };
}

export function listOwnRejectedItems(deps: ServiceDeps, p: PartnerCaller, q: { status?: RejectedStatusFilter; page?: number; pageSize?: number }) {
  return listRejectedInbound(deps, partnerAccess(p), { partnerCode: p.externalSystemCode, ...q });
}

export async function listOwnAttachmentFailures(deps: ServiceDeps, p: PartnerCaller, q: { since?: string; limit?: number }): Promise<{ items: AttachmentFailureView[] }> {
  const since = q.since === undefined ? undefined : new Date(q.since);
  return { items: await attachmentFailures(deps, p.tenantId, { limit: q.limit ?? 100, since, externalSystemId: p.externalSystemId }, partnerAccess(p)) };
}
