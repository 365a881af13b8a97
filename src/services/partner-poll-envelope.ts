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

// RFC 3339 date-time (the `format: date-time` of the contract): an offset is required.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * An RFC 3339 date-time as a Date, or null when the text is not one. Fractions
 * beyond milliseconds are cut (never rounded up), so a cursor derived from it is
 * never later than the partner's own value: at worst an item is read twice.
 */
export function parseDateTime(text: unknown): Date | null {
  if (typeof text !== 'string') return null;
  const m = DATE_TIME.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac, offset] = m;
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > 31 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 60) return null;
  const ms = (frac ?? '').slice(0, 3).padEnd(3, '0');
  const iso = `${y}-${mo}-${d}T${h}:${mi}:${Number(s) === 60 ? '59' : s}.${ms}${offset!.toUpperCase()}`;
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return null;
  const date = new Date(t);
  // Date.parse rolls 2026-02-30 over into March; a calendar date that does not exist is refused.
  const local = new Date(t + offsetMinutes(offset!) * 60_000);
  if (local.getUTCDate() !== day || local.getUTCMonth() + 1 !== month) return null;
  return date;
}

function offsetMinutes(offset: string): number {
  if (offset === 'Z' || offset === 'z') return 0;
  const sign = offset.startsWith('-') ? -1 : 1;
  return sign * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6)));
}

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
