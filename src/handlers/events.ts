import { parseDateTime } from '../lib/time.js';
import type { EventsPage } from '../../generated/partner/types.gen.js';
import type { PartnerPrincipal } from '../http/auth.js';
import type { Handler } from '../http/surface.js';
import { AppError } from '../lib/errors.js';
import { pollEvents } from '../services/events/index.js';

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/**
 * The contract's date-time (RFC 3339) as a Date. Lowercase t/z and a leap second are
 * valid there but not for Date; a value Date still cannot read must not reach the
 * confirmation, where an invalid date would compare as "later than everything".
 */
function sinceDate(raw: string): Date {
  const date = parseDateTime(raw);
  if (!date) throw new AppError('invalid-parameter', {}, [{ pointer: '/query/since', message: 'must be an ISO 8601 date-time' }]);
  return date;
}

/** GET /api/external/events: fetch and confirm this partner's events (interface 4.4, N6). */
export const listEvents: Handler<PartnerPrincipal> = async ({ deps, principal, request }) => {
  const since = single(request.query.since);
  const limit = single(request.query.limit);
  const body: EventsPage = await pollEvents(deps, {
    externalSystemId: principal.externalSystemId,
    since: since !== undefined ? sinceDate(since) : undefined,
    limit: limit !== undefined ? Number(limit) : undefined,
  });
  return { status: 200, body };
};
