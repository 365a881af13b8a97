import { createHmac, createSecretKey, hkdfSync, timingSafeEqual, type KeyObject } from 'node:crypto';

/**
 * Opaque cursors: base64url(JSON) "." base64url(HMAC-SHA256 truncated to 128 bits).
 * The MAC key is derived from LUMEN_SECRET_KEY (HKDF, its own label, so the cursor
 * key is never the key that seals stored secrets), and the MAC covers a purpose
 * string, so a cursor issued by one endpoint is refused by another. A cursor is not
 * encrypted: it must hold nothing a partner may not see.
 */
export class CursorCodec {
  /** A KeyObject: an HMAC keyed by a Buffer checks on every call whether it is one (several µs each, twice per page). */
  private readonly key: KeyObject;

  constructor(secretKey: Buffer) {
    this.key = createSecretKey(Buffer.from(hkdfSync('sha256', secretKey, Buffer.alloc(0), 'lumen/cursor/v1', 32)));
  }

  encode(purpose: string, value: unknown): string {
    const body = Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
    return `${body}.${this.mac(purpose, body).toString('base64url')}`;
  }

  /** The value, or null when the token is malformed, altered or of another purpose. */
  decode(purpose: string, token: string): unknown {
    const dot = token.indexOf('.');
    if (dot <= 0 || dot !== token.lastIndexOf('.')) return null;
    const body = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1), 'base64url');
    const want = this.mac(purpose, body);
    if (given.length !== want.length || !timingSafeEqual(given, want)) return null;
    try {
      return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown;
    } catch {
      return null;
    }
  }

  private mac(purpose: string, body: string): Buffer {
    return createHmac('sha256', this.key).update(purpose).update('\0').update(body).digest().subarray(0, 16);
  }
}

const codecs = new WeakMap<Buffer, CursorCodec>();

/** One codec per secret key (the HKDF runs once). */
export function cursorCodec(secretKey: Buffer): CursorCodec {
  let codec = codecs.get(secretKey);
  if (!codec) {
    codec = new CursorCodec(secretKey);
    codecs.set(secretKey, codec);
  }
  return codec;
}
