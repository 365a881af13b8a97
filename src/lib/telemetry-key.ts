import { randomBytes } from 'node:crypto';
import { hashKey } from './api-key.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const MARKER = 'lmn_tel_';
const KEY_SHAPE = /^lmn_tel_([A-Za-z0-9]{8})[A-Za-z0-9]{32}$/;

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

export interface IssuedTelemetryKey {
  /** The whole key; shown once, never stored. */
  key: string;
  /** Marker plus the first 8 characters, e.g. lmn_tel_Ab3dE9xQ. */
  keyPrefix: string;
  keyId: string;
  /** SHA-256 of the whole key: the only thing stored. */
  hash: Buffer;
}

/**
 * Keys of telemetry systems: lmn_tel_<id8><secret32>. A distinct marker from partner
 * keys (lmn_live_/lmn_test_), so neither kind is ever accepted by the other's surface
 * and secret scanners can tell them apart.
 */
export function issueTelemetryKey(): IssuedTelemetryKey {
  const keyId = randomToken(8);
  const key = `${MARKER}${keyId}${randomToken(32)}`;
  return { key, keyPrefix: `${MARKER}${keyId}`, keyId, hash: hashKey(key) };
}

/** The key id of a presented telemetry key; null when it cannot be one. */
export function parseTelemetryKey(presented: string): string | null {
  return KEY_SHAPE.exec(presented)?.[1] ?? null;
}
