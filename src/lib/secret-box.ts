import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Encrypts stored secrets (webhook secrets, partner-issued polling keys) with
 * LUMEN_SECRET_KEY: AES-256-GCM, stored as "v2.<key id>.<iv>.<tag>.<ciphertext>"
 * (base64url). The key id names the key that sealed it, so LUMEN_SECRET_KEY can be
 * rotated: the previous key stays readable as LUMEN_SECRET_KEY_PREVIOUS until
 * `lumen secrets rewrap` has sealed everything again under the new one. The row and
 * column a secret belongs to are bound as associated data: a ciphertext copied to
 * another partner's row does not open. "v1.<iv>.<tag>.<ciphertext>" (an earlier
 * release: no key id, no associated data) still opens with either key.
 */
export interface Keyring {
  readonly current: Buffer;
  readonly previous: Buffer | null;
}

/** A key's public id: 8 hex characters of a hash of it (never the key itself). */
export function keyId(key: Buffer): string {
  return createHash('sha256').update('lumen-secret-key\0').update(key).digest('hex').slice(0, 8);
}

function asKeyring(keys: Keyring | Buffer): Keyring {
  return Buffer.isBuffer(keys) ? { current: keys, previous: null } : keys;
}

export function sealSecret(keys: Keyring | Buffer, plaintext: string, aad = ''): string {
  const { current } = asKeyring(keys);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', current, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v2', keyId(current), iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

function decrypt(key: Buffer, iv: string, tag: string, ct: string, aad: string | null): string | null {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  if (aad !== null) decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  try {
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

export function openSecret(keys: Keyring | Buffer, sealed: string, aad = ''): string {
  const ring = asKeyring(keys);
  const parts = sealed.split('.');
  if (parts[0] === 'v2' && parts.length === 5) {
    const [, kid, iv, tag, ct] = parts as [string, string, string, string, string];
    const key = [ring.current, ring.previous].find((k) => k !== null && keyId(k) === kid);
    if (!key) throw new Error(`stored secret was sealed with key ${kid}, which is neither LUMEN_SECRET_KEY (${keyId(ring.current)}) nor LUMEN_SECRET_KEY_PREVIOUS${ring.previous ? ` (${keyId(ring.previous)})` : ' (not set)'}`);
    const out = decrypt(key, iv, tag, ct, aad);
    if (out === null) throw new Error('stored secret cannot be decrypted: it does not belong to this record, or it was altered');
    return out;
  }
  if (parts[0] === 'v1' && parts.length === 4) {
    const [, iv, tag, ct] = parts as [string, string, string, string];
    for (const key of [ring.current, ring.previous]) {
      const out = key ? decrypt(key, iv, tag, ct, null) : null;
      if (out !== null) return out;
    }
    throw new Error('stored secret cannot be decrypted: neither LUMEN_SECRET_KEY nor LUMEN_SECRET_KEY_PREVIOUS is the key it was stored with');
  }
  throw new Error('stored secret has an unknown format');
}

/** True when a stored secret is not sealed under the current key with its associated data (rewrap it). */
export function needsRewrap(keys: Keyring | Buffer, sealed: string): boolean {
  const parts = sealed.split('.');
  return !(parts[0] === 'v2' && parts[1] === keyId(asKeyring(keys).current));
}

/** The associated data of a partner's stored secret: its row and column. */
export function partnerSecretAad(externalSystemId: string, column: 'webhook_secret_enc' | 'webhook_previous_secret_enc' | 'polling_key_enc'): string {
  return `external_system:${externalSystemId}:${column}`;
}

/** The keyring of a configuration: LUMEN_SECRET_KEY, and LUMEN_SECRET_KEY_PREVIOUS when set. */
export function keyringOf(config: { readonly secretKey: Buffer; readonly previousSecretKey: Buffer | null }): Keyring {
  return { current: config.secretKey, previous: config.previousSecretKey };
}
