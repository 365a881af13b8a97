import type { PartnerPrincipal } from '../http/auth.js';
import type { Handler, HandlerRequest } from '../http/surface.js';
import type { RejectedStatusFilter } from '../db/repositories/partner-poll.repository.js';
import {
  getOwnDelivery,
  listOwnAttachmentFailures,
  listOwnDeliveries,
  listOwnRejectedItems,
  readIntegration,
  redeliverOwn,
  redeliverOwnDead,
  rotateOwnWebhookSecret,
  sendOwnTestEvent,
} from '../services/integration/index.js';

type H = Handler<PartnerPrincipal>;

function single(query: HandlerRequest['query'], name: string): string | undefined {
  const v = query[name];
  return Array.isArray(v) ? v[0] : v;
}

/** An integer query value, already checked against the contract. */
function integer(query: HandlerRequest['query'], name: string): number | undefined {
  const v = single(query, name);
  return v === undefined ? undefined : Number(v);
}

const noStore = { 'cache-control': 'no-store' };

/** GET /api/external/integration */
export const getIntegration: H = async ({ deps, principal }) => ({ status: 200, body: await readIntegration(deps, principal) });

/** GET /api/external/integration/webhook-deliveries */
export const listIntegrationDeliveries: H = async ({ deps, principal, request }) => ({
  status: 200,
  body: await listOwnDeliveries(deps, principal, { status: single(request.query, 'status'), since: single(request.query, 'since'), limit: integer(request.query, 'limit') }),
});

/** GET /api/external/integration/webhook-deliveries/{deliveryId} */
export const getIntegrationDelivery: H = async ({ deps, principal, request }) => ({ status: 200, body: await getOwnDelivery(deps, principal, request.params.deliveryId!) });

/** POST /api/external/integration/webhook-deliveries/{deliveryId}/redeliver */
export const redeliverIntegrationDelivery: H = async ({ deps, principal, request, requestId }) => ({
  status: 201,
  body: await redeliverOwn(deps, principal, request.params.deliveryId!, requestId),
});

/** POST /api/external/integration/webhook-deliveries/redeliver-dead */
export const redeliverDeadIntegrationDeliveries: H = async ({ deps, principal, requestId }) => ({ status: 200, body: await redeliverOwnDead(deps, principal, requestId) });

/** POST /api/external/integration/test-event */
export const sendIntegrationTestEvent: H = async ({ deps, principal, requestId }) => ({ status: 202, body: await sendOwnTestEvent(deps, principal, requestId) });

/** POST /api/external/integration/rotate-webhook-secret */
export const rotateIntegrationWebhookSecret: H = async ({ deps, principal, request, requestId }) => ({
  status: 200,
  body: await rotateOwnWebhookSecret(deps, principal, (request.body as { overlapSeconds?: number } | undefined)?.overlapSeconds, requestId),
  headers: noStore,
});

/** GET /api/external/integration/rejected-items */
export const listIntegrationRejectedItems: H = async ({ deps, principal, request }) => ({
  status: 200,
  body: await listOwnRejectedItems(deps, principal, {
    status: single(request.query, 'status') as RejectedStatusFilter | undefined,
    page: integer(request.query, 'page'),
    pageSize: integer(request.query, 'pageSize'),
  }),
});

/** GET /api/external/integration/attachment-failures */
export const listIntegrationAttachmentFailures: H = async ({ deps, principal, request }) => ({
  status: 200,
  body: await listOwnAttachmentFailures(deps, principal, { since: single(request.query, 'since'), limit: integer(request.query, 'limit') }),
});
