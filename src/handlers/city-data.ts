import type { PartnerPrincipal } from '../http/auth.js';
import type { Handler, HandlerRequest } from '../http/surface.js';
import { listPoles as readPoles, listServiceOrders as readServiceOrders, readServiceOrder, type ListRequest } from '../services/city-data/index.js';

function single(query: HandlerRequest['query'], name: string): string | undefined {
  const v = query[name];
  return Array.isArray(v) ? v[0] : v;
}

/** page, pageSize, updatedSince and cursor, already checked against the contract (integers >= 1, date-time). */
function listRequest(query: HandlerRequest['query']): ListRequest {
  const page = single(query, 'page');
  const pageSize = single(query, 'pageSize');
  return {
    page: page === undefined ? 1 : Number(page),
    pageSize: pageSize === undefined ? null : Number(pageSize),
    updatedSince: single(query, 'updatedSince') ?? null,
    cursor: single(query, 'cursor') ?? null,
  };
}

/** GET /api/external/poles */
export const listPoles: Handler<PartnerPrincipal> = async ({ deps, principal, request }) => ({
  status: 200,
  body: await readPoles(deps, principal, listRequest(request.query)),
});

/** GET /api/external/service-orders */
export const listServiceOrders: Handler<PartnerPrincipal> = async ({ deps, principal, request }) => ({
  status: 200,
  body: await readServiceOrders(deps, principal, listRequest(request.query)),
});

/** GET /api/external/service-orders/{serviceOrderId}: one order of the key's city, by id or number. */
export const getServiceOrder: Handler<PartnerPrincipal> = async ({ deps, principal, request }) => ({
  status: 200,
  body: await readServiceOrder(deps, principal, request.params.serviceOrderId!),
});
