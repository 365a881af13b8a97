import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { findOpen311Media } from '../db/repositories/open311.repository.js';
import { blobStoreFor } from '../lib/blob-store/index.js';
import { AppError } from '../lib/errors.js';
import type { ServiceDeps } from '../services/deps.js';

/** The service's secret key as a KeyObject, made once per key (see mediaSignature). */
const keys = new WeakMap<Buffer, KeyObject>();

/**
 * Where an Open311 consumer fetches a request's photo: a capability URL on Lumen itself
 * (`<LUMEN_PUBLIC_URL>/open311/v2/media/<attachment id>/<signature>`), never the URL a
 * partner sent. GeoReport clients show `media_url` in an `<img>` with no key, so the
 * link itself is the permission: an HMAC of the attachment id under the service's
 * secret key, which nobody can forge or derive from another photo's link.
 */
export function mediaSignature(secretKey: Buffer, attachmentId: string): string {
  // As a KeyObject, made once: an HMAC keyed by a Buffer checks on every call whether it is one (several µs each).
  let key = keys.get(secretKey);
  if (!key) keys.set(secretKey, (key = createSecretKey(secretKey)));
  return createHmac('sha256', key).update(`open311-media:${attachmentId}`).digest('base64url').slice(0, 32);
}

export function mediaUrl(publicOrigin: string, secretKey: Buffer, attachmentId: string): string {
  return `${publicOrigin}/open311/v2/media/${attachmentId}/${mediaSignature(secretKey, attachmentId)}`;
}

/** The signature matches the id (constant time). */
export function validMediaSignature(secretKey: Buffer, attachmentId: string, signature: string): boolean {
  const want = Buffer.from(mediaSignature(secretKey, attachmentId));
  const got = Buffer.from(signature);
  return got.length === want.length && timingSafeEqual(got, want);
}

/** The media path's parts, or null: `media/<uuid>/<signature>`. */
export const MEDIA_PATH = /^media\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/([A-Za-z0-9_-]{32})$/;

/** A stored photo, by its signed link: the bytes and the headers that keep a browser from reading them as anything but an image. */
export async function open311Media(deps: ServiceDeps, attachmentId: string, signature: string): Promise<{ bytes: Buffer; contentType: string; headers: Record<string, string> }> {
  const resource = 'media';
  if (!validMediaSignature(deps.config.secretKey, attachmentId, signature)) throw new AppError('not-found', { resource });
  const row = await findOpen311Media(deps.db, attachmentId);
  const bytes = row ? await blobStoreFor(deps.config.blobStore).get(row.blob_path) : null;
  if (!row || !bytes) throw new AppError('not-found', { resource });
  const ext = row.content_type === 'image/png' ? 'png' : row.content_type === 'image/webp' ? 'webp' : 'jpg';
  return {
    bytes,
    contentType: row.content_type,
    headers: {
      // The bytes were checked to be an image of this type at intake; a browser must not guess otherwise.
      'x-content-type-options': 'nosniff',
      'content-disposition': `inline; filename="photo-${attachmentId.slice(0, 8)}.${ext}"`,
      'content-security-policy': "sandbox; default-src 'none'",
      // A stored photo never changes; anyone holding the link may keep it.
      'cache-control': 'public, max-age=86400, immutable',
    },
  };
}
