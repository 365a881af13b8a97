import type { AttachmentContentType } from '../../db/tables/intake.js';

/** Largest attachment Lumen keeps: 5 MiB, decoded or downloaded. */
export const MAX_ATTACHMENT_BYTES = 5 * 1024 * 1024;

export const EXTENSIONS: Readonly<Record<AttachmentContentType, string>> = { 'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp' };

export type DecodeFailure = 'data-uri' | 'invalid-base64' | 'too-large' | 'empty';

/** The standard alphabet, padding only at the end (no whitespace, no URL-safe characters). */
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Decodes strict RFC 4648 base64 (correct padding, canonical). The size is checked from the text's length before decoding,
 * so an oversized payload is never materialised.
 */
export function decodeStrictBase64(text: string): { ok: true; bytes: Buffer } | { ok: false; reason: DecodeFailure } {
  if (/^\s*data:/i.test(text)) return { ok: false, reason: 'data-uri' };
  if (text.length === 0) return { ok: false, reason: 'empty' };
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const decodedLength = Math.floor((text.length * 3) / 4) - padding;
  if (decodedLength > MAX_ATTACHMENT_BYTES) return { ok: false, reason: 'too-large' };
  if (text.length % 4 !== 0 || !BASE64_CHARS.test(text)) return { ok: false, reason: 'invalid-base64' };
  const bytes = Buffer.from(text, 'base64');
  // Canonical only: re-encoding gives the text back (no stray bits in the last character).
  if (bytes.toString('base64') !== text) return { ok: false, reason: 'invalid-base64' };
  return { ok: true, bytes };
}

/** The image type the content's magic bytes say, or null when it is none of the three. */
export function sniffImageType(bytes: Buffer): AttachmentContentType | null {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return 'image/png';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return null;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
