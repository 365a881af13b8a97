/**
 * The day's orders, readable without a connection. The page keeps a copy of the admin
 * API's answers a crew needs in the street (its session, the order lists, each order,
 * its alerts, timeline, completion, photos, and the city's materials and reasons) in
 * Cache Storage; the service worker (sw.ts) answers from that copy when the network fails. Copies are
 * made by the page (not the worker), so they are kept from the first visit on, before
 * the worker controls the page. Signing out empties the copy.
 */
import { call, client } from '../api.js';
import { cityHint } from '../refs.js';
import { DATA_CACHE, isKeptRead } from './kept.js';

/** Which reads are kept (offline/kept.ts): what a crew opens in the street; never the inbox, exports, audit or partner data. */
export function isKept(url: string): boolean {
  const u = new URL(url, location.origin);
  return u.origin === location.origin && isKeptRead(u);
}

function keep(request: Request, response: Response): Promise<void> {
  if (typeof caches === 'undefined' || request.method !== 'GET' || !response.ok || !isKept(request.url)) return Promise.resolve();
  // Cloned now: the client reads the body as soon as this returns.
  const copy = response.clone();
  return caches.open(DATA_CACHE).then((cache) => cache.put(request.url, copy));
}

let installed = false;

/** Starts keeping copies of the API's answers (once). */
export function keepAnswers(): void {
  if (installed) return;
  installed = true;
  client.interceptors.response.use((response, request) => {
    void keep(request, response).catch(() => undefined);
    return response;
  });
}

/** Forgets every kept answer (sign-out: the next person on this phone sees nothing of it). */
export async function forgetAnswers(): Promise<void> {
  if (typeof caches !== 'undefined') await caches.delete(DATA_CACHE);
}

const warmed = new Set<string>();

/**
 * Reads now, while there is a connection, what each of these orders' pages will need
 * later without one: the order, its alerts, timeline and completion with its photos,
 * and the city's materials. Each order once per page load; open orders only, at most 40.
 */
export async function warmOrders(orders: { id: string; tenantId: string; status: string }[], selectedTenant: string): Promise<void> {
  if (!navigator.onLine) return;
  const open = orders.filter((o) => (o.status === 'ASSIGNED' || o.status === 'IN_PROGRESS' || o.status === 'OPEN') && !warmed.has(o.id)).slice(0, 40);
  const tenants = new Set<string>();
  for (const o of open) {
    warmed.add(o.id);
    tenants.add(o.tenantId);
    try {
      await Promise.all([
        call('getServiceOrder', { path: { serviceOrderId: o.id }, query: cityHint(o.id, selectedTenant) }),
        call('listAlerts', { query: { tenantId: o.tenantId, serviceOrderId: o.id, pageSize: 100 } }),
        call('getServiceOrderTimeline', { path: { serviceOrderId: o.id } }),
        call('getServiceOrderCompletion', { path: { serviceOrderId: o.id } }).then((c) => Promise.all(c.photos.map((p) => fetch(photoUrl(o.id, p.id)).then((r) => keep(new Request(r.url), r))))),
      ]);
    } catch {
      warmed.delete(o.id); // tried again on the next visit of the list
    }
  }
  for (const tenantId of tenants) {
    await call('listMaterials', { path: { tenantId } }).catch(() => undefined);
    // The order's reason in words, not its code, without a connection.
    await call('listReasons', { path: { tenantId } }).catch(() => undefined);
  }
}

export function photoUrl(orderId: string, photoId: string): string {
  return `/api/admin/service-orders/${encodeURIComponent(orderId)}/photos/${encodeURIComponent(photoId)}`;
}

/** Registers the service worker (sw.js, scope /console/), where the browser has one. */
export function registerWorker(): void {
  if (!('serviceWorker' in navigator)) return;
  navigator.serviceWorker.register('/console/sw.js', { scope: '/console/' }).catch(() => undefined);
}
