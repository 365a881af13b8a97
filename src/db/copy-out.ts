import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';

/**
 * `COPY (<query>) TO STDOUT` on a connection of its own from the pool, as a stream of the
 * bytes PostgreSQL writes (CSV here): the export's rows never sit in memory, and the
 * pace is the client's (back-pressure reaches PostgreSQL through the socket). `prefix` is
 * written first (a byte-order mark and a header row). The connection goes back to the
 * pool when the copy ends, and is closed instead when it fails or the reader gives up
 * half-way (its protocol state is then unknown).
 */
export function copyOut(pool: pg.Pool, copySql: string, prefix: Buffer): Readable {
  const out = new PassThrough();
  out.write(prefix);
  void (async () => {
    let client: pg.PoolClient | null = null;
    try {
      client = await pool.connect();
      if (out.destroyed) {
        client.release();
        return;
      }
      const source = client.query(copyTo(copySql));
      await pipeline(source, out);
      client.release();
    } catch (err) {
      client?.release(err instanceof Error ? err : new Error(String(err)));
      out.destroy(err instanceof Error ? err : new Error(String(err)));
    }
  })();
  return out;
}
