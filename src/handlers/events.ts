import type { EventsPage } from '../../generated/partner/types.gen.js';
import type { PartnerPrincipal } from '../http/auth.js';
import type { Handler } from '../http/surface.js';
import { pollEvents } from '../services/events-polling.service.js';

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** GET /api/external/events: fetch and confirm this partner's events (interface 4.4, N6). */
export const listEvents: Handler<PartnerPrincipal> = async ({ deps, principal, request }) => {
  const since = single(request.query.since);
  const limit = single(request.query.limit);
  const body: EventsPage = await pollEvents(deps, {
    externalSystemId: principal.externalSystemId,
    since: since !== undefined ? new Date(since) : undefined,
    limit: limit !== undefined ? Number(limit) : undefined,
  });
  return { status: 200, body };
};
