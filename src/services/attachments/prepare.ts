import { createHash, randomUUID } from 'node:crypto';
import type { Insertable } from 'kysely';
import type { BlobStore } from '../../lib/blob-store/index.js';
import type { Acquirer } from '../../lib/budget.js';
import type { Logger } from '../../lib/logger.js';
import type { AlertAttachmentTable, AttachmentContentType } from '../../db/tables/intake.js';
import type { AttachmentInput } from '../intake/index.js';
import { decodedLength, decodeStrictBase64, EXTENSIONS, MAX_ATTACHMENT_BYTES, sniffImageType } from './content.js';
import { downloadAttachment, type DownloadLimits } from './download.js';
import type { AttachmentErrorCode } from './messages.js';

/** What intake needs to know of an attachment the alert already has. */
export interface ExistingAttachment {
  id: string;
  source_hash: Buffer;
  content_type: AttachmentContentType;
  success: boolean;
  content_sha256: Buffer | null;
}

export type AttachmentRowInsert = Omit<Insertable<AlertAttachmentTable>, 'alert_id' | 'tenant_id'>;

/** What the transaction does for one attachment of the request. */
export type AttachmentAction =
  /** A new attachment of the alert (stored, or failed). */
  | { kind: 'insert'; row: AttachmentRowInsert }
  /** An attachment that failed before and is now stored. */
  | { kind: 'store-failed'; id: string; patch: Pick<AttachmentRowInsert, 'success' | 'blob_path' | 'size_bytes' | 'content_sha256' | 'error_code' | 'error_params'> }
  /** Nothing to write: the same source or the same content is already there (the row `id`). */
  | { kind: 'existing'; id: string };

export interface PreparedAttachment {
  /** Position in the request. */
  index: number;
  input: AttachmentInput;
  action: AttachmentAction;
  /** A URL that failed now, for the manual-review list. */
  failure: { url: string; code: AttachmentErrorCode; detail: string; attempts: number } | null;
}

export interface PreparedAttachments {
  items: PreparedAttachment[];
  /** Blobs written for this request: removed again if the request does not commit them. */
  written: string[];
}

export interface PrepareDeps {
  readonly blobs: BlobStore;
  readonly log: Logger;
  readonly limits: DownloadLimits;
  /** Attachment bytes this request's city may hold at once (its share of attachmentMemory). */
  readonly memory: Acquirer;
}

type Fetched =
  | { ok: true; bytes: Buffer; sha256: Buffer }
  | { ok: false; code: AttachmentErrorCode; params: Record<string, string | number>; detail: string; attempts: number };

/** A first occurrence after it was fetched and, unless its content was stored already, written: its bytes are let go. */
type Kept =
  | { ok: true; sha256: Buffer; size: number; write: 'written' | 'failed' | 'skipped' }
  | { ok: false; code: AttachmentErrorCode; params: Record<string, string | number>; detail: string; attempts: number };

/**
 * "The same attachment", in one request or on a resend: the same URL or the same base64
 * text, declared with the same content type. The same bytes declared as another type
 * are another attachment, checked on their own (and refused when the type is wrong).
 */
export function sourceHash(input: AttachmentInput): Buffer {
  const h = createHash('sha256');
  if (input.kind === 'url') h.update('url\0').update(input.contentType).update('\0').update(input.url);
  else h.update('inline\0').update(input.contentType).update('\0').update(input.contentBase64);
  return h.digest();
}

/** The source hash rows written before the content type was part of it carry (the URL or base64 text alone). */
function legacySourceHash(input: AttachmentInput): Buffer {
  const h = createHash('sha256');
  if (input.kind === 'url') h.update('url\0').update(input.url);
  else h.update('inline\0').update(input.contentBase64);
  return h.digest();
}

export function blobPathOf(tenantId: string, alertId: string, attachmentId: string, contentType: AttachmentContentType): string {
  return `tenants/${tenantId}/alerts/${alertId}/${attachmentId}.${EXTENSIONS[contentType]}`;
}

