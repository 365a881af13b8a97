import type { TenantRow } from '../../db/repositories/tenant.repository.js';
import type { Language } from '../../lib/i18n.js';
import type { ServiceDeps } from '../deps.js';
import { geocode } from '../geocoding/index.js';
import { extentOf, metresToBox } from './extent.js';

/** One answer of the set-location search (searchTenantPlaces). */
export interface Place {
  label: string;
  latitude: number;
  longitude: number;
  source: 'pole' | 'geocoder';
}

/** A hit this far outside the city's extent is another city's street of the same name. */
const OUTSIDE_TOLERANCE_M = 1000;

/**
 * The search box of the set-location map: a pole of the city by its code, else what
 * intake's geocoding chain finds for the text as an address (the city's poles on that
 * street and number first, then the configured geocoder, asked about this city), kept
 * only when it lies in the city's extent. A city without an extent keeps only its
 * poles' answers: nothing tells whether a geocoder's answer is in the city.
 */
export async function searchPlaces(deps: ServiceDeps, tenant: TenantRow, q: string, lang: Language, signal?: AbortSignal): Promise<Place[]> {
  const out: Place[] = [];
  const poleWord = lang === 'en' ? 'Pole' : 'Poste';
  const byCode = await deps.db
    .selectFrom('pole')
    .select(['code', 'address', 'latitude', 'longitude'])
    .where('tenant_id', '=', tenant.id)
    .where('code', '=', q)
    .where('active', '=', true)
    .executeTakeFirst();
  // A pole's code names one place: nothing to look up as an address.
  if (byCode) return [{ label: `${poleWord} ${byCode.code}${byCode.address ? ` — ${byCode.address}` : ''}`, latitude: byCode.latitude, longitude: byCode.longitude, source: 'pole' }];

  const comma = q.lastIndexOf(',');
  const tail = comma >= 0 ? q.slice(comma + 1).trim() : '';
  const [street, number] = comma >= 0 && /[0-9]/.test(tail) ? [q.slice(0, comma).trim(), tail] : [q, null];
  if (street.length < 2) return out;
  const found = await geocode(deps, { tenantId: tenant.id, city: tenant.name, brazil: tenant.ibge_code !== null, street, number, neighborhood: null }, { signal, deadline: Date.now() + deps.config.geocoderTimeoutMs });
  const hit = found.hit;
  if (hit) {
    const where = extentOf(tenant);
    const inCity = hit.source === 'poles' || (where !== null && metresToBox(where.extent, hit.latitude, hit.longitude) <= OUTSIDE_TOLERANCE_M);
    if (inCity) out.push({ label: number ? `${street}, ${number}` : street, latitude: hit.latitude, longitude: hit.longitude, source: hit.source === 'poles' ? 'pole' : 'geocoder' });
  }
  return out;
}
