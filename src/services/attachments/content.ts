import type { AttachmentContentType } from '../../db/tables/intake.js';

/** Largest attachment Lumen keeps: 5 MiB, decoded or downloaded. */
export const MAX_ATTACHMENT_BYTES = 5 * 1024 * 1024;

export const EXTENSIONS: Readonly<Record<AttachmentContentType, string>> = { 'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp' };

export type DecodeFailure = 'data-uri' | 'invalid-base64' | 'too-large' | 'empty';

/** The standard alphabet, padding only at the end (no whitespace, no URL-safe characters). */
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;

/** Bytes that base64 text of this length decodes to (by its length and padding alone). */
export function decodedLength(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((text.length * 3) / 4) - padding);
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/**
 * Decodes strict RFC 4648 base64 (correct padding, canonical). The size is checked from
 * the text's length before decoding, so an oversized payload is never materialised, and
 * the text is decoded once, into one buffer of the decoded size: no other copy of the
 * text or of the bytes is made (canonical form is checked on the last character alone).
 */
export function decodeStrictBase64(text: string): { ok: true; bytes: Buffer } | { ok: false; reason: DecodeFailure } {
  if (/^\s*data:/i.test(text)) return { ok: false, reason: 'data-uri' };
  if (text.length === 0) return { ok: false, reason: 'empty' };
  if (decodedLength(text) > MAX_ATTACHMENT_BYTES) return { ok: false, reason: 'too-large' };
  if (text.length % 4 !== 0 || !BASE64_CHARS.test(text)) return { ok: false, reason: 'invalid-base64' };
  // Canonical only: the bits of the last character that padding leaves over are zero (4
  // of them before "==", 2 before "="), so re-encoding would give the text back.
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  if (padding > 0) {
    const last = ALPHABET.indexOf(text[text.length - 1 - padding]!);
    if ((last & (padding === 2 ? 0b1111 : 0b11)) !== 0) return { ok: false, reason: 'invalid-base64' };
  }
  return { ok: true, bytes: Buffer.from(text, 'base64') };
}

/** The image type the content's magic bytes say, or null when it is none of the three. */
export function sniffImageType(bytes: Buffer): AttachmentContentType | null {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return 'image/png';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return null;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