export async function fetchContent(deps: PrepareDeps, input: AttachmentInput, signal?: AbortSignal): Promise<Fetched> {
  let bytes: Buffer;
  let attempts = 0;
  if (input.kind === 'inline') {
    const decoded = decodeStrictBase64(input.contentBase64);
    if (!decoded.ok) return { ok: false, code: decoded.reason, params: {}, detail: decoded.reason, attempts: 0 };
    bytes = decoded.bytes;
  } else {
    const res = await downloadAttachment(input.url, deps.limits, signal);
    if (!res.ok) return res;
    bytes = res.bytes;
    attempts = res.attempts;
  }
  if (bytes.length === 0) return { ok: false, code: 'empty', params: {}, detail: 'empty content', attempts };
  if (bytes.length > MAX_ATTACHMENT_BYTES) return { ok: false, code: 'too-large', params: {}, detail: `${bytes.length} bytes`, attempts };
  const detected = sniffImageType(bytes);
  if (detected !== input.contentType) {
    const params: Record<string, string> = { contentType: input.contentType };
    if (detected) params.detected = detected;
    return { ok: false, code: 'content-mismatch', params, detail: `declared ${input.contentType}, content is ${detected ?? 'not an image'}`, attempts };
  }
  return { ok: true, bytes, sha256: createHash('sha256').update(bytes).digest() };
}

/**
 * Fetches one attachment and writes its blob at `blobPath` (unless the alert already
 * stores that content), holding its bytes in the process's attachment memory only
 * meanwhile: an inline photo its decoded size, a download 5 MiB (the most it may bring)
 * until it is in, then its size. Each attachment lets go on its own, whatever the
 * request's others do, so waiting for room always ends.
 */
async function fetchAndStore(deps: PrepareDeps, input: AttachmentInput, target: { blobPath: string; stored: ReadonlySet<string> }, signal?: AbortSignal): Promise<Kept> {
  const lease = await deps.memory.acquire(input.kind === 'inline' ? Math.min(decodedLength(input.contentBase64), MAX_ATTACHMENT_BYTES) : MAX_ATTACHMENT_BYTES, signal);
  try {
    const got = await fetchContent(deps, input, signal);
    if (!got.ok) return got;
    lease.shrink(got.bytes.length);
    const kept = { ok: true as const, sha256: got.sha256, size: got.bytes.length };
    if (target.stored.has(got.sha256.toString('hex'))) return { ...kept, write: 'skipped' };
    try {
      await deps.blobs.put(target.blobPath, got.bytes, input.contentType, signal);
      return { ...kept, write: 'written' };
    } catch (err) {
      if (!signal?.aborted) deps.log.error({ err, blobPath: target.blobPath, store: deps.blobs.description }, 'attachment could not be stored');
      return { ...kept, write: 'failed' };
    }
  } finally {
    lease.release();
  }
}

/**
 * Everything slow about a request's attachments, done before its transaction:
 * decode or download, check size and magic bytes, and write the blobs. Returns, per
 * attachment, what the transaction must record. Content the alert already has (same
 * source, or same bytes) is not stored again; a source that failed before is tried again.
 */
