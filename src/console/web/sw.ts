/**
 * The console's service worker (served as /console/sw.js, scope /console/): the app
 * shell from its cache, so the console opens without a connection, and the kept copies
 * of the admin API's answers (offline/cache.ts) when the network fails. The server
 * prefixes this file with the shell's hashed file names (`self.LUMEN_SHELL`), so a new
 * build is a new worker and old shells are dropped. Nothing here changes data: a
 * completion made offline waits in the page's outbox (offline/outbox.ts).
 */
import { DATA_CACHE, isKeptRead } from './offline/kept.js';

/* The worker's global scope, typed by hand: the console's tsconfig has the DOM's types. */
interface WorkerScope {
  LUMEN_SHELL?: string[];
  location: Location;
  skipWaiting(): Promise<void>;
  clients: { claim(): Promise<void> };
  addEventListener(type: 'install' | 'activate', fn: (e: { waitUntil(p: Promise<unknown>): void }) => void): void;
  addEventListener(type: 'fetch', fn: (e: { request: Request; respondWith(r: Promise<Response> | Response): void; waitUntil(p: Promise<unknown>): void }) => void): void;
}

const scope = self as unknown as WorkerScope;
const SHELL = scope.LUMEN_SHELL ?? [];
/** The page every console path answers with (client routes), kept under one key. */
const PAGE = '/console/';
const SHELL_CACHE = `lumen-shell-${hash(SHELL.join('|'))}`;

function hash(text: string): string {
  let h = 5381;
  for (let i = 0; i < text.length; i++) h = ((h * 33) ^ text.charCodeAt(i)) >>> 0;
  return h.toString(36);
}

scope.addEventListener('install', (e) => {
  e.waitUntil(
    caches
      .open(SHELL_CACHE)
      .then((c) => c.addAll([PAGE, ...SHELL]))
      .then(() => scope.skipWaiting()),
  );
});

scope.addEventListener('activate', (e) => {
  e.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((n) => n.startsWith('lumen-shell-') && n !== SHELL_CACHE).map((n) => caches.delete(n))))
      .then(() => scope.clients.claim()),
  );
});

const PHOTO = /^\/api\/admin\/(service-orders\/[^/]+\/photos|alerts\/[^/]+\/attachments)\/[^/]+$/;

scope.addEventListener('fetch', (e) => {
  const req = e.request;
  const url = new URL(req.url);
  if (url.origin !== scope.location.origin) return;
  // Signing out empties the kept answers: the next person on this phone sees none of them.
  if (req.method === 'DELETE' && url.pathname === '/api/admin/session') {
    e.waitUntil(caches.delete(DATA_CACHE));
    return;
  }
  if (req.method !== 'GET') return;
  if (req.mode === 'navigate' && (url.pathname === '/console' || url.pathname.startsWith('/console/'))) {
    e.respondWith(fetch(req).catch(() => caches.match(PAGE, { cacheName: SHELL_CACHE }).then((r) => r ?? Response.error())));
    return;
  }
  if (url.pathname.startsWith('/console/assets/')) {
    e.respondWith(caches.match(req, { cacheName: SHELL_CACHE }).then((r) => r ?? fetch(req)));
    return;
  }
  if (PHOTO.test(url.pathname)) {
    // A stored photo never changes: the kept copy first, else the network (and keep it).
    e.respondWith(
      caches.open(DATA_CACHE).then(async (c) => {
        const kept = await c.match(req.url);
        if (kept) return kept;
        const res = await fetch(req);
        if (res.ok) await c.put(req.url, res.clone());
        return res;
      }),
    );
    return;
  }
  if (isKeptRead(url)) {
    // The network first (the page keeps the copy); the kept copy when it fails.
    e.respondWith(fetch(req).catch(async (err: unknown) => (await caches.match(req.url, { cacheName: DATA_CACHE })) ?? Promise.reject(err)));
  }
});
