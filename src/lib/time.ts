/**
 * Time helpers shared by every place that reads a client's timestamp: request bodies,
 * query cursors and partners' polling answers all use the contract's date-time.
 */

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
