import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomToken(length: number): string {
  // Rejection sampling keeps every character uniformly likely.
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

export type KeyKind = 'partner' | 'admin' | 'telemetry';

export interface IssuedKey {
  /** The whole key; shown once, never stored. */
  key: string;
  /** Readable identifier: marker plus the first 8 characters, e.g. lmn_live_Ab3dE9xQ. */
  keyPrefix: string;
  /** The 8 characters that find the stored row. */
  keyId: string;
  /** SHA-256 of the whole key: the only thing stored. */
  hash: Buffer;
}

/**
 * Keys are prefixed tokens so secret scanners can spot them:
 *   partner keys  lmn_live_<id8><secret32>  (lmn_test_ outside production)
 *   admin tokens  lmn_adm_<id8><secret32>
 *   telemetry     lmn_tel_<id8><secret32>  (keys of a city's telemetry system)
 * Each kind has its own marker, so no surface ever accepts another kind's key.
 */
export function issueKey(kind: KeyKind, production: boolean): IssuedKey {
  const marker = kind === 'admin' ? 'lmn_adm_' : kind === 'telemetry' ? 'lmn_tel_' : production ? 'lmn_live_' : 'lmn_test_';
  const keyId = randomToken(8);
  const key = `${marker}${keyId}${randomToken(32)}`;
  return { key, keyPrefix: `${marker}${keyId}`, keyId, hash: hashKey(key) };
}

export function hashKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

const KEY_SHAPE = /^lmn_(live|test|adm|tel)_([A-Za-z0-9]{8})[A-Za-z0-9]{32}$/;

/** Splits a presented key; null when it cannot be one of ours (no lookup needed). */
export function parseKey(presented: string): { kind: KeyKind; keyId: string } | null {
  const m = KEY_SHAPE.exec(presented);
  if (!m) return null;
  const kind: KeyKind = m[1] === 'adm' ? 'admin' : m[1] === 'tel' ? 'telemetry' : 'partner';
  return { kind, keyId: m[2]! };
}

/** Constant-time comparison of the presented key's hash with the stored one. */
export function keyMatches(presented: string, storedHash: Buffer): boolean {
  const h = hashKey(presented);
  return h.length === storedHash.length && timingSafeEqual(h, storedHash);
}
