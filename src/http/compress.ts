import { promisify } from 'node:util';
import zlib from 'node:zlib';

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

export type Encoding = 'br' | 'gzip';

/** Smaller bodies are sent as they are: compressing them saves less than the headers cost. */
export const COMPRESS_MIN_BYTES = 1024;

/**
 * The coding to answer with, from Accept-Encoding (RFC 9110 12.5.3): `br` or `gzip`
 * with a non-zero q, the higher q first and `br` on a tie; `*` stands for both. Null:
 * identity.
 */
export function negotiateEncoding(header: string | undefined): Encoding | null {
  if (!header) return null;
  const q: Partial<Record<Encoding | '*', number>> = {};
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (name !== 'br' && name !== 'gzip' && name !== '*') continue;
    const given = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = given === undefined ? 1 : Number(given.slice(2));
    q[name] = Number.isFinite(value) ? value : 0;
  }
  const br = q.br ?? q['*'] ?? 0;
  const gz = q.gzip ?? q['*'] ?? 0;
  if (br <= 0 && gz <= 0) return null;
  return br >= gz ? 'br' : 'gzip';
}

/** JSON (and problem+json, and any +json) is what Lumen compresses. */
export function compressible(contentType: string): boolean {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

/**
 * Brotli at quality 5 (the default 11 costs tens of milliseconds on a page of 1000
 * poles for a few percent), gzip at its default level.
 */
export function compress(payload: Buffer, encoding: Encoding): Promise<Buffer> {
  return encoding === 'br' ? brotli(payload, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: payload.length } }) : gzip(payload);
}
