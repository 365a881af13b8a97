/**
 * Reading what a partner's polling endpoint answers (N7, openapi/partner-polling.yaml
 * PartnerRequestBatch): the recommended envelope `{items, nextSince, hasMore}`, the
 * same with the list under `requests` or `data`, or a bare array. Pure functions.
 */

/** The list fields Lumen reads, in the order it looks for them. */
export const LIST_FIELDS = ['items', 'requests', 'data'] as const;

export interface PartnerBatch {
  readonly items: readonly unknown[];
  /** The partner's cursor for the next call, normalised to UTC milliseconds; null when absent. */
  readonly nextSince: Date | null;
  readonly hasMore: boolean;
  /** Where the list was found (for diagnostics). */
  readonly listField: (typeof LIST_FIELDS)[number] | 'array';
}

/** The answer is not one of the envelopes Lumen reads. */
export class EnvelopeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EnvelopeError';
  }
}

export { parseDateTime } from '../../lib/time.js';
import { parseDateTime } from '../../lib/time.js';

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** The batch in a parsed JSON answer; throws EnvelopeError naming what is wrong. */
export function parseBatch(body: unknown): PartnerBatch {
  if (Array.isArray(body)) return { items: body, nextSince: null, hasMore: false, listField: 'array' };
  if (body === null || typeof body !== 'object') {
    throw new EnvelopeError(`the answer is ${describe(body)}, not an object with "items" (or "requests" or "data") nor an array`);
  }
  const obj = body as Record<string, unknown>;
  const listField = LIST_FIELDS.find((f) => f in obj && obj[f] !== undefined);
  if (!listField) throw new EnvelopeError('the answer has no "items" list (nor "requests" or "data")');
  const items = obj[listField];
  if (!Array.isArray(items)) throw new EnvelopeError(`"${listField}" is ${describe(items)}, not an array`);

  let nextSince: Date | null = null;
  const rawNext = obj.nextSince;
  if (rawNext !== undefined && rawNext !== null) {
    nextSince = parseDateTime(rawNext);
    if (!nextSince) throw new EnvelopeError(`"nextSince" is not an ISO 8601 date-time with an offset (got ${JSON.stringify(rawNext).slice(0, 80)})`);
  }

  const rawMore = obj.hasMore;
  if (rawMore !== undefined && rawMore !== null && typeof rawMore !== 'boolean') {
    throw new EnvelopeError(`"hasMore" is ${describe(rawMore)}, not a boolean`);
  }
  return { items, nextSince, hasMore: rawMore === true, listField };
}

/** The largest `requestedAt` among the items that carry a readable one, or null. */
export function latestRequestedAt(items: readonly unknown[]): Date | null {
  let latest: Date | null = null;
  for (const item of items) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) continue;
    const at = parseDateTime((item as Record<string, unknown>).requestedAt);
    if (at && (!latest || at > latest)) latest = at;
  }
  return latest;
}

/**
 * The cursor after a fully stored batch: the partner's nextSince when it gave one,
 * else the largest requestedAt seen (never behind the current cursor, so a batch of
 * old re-sent requests cannot move it back), else the current cursor.
 */
export function nextCursor(current: Date | null, batch: PartnerBatch): Date | null {
  if (batch.nextSince) return batch.nextSince;
  const latest = latestRequestedAt(batch.items);
  if (!latest) return current;
  return current && current > latest ? current : latest;
}
