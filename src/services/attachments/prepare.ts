import { createHash, randomUUID } from 'node:crypto';
import type { Insertable } from 'kysely';
import type { BlobStore } from '../../lib/blob-store/index.js';
import type { Logger } from '../../lib/logger.js';
import type { AlertAttachmentTable, AttachmentContentType } from '../../db/tables/intake.js';
import type { AttachmentInput } from '../intake/index.js';
import { decodeStrictBase64, EXTENSIONS, MAX_ATTACHMENT_BYTES, sniffImageType } from './content.js';
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
}

type Fetched =
  | { ok: true; bytes: Buffer; sha256: Buffer }
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
  const written: string[] = [];
  const hashes = args.inputs.map(sourceHash);
  const firstIndex = new Map<string, number>();
  hashes.forEach((h, i) => {
    if (!firstIndex.has(h.toString('hex'))) firstIndex.set(h.toString('hex'), i);
  });
  const existingBySource = new Map(args.existing.map((e) => [e.source_hash.toString('hex'), e]));
  // A row of an earlier release is found by its legacy hash when its declared type is the same.
  args.inputs.forEach((input, i) => {
    const key = hashes[i]!.toString('hex');
    if (existingBySource.has(key)) return;
    const legacy = existingBySource.get(legacySourceHash(input).toString('hex'));
    if (legacy && legacy.content_type === input.contentType) existingBySource.set(key, legacy);
  });

  // Fetch every first occurrence whose source is not already stored, in parallel.
  const fetched = await Promise.all(
    args.inputs.map(async (input, i): Promise<Fetched | null> => {
      const key = hashes[i]!.toString('hex');
      if (firstIndex.get(key) !== i) return null;
      if (existingBySource.get(key)?.success) return null;
      return fetchContent(deps, input, signal);
    }),
  );

  const storedByContent = new Map(args.existing.filter((e) => e.success && e.content_sha256).map((e) => [e.content_sha256!.toString('hex'), e.id]));
  const items: PreparedAttachment[] = [];
  const pendingWrites: { index: number; path: string; bytes: Buffer; contentType: AttachmentContentType }[] = [];
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
      items.push({ index: i, input, action: { kind: 'existing', id: sameContent }, failure: null });
      continue;
    }
    const id = earlier?.id ?? randomUUID();
    const path = blobPathOf(args.tenantId, args.alertId, id, input.contentType);
    storedByContent.set(got.sha256.toString('hex'), id);
    pendingWrites.push({ index: i, path, bytes: got.bytes, contentType: input.contentType });
    const stored = { success: true, blob_path: path, size_bytes: got.bytes.length, content_sha256: got.sha256, error_code: null, error_params: null };
    items.push({
      index: i,
      input,
      action: earlier ? { kind: 'store-failed', id: earlier.id, patch: stored } : { kind: 'insert', row: { ...baseRow(input, hashes[i]!, id), ...stored } },
      failure: null,
    });
  }

  // Write the blobs; a store that fails turns into a per-attachment failure (and a
  // content duplicate that pointed at that copy shows the same failure).
  await Promise.all(
    pendingWrites.map(async (w) => {
      try {
        await deps.blobs.put(w.path, w.bytes, w.contentType, signal);
        written.push(w.path);
      } catch (err) {
        if (signal?.aborted) return;
        deps.log.error({ err, blobPath: w.path, store: deps.blobs.description }, 'attachment could not be stored');
        const item = items[w.index]!;
        const failedPatch = { success: false, blob_path: null, size_bytes: null, content_sha256: null, error_code: 'storage-failed', error_params: null };
        if (item.action.kind === 'insert') item.action = { kind: 'insert', row: { ...item.action.row, ...failedPatch } };
        else if (item.action.kind === 'store-failed') item.action = { kind: 'existing', id: item.action.id };
      }
    }),
  );
  if (signal?.aborted) {
    // The caller is gone: nothing of this request will be committed.
    await Promise.all(written.map((p) => deps.blobs.delete(p).catch((err: unknown) => deps.log.error({ err, blobPath: p }, 'blob of an abandoned request could not be removed'))));
    throw signal.reason instanceof Error ? signal.reason : new Error('request aborted');
  }
  return { items, written };
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