export async function prepareAttachments(
  deps: PrepareDeps,
  args: { tenantId: string; alertId: string; inputs: readonly AttachmentInput[]; existing: readonly ExistingAttachment[] },
  signal?: AbortSignal,
): Promise<PreparedAttachments> {
  const hashes = args.inputs.map(sourceHash);
  const firstIndex = new Map<string, number>();
  hashes.forEach((h, i) => {
    if (!firstIndex.has(h.toString('hex'))) firstIndex.set(h.toString('hex'), i);
  });
  const existingBySource = new Map(args.existing.map((e) => [e.source_hash.toString('hex'), e]));
  // A row of an earlier release is found by its legacy hash when its declared type is the
  // same (a new alert has no rows: the photos are not hashed a second time for nothing).
  if (args.existing.length > 0) {
    args.inputs.forEach((input, i) => {
      const key = hashes[i]!.toString('hex');
      if (existingBySource.has(key)) return;
      const legacy = existingBySource.get(legacySourceHash(input).toString('hex'));
      if (legacy && legacy.content_type === input.contentType) existingBySource.set(key, legacy);
    });
  }
  const storedByContent = new Map(args.existing.filter((e) => e.success && e.content_sha256).map((e) => [e.content_sha256!.toString('hex'), e.id]));
  const alreadyStored: ReadonlySet<string> = new Set(storedByContent.keys());

  // Fetch and write every first occurrence whose source is not already stored, in
  // parallel; the id (and so the blob path) of each is chosen before.
  const ids = args.inputs.map((_input, i) => existingBySource.get(hashes[i]!.toString('hex'))?.id ?? randomUUID());
  const paths = args.inputs.map((input, i) => blobPathOf(args.tenantId, args.alertId, ids[i]!, input.contentType));
  const settled = await Promise.allSettled(
    args.inputs.map(async (input, i): Promise<Kept | null> => {
      const key = hashes[i]!.toString('hex');
      if (firstIndex.get(key) !== i) return null;
      if (existingBySource.get(key)?.success) return null;
      return fetchAndStore(deps, input, { blobPath: paths[i]!, stored: alreadyStored }, signal);
    }),
  );
  const written = settled.flatMap((r, i) => (r.status === 'fulfilled' && r.value?.ok && r.value.write === 'written' ? [paths[i]!] : []));
  const gaveUp = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (gaveUp || signal?.aborted) {
    // The caller is gone (or a fetch broke): nothing of this request will be committed.
    await removeWritten(deps, written);
    if (gaveUp) throw gaveUp.reason;
    throw signal!.reason instanceof Error ? signal!.reason : new Error('request aborted');
  }
  const fetched = settled.map((r) => (r as PromiseFulfilledResult<Kept | null>).value);

  const items: PreparedAttachment[] = [];
  const duplicates: string[] = [];
  for (const [i, input] of args.inputs.entries()) {
    const key = hashes[i]!.toString('hex');
    const first = firstIndex.get(key)!;
    const earlier = existingBySource.get(key);
    if (first !== i) {
      // The same source twice in one request: one row, both results point at it.
      const action = items[first]!.action;
      items.push({ index: i, input, action: { kind: 'existing', id: action.kind === 'insert' ? action.row.id : action.id }, failure: null });
      continue;
    }
    if (earlier?.success) {
      items.push({ index: i, input, action: { kind: 'existing', id: earlier.id }, failure: null });
      continue;
    }
    const got = fetched[i]!;
    if (!got.ok) {
      const failure = input.kind === 'url' ? { url: input.url, code: got.code, detail: got.detail, attempts: got.attempts } : null;
      if (earlier) {
        // Failed before, failed again: the alert keeps its existing entry.
        items.push({ index: i, input, action: { kind: 'existing', id: earlier.id }, failure: null });
      } else {
        items.push({ index: i, input, action: { kind: 'insert', row: failedRow(input, hashes[i]!, got.code, got.params) }, failure });
      }
      continue;
    }
    const sameContent = storedByContent.get(got.sha256.toString('hex'));
    if (sameContent) {
      // Stored before, or by an earlier attachment of this request (whose copy serves
      // both, also when it could not be written): this copy, if any, is not kept.
      if (got.write === 'written') duplicates.push(paths[i]!);
      items.push({ index: i, input, action: { kind: 'existing', id: sameContent }, failure: null });
      continue;
    }
    const id = ids[i]!;
    storedByContent.set(got.sha256.toString('hex'), id);
    if (got.write === 'failed') {
      const storageFailed = { success: false, blob_path: null, size_bytes: null, content_sha256: null, error_code: 'storage-failed', error_params: null };
      items.push({ index: i, input, action: earlier ? { kind: 'existing', id: earlier.id } : { kind: 'insert', row: { ...baseRow(input, hashes[i]!, id), ...storageFailed } }, failure: null });
      continue;
    }
    const stored = { success: true, blob_path: paths[i]!, size_bytes: got.size, content_sha256: got.sha256, error_code: null, error_params: null };
    items.push({
      index: i,
      input,
      action: earlier ? { kind: 'store-failed', id: earlier.id, patch: stored } : { kind: 'insert', row: { ...baseRow(input, hashes[i]!, id), ...stored } },
      failure: null,
    });
  }
  await removeWritten(deps, duplicates);
  return { items, written: written.filter((p) => !duplicates.includes(p)) };
}

async function removeWritten(deps: PrepareDeps, paths: readonly string[]): Promise<void> {
  await Promise.all(paths.map((p) => deps.blobs.delete(p).catch((err: unknown) => deps.log.error({ err, blobPath: p }, 'blob of an abandoned request could not be removed'))));
}

function baseRow(input: AttachmentInput, hash: Buffer, id: string): Pick<AttachmentRowInsert, 'id' | 'source_kind' | 'source_url' | 'source_hash' | 'filename' | 'content_type'> {
  return {
    id,
    source_kind: input.kind,
    source_url: input.kind === 'url' ? input.url : null,
    source_hash: hash,
    filename: input.filename,
    content_type: input.contentType,
  };
}

function failedRow(input: AttachmentInput, hash: Buffer, code: AttachmentErrorCode, params: Record<string, string | number>): AttachmentRowInsert {
  return {
    ...baseRow(input, hash, randomUUID()),
    success: false,
    blob_path: null,
    size_bytes: null,
    content_sha256: null,
    error_code: code,
    error_params: Object.keys(params).length > 0 ? JSON.stringify(params) : null,
  };
}
