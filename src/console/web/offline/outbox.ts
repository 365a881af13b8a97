/**
 * Completions waiting to be sent. A crew's completion is written here first (IndexedDB),
 * online or not, then sent: its photos (each under the id made here) and then the
 * completion (under the completion id made here). Both are idempotent on the server, so
 * a send cut by a lost connection is simply sent again, and the order is completed
 * exactly once. Sent when the connection returns ('online'), when the console starts,
 * and every 30 s while something waits.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, call } from '../api.js';

export interface QueuedPhoto {
  id: string;
  contentType: 'image/jpeg' | 'image/png' | 'image/webp';
  data: Blob;
}

export interface QueuedCompletion {
  completionId: string;
  orderId: string;
  orderNumber: string;
  tenantId: string;
  note: string;
  materials: { materialId: string; quantity: number }[];
  photos: QueuedPhoto[];
  queuedAt: string;
  /** The server refused it (not a lost connection): its words, kept for the crew to see. */
  refused?: { title: string; detail: string };
}

const DB_NAME = 'lumen-outbox';
const STORE = 'completions';
const CHANGED = 'lumen-outbox-changed';

function open(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE, { keyPath: 'completionId' });
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function run<T>(mode: IDBTransactionMode, work: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const db = await open();
  try {
    return await new Promise<T>((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const req = work(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(req.result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    });
  } finally {
    db.close();
  }
}

function changed(): void {
  window.dispatchEvent(new Event(CHANGED));
}

export async function queued(): Promise<QueuedCompletion[]> {
  return run('readonly', (s) => s.getAll() as IDBRequest<QueuedCompletion[]>);
}

export async function enqueue(entry: QueuedCompletion): Promise<void> {
  await run('readwrite', (s) => s.put(entry));
  changed();
}

async function remove(completionId: string): Promise<void> {
  await run('readwrite', (s) => s.delete(completionId));
  changed();
}

/** Forgets a refused completion (the crew will complete again with what the server asks). */
export async function discard(completionId: string): Promise<void> {
  await remove(completionId);
}

function base64(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

type Sent = { kind: 'sent'; orderId: string } | { kind: 'offline' } | { kind: 'refused' };

async function send(entry: QueuedCompletion): Promise<Sent> {
  try {
    for (const p of entry.photos) {
      await call('uploadServiceOrderPhoto', { path: { serviceOrderId: entry.orderId, photoId: p.id }, body: { contentType: p.contentType, data: await base64(p.data) } });
    }
    await call('completeServiceOrder', {
      path: { serviceOrderId: entry.orderId },
      body: { completionId: entry.completionId, ...(entry.note ? { note: entry.note } : {}), ...(entry.materials.length ? { materials: entry.materials } : {}), ...(entry.photos.length ? { photoIds: entry.photos.map((p) => p.id) } : {}) },
    });
    await remove(entry.completionId);
    return { kind: 'sent', orderId: entry.orderId };
  } catch (err) {
    // No connection, a server that does not answer, or a session to sign into again: kept as it is.
    if (!(err instanceof ApiError) || err.status === 0 || err.status === 401 || err.status === 408 || err.status === 429 || err.status >= 500) return { kind: 'offline' };
    await run('readwrite', (s) => s.put({ ...entry, refused: { title: err.title, detail: err.detail } }));
    changed();
    return { kind: 'refused' };
  }
}

let flushing: Promise<string[]> | null = null;

/** Sends what waits (one send at a time); the ids of the orders completed now. */
export function flush(): Promise<string[]> {
  flushing ??= (async () => {
    const done: string[] = [];
    try {
      for (const entry of await queued()) {
        if (entry.refused) continue;
        const r = await send(entry);
        if (r.kind === 'offline') break;
        if (r.kind === 'sent') done.push(r.orderId);
      }
    } finally {
      flushing = null;
    }
    if (done.length) window.dispatchEvent(new CustomEvent('lumen-completions-sent', { detail: done }));
    return done;
  })();
  return flushing;
}

let started = false;

/** Sends what waits now, whenever the connection returns, and every 30 s while something waits. */
export function startOutbox(): void {
  if (started || typeof indexedDB === 'undefined') return;
  started = true;
  window.addEventListener('online', () => void flush());
  setInterval(() => {
    if (navigator.onLine) void queued().then((q) => (q.some((e) => !e.refused) ? flush() : undefined));
  }, 30_000);
  if (navigator.onLine) void flush();
}

/** The completion of this order waiting to be sent, if any; follows the outbox as it changes. */
export function useQueuedCompletion(orderId: string | undefined, onSent: () => void): QueuedCompletion | null {
  const [entry, setEntry] = useState<QueuedCompletion | null>(null);
  useEffect(() => {
    if (!orderId || typeof indexedDB === 'undefined') return;
    const read = () => void queued().then((all) => setEntry(all.find((e) => e.orderId === orderId) ?? null), () => setEntry(null));
    const sent = (e: Event) => {
      if ((e as CustomEvent<string[]>).detail.includes(orderId)) onSent();
    };
    read();
    window.addEventListener(CHANGED, read);
    window.addEventListener('lumen-completions-sent', sent);
    return () => {
      window.removeEventListener(CHANGED, read);
      window.removeEventListener('lumen-completions-sent', sent);
    };
  }, [orderId]);
  return entry;
}

/**
 * A phone's photo made small enough to send over a weak connection and to fit the
 * server's 5 MiB: at most 1600 px on its longer side, as JPEG. A small PNG, JPEG or WebP
 * is kept as it is.
 */
export async function shrinkPhoto(file: File): Promise<{ contentType: QueuedPhoto['contentType']; data: Blob }> {
  const type = file.type as QueuedPhoto['contentType'];
  const accepted = type === 'image/jpeg' || type === 'image/png' || type === 'image/webp';
  if (accepted && file.size <= 1024 * 1024) return { contentType: type, data: file };
  const bitmap = await createImageBitmap(file);
  const scale = Math.min(1, 1600 / Math.max(bitmap.width, bitmap.height));
  const canvas = document.createElement('canvas');
  canvas.width = Math.round(bitmap.width * scale);
  canvas.height = Math.round(bitmap.height * scale);
  canvas.getContext('2d')!.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  bitmap.close();
  const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, 'image/jpeg', 0.85));
  if (!blob) throw new Error('the photo could not be read');
  return { contentType: 'image/jpeg', data: blob };
}
