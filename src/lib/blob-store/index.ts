import type { BlobStoreConfig } from '../../config.js';
import { LocalBlobStore } from './local.js';
import { S3BlobStore } from './s3.js';

/**
 * Where Lumen keeps its own copy of attachments. Paths are relative and stable
 * (tenants/<tenant>/alerts/<alert>/<attachment>.<ext>); the store decides where they
 * live. put() is atomic (a reader never sees half a blob) and idempotent; delete()
 * of a missing blob succeeds.
 */
export interface BlobStore {
  /** Human description for logs, without credentials. */
  readonly description: string;
  put(blobPath: string, content: Buffer, contentType: string, signal?: AbortSignal): Promise<void>;
  /** The blob's content, or null when it does not exist. */
  get(blobPath: string, signal?: AbortSignal): Promise<Buffer | null>;
  delete(blobPath: string, signal?: AbortSignal): Promise<void>;
}

/** Relative, normalised, no dot segments: a path can never leave the store's root. */
export function checkBlobPath(blobPath: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/.test(blobPath) || blobPath.split('/').some((s) => s === '.' || s === '..')) {
    throw new Error(`invalid blob path: ${blobPath}`);
  }
  return blobPath;
}

const stores = new WeakMap<BlobStoreConfig, BlobStore>();

/** The store of a configuration (one instance per frozen config). */
export function blobStoreFor(config: BlobStoreConfig): BlobStore {
  let store = stores.get(config);
  if (!store) {
    store = config.kind === 'local' ? new LocalBlobStore(config.dir) : new S3BlobStore(config);
    stores.set(config, store);
  }
  return store;
}
