import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkBlobPath, type BlobStore } from './index.js';

/** Blobs as files under one directory (default <LUMEN_DATA_DIR>/blobs). */
export class LocalBlobStore implements BlobStore {
  readonly description: string;

  constructor(private readonly root: string) {
    this.description = `local directory ${root}`;
  }

  private file(blobPath: string): string {
    return path.join(this.root, ...checkBlobPath(blobPath).split('/'));
  }

  async put(blobPath: string, content: Buffer, _contentType?: string): Promise<void> {
    const target = this.file(blobPath);
    await mkdir(path.dirname(target), { recursive: true });
    // Write aside, then rename: a reader never sees a partial file.
    const tmp = `${target}.${randomUUID()}.tmp`;
    try {
      await writeFile(tmp, content, { mode: 0o640 });
      await rename(tmp, target);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async get(blobPath: string): Promise<Buffer | null> {
    try {
      return await readFile(this.file(blobPath));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async delete(blobPath: string): Promise<void> {
    await rm(this.file(blobPath), { force: true });
  }
}
