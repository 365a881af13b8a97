/**
 * A reference typed into a URL (`/alerts/42`, `/orders/OS-2026-00042`) names an alert or
 * order by its number, which two cities may share: the API is told the city the
 * operator has selected (the switcher), so the number resolves there instead of
 * answering "ambiguous". An id (UUID) names one object anywhere, and goes alone: it may
 * be of another granted city (a link from there), which the API resolves by itself.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function cityHint(ref: string, tenantId: string): { tenantId: string } | Record<string, never> {
  return UUID.test(ref) || !tenantId ? {} : { tenantId };
}

/**
 * The pole page of a pole code: a code is unique only within its city, so a link from
 * an order or alert of another granted city than the selected one names that city.
 */
export function polePath(code: string, tenantId: string, selected: string): string {
  return `/poles/${encodeURIComponent(code)}${tenantId && tenantId !== selected ? `?city=${encodeURIComponent(tenantId)}` : ''}`;
}
