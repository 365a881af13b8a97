import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Encrypts stored secrets (webhook secrets, partner-issued polling keys) with
 * LUMEN_SECRET_KEY: AES-256-GCM, stored as "v1.<iv>.<tag>.<ciphertext>" in base64url.
 */
export function sealSecret(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

export function openSecret(key: Buffer, sealed: string): string {
  const [version, iv, tag, ct] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || ct === undefined) throw new Error('stored secret has an unknown format');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  try {
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new Error('stored secret cannot be decrypted: LUMEN_SECRET_KEY differs from the key it was stored with');
  }
}
