import { createHash } from 'node:crypto';
import type { OrderPhoto } from '../../../generated/admin/types.gen.js';
import { AppError, type FieldError } from '../../lib/errors.js';
import { blobStoreFor } from '../../lib/blob-store/index.js';
import type { Executor } from '../../db/database.js';
import type { AttachmentContentType } from '../../db/tables/intake.js';
import type { ServiceOrderPhotoTable } from '../../db/tables/completion.js';
import type { Selectable } from 'kysely';
import { decodeStrictBase64, EXTENSIONS, sniffImageType } from '../attachments/index.js';
import { actorLabel, type Actor } from '../audit/index.js';
import { requireTenantRole, type AdminAccess } from '../operators/index.js';
import type { ServiceDeps } from '../deps.js';
import { isUuid } from '../tenants/index.js';

/** An order the caller may name (its id and tenant, as the operations' resolver gives them). */
export interface OrderRef {
  id: string;
  tenantId: string;
}

/** Photos one order may hold: a crew documents a repair, not a survey. */
export const MAX_PHOTOS_PER_ORDER = 20;

type PhotoRow = Selectable<ServiceOrderPhotoTable>;

export function photoView(row: PhotoRow): OrderPhoto {
  return { id: row.id, contentType: row.content_type, sizeBytes: row.size_bytes, uploadedBy: row.uploaded_by, uploadedAt: row.uploaded_at.toISOString() };
}

/** Where an order's photo lives in the blob store (beside the alerts' attachments, under the tenant). */
export function photoBlobPath(tenantId: string, orderId: string, photoId: string, contentType: AttachmentContentType): string {
  return `tenants/${tenantId}/orders/${orderId}/${photoId}.${EXTENSIONS[contentType]}`;
}

function invalid(pointer: string, message: string): AppError {
  const errors: FieldError[] = [{ pointer, message }];
  return new AppError('validation-failed', { count: 1 }, errors);
}

const DECODE_MESSAGES = {
  'data-uri': 'must be base64 alone, without a data: URI prefix',
  'invalid-base64': 'is not strict base64',
  'too-large': 'is larger than 5 MiB',
  empty: 'is empty',
} as const;

async function findPhoto(db: Executor, photoId: string): Promise<PhotoRow | undefined> {
  return db.selectFrom('service_order_photo').selectAll().where('id', '=', photoId).executeTakeFirst();
}

/**
 * Stores an after-repair photo under the client's id. The bytes are checked as partner
 * attachments are (strict base64, at most 5 MiB, magic bytes of the declared type). The
 * same id with the same bytes is the same photo (nothing stored twice); with other
 * bytes, or on another order, it is refused. The blob is written before the row, so a
 * row always names a stored blob (a blob left by a failed insert is overwritten by the
 * retry, which writes the same path).
 */
export async function uploadOrderPhoto(deps: ServiceDeps, actor: Actor, order: OrderRef, photoId: string, input: { contentType: AttachmentContentType; data: string }): Promise<OrderPhoto> {
  requireTenantRole(actor.access, order.tenantId, 'triager', `service order ${order.id}`);
  if (!isUuid(photoId)) throw new AppError('not-found', { resource: `photo ${photoId}` });
  const decoded = decodeStrictBase64(input.data);
  if (!decoded.ok) throw invalid('/data', DECODE_MESSAGES[decoded.reason]);
  const sniffed = sniffImageType(decoded.bytes);
  if (sniffed !== input.contentType) throw invalid('/data', `is not a ${input.contentType} image (its bytes say ${sniffed ?? 'no image type Lumen accepts'})`);
  const sha256 = createHash('sha256').update(decoded.bytes).digest();

  const same = (row: PhotoRow): OrderPhoto => {
    if (row.service_order_id !== order.id || !row.content_sha256.equals(sha256)) throw new AppError('idempotency-key-reused', {}, [{ pointer: '/data', message: 'this photo id was already used for another image' }]);
    return photoView(row);
  };
  const existing = await findPhoto(deps.db, photoId);
  if (existing) return same(existing);
  const count = await deps.db.selectFrom('service_order_photo').select((eb) => eb.fn.countAll<string>().as('n')).where('service_order_id', '=', order.id).executeTakeFirstOrThrow();
  if (Number(count.n) >= MAX_PHOTOS_PER_ORDER) throw invalid('', `the order already has ${MAX_PHOTOS_PER_ORDER} photos`);

  const path = photoBlobPath(order.tenantId, order.id, photoId, input.contentType);
  await blobStoreFor(deps.config.blobStore).put(path, decoded.bytes, input.contentType);
  const inserted = await deps.db
    .insertInto('service_order_photo')
    .values({ id: photoId, tenant_id: order.tenantId, service_order_id: order.id, content_type: input.contentType, blob_path: path, size_bytes: decoded.bytes.length, content_sha256: sha256, uploaded_by: actorLabel(actor) })
    .onConflict((oc) => oc.column('id').doNothing())
    .returningAll()
    .executeTakeFirst();
  // Two uploads of one id at once: the second insert did nothing and reads the first's row.
  return inserted ? photoView(inserted) : same((await findPhoto(deps.db, photoId))!);
}

export interface PhotoContent {
  bytes: Buffer;
  contentType: AttachmentContentType;
  sha256: string;
}

/** The stored bytes of one of the order's photos; not-found for another order's photo or a missing blob. */
export async function orderPhotoContent(deps: ServiceDeps, access: AdminAccess, order: OrderRef, photoId: string): Promise<PhotoContent> {
  const resource = `photo ${photoId}`;
  requireTenantRole(access, order.tenantId, 'viewer', resource);
  const row = isUuid(photoId) ? await findPhoto(deps.db, photoId) : undefined;
  if (!row || row.service_order_id !== order.id) throw new AppError('not-found', { resource });
  const bytes = await blobStoreFor(deps.config.blobStore).get(row.blob_path);
  if (!bytes) throw new AppError('not-found', { resource });
  return { bytes, contentType: row.content_type, sha256: row.content_sha256.toString('hex') };
}
