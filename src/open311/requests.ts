import type { ServiceRequest, TokenAnswer } from '../../generated/open311/types.gen.js';
import { findOpen311Requests, type Open311Filter, type Open311RequestRow } from '../db/repositories/open311.repository.js';
import { AppError } from '../lib/errors.js';
import type { Language } from '../lib/i18n.js';
import type { ServiceDeps } from '../services/deps.js';
import type { Open311Caller } from './caller.js';
import { serviceNotice } from './catalogue.js';

/** The specification's default window and largest answer. */
const DEFAULT_DAYS = 90;
const MAX_REQUESTS = 1000;

export interface RequestQuery {
  serviceRequestIds?: readonly string[];
  serviceCodes?: readonly string[];
  startDate?: Date;
  endDate?: Date;
  updatedAfter?: Date;
  updatedBefore?: Date;
  statuses?: readonly ('open' | 'closed')[];
}

/**
 * Closed once the work is done (the order completed, the alert resolved) or the city
 * discarded the request. A cancelled order is not an end for the citizen: its alerts go
 * back to triage (Pending) and the request stays open until an operator decides again,
 * so a FixMyStreet user sees "open" with the cancellation note, never "closed" for a
 * lamp nobody will fix. The repository's CLOSED filter is the same rule.
 */
function isClosed(row: Open311RequestRow): boolean {
  return row.alert_status === 'Resolved' || row.alert_status === 'Cancelled' || row.order_status === 'COMPLETED';
}

/** The public link of a stored photo, or null (no photo stored, or no LUMEN_PUBLIC_URL to build it from). */
export type MediaLink = (attachmentId: string) => string | null;

function serviceRequest(row: Open311RequestRow, lang: Language, media: MediaLink): ServiceRequest {
  return {
    service_request_id: row.alert_number,
    status: isClosed(row) ? 'closed' : 'open',
    status_notes: row.note ?? row.cancel_reason,
    service_name: lang === 'en' ? row.reason_name_en : row.reason_name_pt,
    service_code: row.reason_code,
    description: row.description,
    agency_responsible: row.team_name ?? row.tenant_name,
    service_notice: serviceNotice(row.sla_hours, lang),
    requested_datetime: row.requested_at.toISOString(),
    updated_datetime: row.updated_at.toISOString(),
    expected_datetime: row.expected_at.toISOString(),
    address: [row.address_street, row.address_number, row.address_neighborhood].filter(Boolean).join(', '),
    address_id: row.pole_code,
    zipcode: null,
    lat: row.latitude,
    long: row.longitude,
    media_url: row.media_id ? media(row.media_id) : null,
  };
}

/**
 * GET requests: this partner's requests. Ids given: those (the other filters are
 * ignored, as the specification says). Otherwise the filters, and the last 90 days of
 * requested_datetime when no date bound is given.
 */
export async function listOpen311Requests(deps: ServiceDeps, caller: Open311Caller, q: RequestQuery, lang: Language, media: MediaLink): Promise<ServiceRequest[]> {
  let filter: Open311Filter;
  if (q.serviceRequestIds) filter = { alertNumbers: q.serviceRequestIds, limit: MAX_REQUESTS };
  else {
    const bounded = q.startDate || q.endDate || q.updatedAfter || q.updatedBefore;
    const statuses = new Set(q.statuses ?? []);
    filter = {
      ...(q.serviceCodes ? { serviceCodes: q.serviceCodes } : {}),
      requestedFrom: q.startDate ?? (bounded ? undefined : new Date(Date.now() - DEFAULT_DAYS * 86_400_000)),
      requestedTo: q.endDate,
      updatedAfter: q.updatedAfter,
      updatedBefore: q.updatedBefore,
      ...(statuses.size === 1 ? { open: statuses.has('open') } : {}),
      limit: MAX_REQUESTS,
    };
  }
  const rows = await findOpen311Requests(deps.db, caller.externalSystemId, caller.tenantId, filter);
  return rows.map((r) => serviceRequest(r, lang, media));
}

/** GET requests/{id}: a list of one, or 404. */
export async function getOpen311Request(deps: ServiceDeps, caller: Open311Caller, id: string, lang: Language, media: MediaLink): Promise<ServiceRequest[]> {
  const rows = await findOpen311Requests(deps.db, caller.externalSystemId, caller.tenantId, { alertNumbers: [id], limit: 1 });
  if (rows.length === 0) throw new AppError('not-found', { resource: `service_request_id ${id}` });
  return rows.map((r) => serviceRequest(r, lang, media));
}

/**
 * GET tokens/{token}: the request's service_request_id, always. A request has its number
 * from the moment it is received, and GET requests lists it under that number at once
 * (Pending included), so the token must resolve to it at once too: a client that waited
 * for triage would meet its own report in the list under an id it did not know and
 * import it as somebody else's.
 */
export async function tokenAnswer(deps: ServiceDeps, caller: Open311Caller, token: string): Promise<TokenAnswer> {
  const [row] = await findOpen311Requests(deps.db, caller.externalSystemId, caller.tenantId, { alertId: token, limit: 1 });
  if (!row) throw new AppError('not-found', { resource: `token ${token}` });
  return [{ service_request_id: row.alert_number, token }];
}
