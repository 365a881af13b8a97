import type { TenantRow } from '../../db/repositories/tenant.repository.js';

/** A WGS-84 box (the admin contract's Extent). */
export interface Extent {
  south: number;
  west: number;
  north: number;
  east: number;
}

/** The city's extent: the configured box when there is one, else the box of its active poles; null with neither. */
export function extentOf(row: TenantRow): { extent: Extent; source: 'configured' | 'poles' } | null {
  if (row.extent_south !== null && row.extent_west !== null && row.extent_north !== null && row.extent_east !== null) {
    return { extent: { south: row.extent_south, west: row.extent_west, north: row.extent_north, east: row.extent_east }, source: 'configured' };
  }
  if (row.pole_extent_south !== null && row.pole_extent_west !== null && row.pole_extent_north !== null && row.pole_extent_east !== null) {
    return { extent: { south: row.pole_extent_south, west: row.pole_extent_west, north: row.pole_extent_north, east: row.pole_extent_east }, source: 'poles' };
  }
  return null;
}

const EARTH_RADIUS_M = 6_371_008.8;
const rad = (deg: number) => (deg * Math.PI) / 180;

/** Great-circle distance in metres (haversine). */
export function metresBetween(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const dLat = rad(lat2 - lat1);
  const dLon = rad(lon2 - lon1);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(lat1)) * Math.cos(rad(lat2)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Metres from a point to the nearest point of a box; 0 inside it. */
export function metresToBox(box: Extent, lat: number, lon: number): number {
  const clampedLat = Math.min(Math.max(lat, box.south), box.north);
  const clampedLon = Math.min(Math.max(lon, box.west), box.east);
  return metresBetween(lat, lon, clampedLat, clampedLon);
}

/** A distance as an operator reads it: "850 m", "3,4 km", "2.687 km" (in English "3.4 km", "2,687 km"). */
export function distanceWords(metres: number, lang: 'pt-BR' | 'en'): string {
  if (metres < 1000) return `${Math.round(metres)} m`;
  const km = metres / 1000;
  return `${new Intl.NumberFormat(lang, { minimumFractionDigits: km < 10 ? 1 : 0, maximumFractionDigits: km < 10 ? 1 : 0 }).format(km)} km`;
}
