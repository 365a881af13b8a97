/**
 * Which admin API reads are kept for use without a connection, shared by the page
 * (offline/cache.ts, which makes the copies) and the service worker (sw.ts, which
 * answers from them when the network fails): what a crew opens in the street (with
 * the city's materials and reasons, so an order's reason reads in words), and
 * nothing an operator triages from. A list of alerts is kept only as an order's alerts
 * (`serviceOrderId`): the inbox, searches and the map always come from the server, so a
 * failed read there is an error that is retried, never an earlier list shown as today's.
 */

/** Cache Storage name of the kept answers. */
export const DATA_CACHE = 'lumen-data-v1';

const KEPT = /^\/api\/admin\/(session$|tenants$|teams$|service-orders($|\/[^/]+($|\/(timeline|completion|photos\/[^/]+)$))|alerts\/[^/]+$|tenants\/[^/]+\/(materials|reasons)$)/;

/** True for a read whose answer is kept (path and query of a same-origin URL). */
export function isKeptRead(url: URL): boolean {
  if (url.pathname === '/api/admin/alerts') return url.searchParams.has('serviceOrderId');
  return KEPT.test(url.pathname);
}
