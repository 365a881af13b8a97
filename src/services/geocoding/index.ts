import type { Executor } from '../../db/database.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../lib/logger.js';
import { geocodeByPoles } from './poles.js';
import { geocodeByNominatim } from './nominatim.js';

/** What a request says about where it is. */
export interface GeocodeQuery {
  tenantId: string;
  /** The tenant's city name, for the HTTP geocoder; null when unknown. */
  city: string | null;
  /** True when the tenant is a Brazilian municipality (it has an IBGE code). */
  brazil: boolean;
  street: string;
  number: string | null;
  neighborhood: string | null;
}

export interface GeocodeHit {
  latitude: number;
  longitude: number;
  source: 'poles' | 'geocoder';
}

export interface GeocodeOutcome {
  hit: GeocodeHit | null;
  /** Why each provider had no answer, for logs ("poles: no match; geocoder: timeout ..."). */
  misses: string[];
}

export interface GeocodeDeps {
  readonly config: Config;
  readonly db: Executor;
  readonly log: Logger;
}

/**
 * The provider chain of N8: the tenant's own poles first (address match), then the
 * Nominatim-compatible service when LUMEN_GEOCODER_URL is set. `deadline` (epoch ms)
 * bounds the whole chain; each HTTP call is also bounded by geocoderTimeoutMs.
 */
export async function geocode(deps: GeocodeDeps, query: GeocodeQuery, opts: { deadline?: number; signal?: AbortSignal } = {}): Promise<GeocodeOutcome> {
  const misses: string[] = [];
  try {
    const byPoles = await geocodeByPoles(deps.db, query);
    if (byPoles) return { hit: byPoles, misses };
    misses.push('poles: no pole at that address');
  } catch (err) {
    deps.log.warn({ err }, 'pole geocoding failed');
    misses.push(`poles: ${(err as Error).message}`);
  }
  const url = deps.config.geocoderUrl;
  if (!url) {
    misses.push('geocoder: not configured');
    return { hit: null, misses };
  }
  const remaining = opts.deadline === undefined ? Infinity : opts.deadline - Date.now();
  const timeoutMs = Math.min(deps.config.geocoderTimeoutMs, remaining);
  if (timeoutMs < 50) {
    misses.push('geocoder: no time left');
    return { hit: null, misses };
  }
  const answer = await geocodeByNominatim(url, query, { timeoutMs, allowLoopback: deps.config.allowLoopback, signal: opts.signal });
  if ('hit' in answer) return { hit: answer.hit, misses };
  misses.push(`geocoder: ${answer.miss}`);
  return { hit: null, misses };
}

// This file is also the capability's only door (test/unit/boundaries.test.ts).
export { geocodeAlertAgain } from './alert-geocoding.js';
