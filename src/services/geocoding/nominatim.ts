import { OutboundError, outboundRequest } from '../../lib/outbound-http.js';
import { VERSION } from '../../version.js';
import type { GeocodeHit, GeocodeQuery } from './index.js';

/** A search answer is a short JSON list; anything larger is not a geocoder talking. */
const MAX_RESPONSE_BYTES = 512 * 1024;

/** The free-form query: "Rua Augusta, 1500, Consolação, São Paulo" (no "S/N"-like numbers). */
export function searchText(q: GeocodeQuery): string {
  const number = q.number && /[0-9]/.test(q.number) ? q.number.trim() : null;
  return [q.street.trim(), number, q.neighborhood?.trim() || null, q.city?.trim() || null].filter(Boolean).join(', ');
}

/**
 * One call to a Nominatim-compatible /search (format=jsonv2, limit=1), identified by
 * the User-Agent Lumen/<version> as the Nominatim usage policy asks. Returns a hit,
 * or why there is none; never throws for the service's own failures.
 */
export async function geocodeByNominatim(
  baseUrl: string,
  q: GeocodeQuery,
  opts: { timeoutMs: number; allowLoopback: boolean; signal?: AbortSignal },
): Promise<{ hit: GeocodeHit } | { miss: string }> {
  const url = new URL(`${baseUrl}/search`);
  url.searchParams.set('format', 'jsonv2');
  url.searchParams.set('limit', '1');
  url.searchParams.set('q', searchText(q));
  if (q.brazil) url.searchParams.set('countrycodes', 'br');
  try {
    const res = await outboundRequest({
      url: url.toString(),
      headers: { 'user-agent': `Lumen/${VERSION}`, accept: 'application/json', 'accept-language': 'pt-BR,pt;q=0.9,en;q=0.5' },
      timeoutMs: opts.timeoutMs,
      maxResponseBytes: MAX_RESPONSE_BYTES,
      allowLoopback: opts.allowLoopback,
      maxRedirects: 2,
      signal: opts.signal,
    });
    if (res.status !== 200) return { miss: `HTTP ${res.status}` };
    let parsed: unknown;
    try {
      parsed = JSON.parse(res.body.toString('utf8'));
    } catch {
      return { miss: 'answer is not JSON' };
    }
    if (!Array.isArray(parsed)) return { miss: 'answer is not a list' };
    if (parsed.length === 0) return { miss: 'no result' };
    const first = parsed[0] as { lat?: unknown; lon?: unknown };
    const latitude = coordinate(first.lat);
    const longitude = coordinate(first.lon);
    if (latitude === null || longitude === null || Math.abs(latitude) > 90 || Math.abs(longitude) > 180) {
      return { miss: 'result without valid coordinates' };
    }
    return { hit: { latitude, longitude, source: 'geocoder' } };
  } catch (err) {
    if (err instanceof OutboundError) return { miss: `${err.kind}: ${err.message}` };
    throw err;
  }
}

/** Nominatim sends coordinates as decimal strings; some compatible services send numbers. */
function coordinate(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string' || !/^\s*-?[0-9]+(\.[0-9]+)?\s*$/.test(value)) return null;
  return Number(value);
}
