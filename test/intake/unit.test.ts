import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeStrictBase64, MAX_ATTACHMENT_BYTES, sniffImageType } from '../../src/services/attachments/content.js';
import { attachmentErrorMessage } from '../../src/services/attachments/messages.js';
import { houseNumber } from '../../src/services/geocoding/poles.js';
import { searchText } from '../../src/services/geocoding/nominatim.js';
import { orderAddress } from '../../src/services/intake/apply.js';
import { canonicalJson, parseIdempotencyKey, requestHash } from '../../src/services/intake/validate.js';
import { JPEG, PNG, WEBP } from './support.js';

describe('strict base64', () => {
  it('decodes canonical base64 and refuses everything else', () => {
    expect(decodeStrictBase64(JPEG.toString('base64'))).toEqual({ ok: true, bytes: JPEG });
    expect(decodeStrictBase64('QQ==')).toEqual({ ok: true, bytes: Buffer.from('A') });
    for (const bad of ['QQ', 'QQ=', 'Q===', 'QQ==QQ==', 'QR==', 'QU JD', 'QUJD\n', '-_-_', 'QUJD!', '====']) expect(decodeStrictBase64(bad)).toEqual({ ok: false, reason: 'invalid-base64' });
    expect(decodeStrictBase64('data:image/png;base64,QUJD')).toEqual({ ok: false, reason: 'data-uri' });
    expect(decodeStrictBase64('')).toEqual({ ok: false, reason: 'empty' });
  });

  it('takes exactly the canonical encodings: stray bits before the padding are refused', () => {
    const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    for (let n = 1; n <= 40; n++) {
      const bytes = randomBytes(n);
      const text = bytes.toString('base64');
      expect(decodeStrictBase64(text)).toEqual({ ok: true, bytes });
      const padding = text.length - text.replace(/=+$/, '').length;
      if (padding === 0) continue;
      // Every other character in the last place before the padding: canonical only if re-encoding gives it back.
      const at = text.length - 1 - padding;
      for (const c of ALPHABET) {
        const variant = text.slice(0, at) + c + text.slice(at + 1);
        const canonical = Buffer.from(variant, 'base64').toString('base64') === variant;
        expect(decodeStrictBase64(variant).ok).toBe(canonical);
      }
    }
  });

  it('measures the decoded size from the text, to the byte', () => {
    const limit = Buffer.alloc(MAX_ATTACHMENT_BYTES).toString('base64');
    expect(decodeStrictBase64(limit).ok).toBe(true);
    expect(decodeStrictBase64(Buffer.alloc(MAX_ATTACHMENT_BYTES + 1).toString('base64'))).toEqual({ ok: false, reason: 'too-large' });
  });
});

describe('magic bytes', () => {
  it('tells JPEG, PNG and WebP apart, and nothing else', () => {
    expect([sniffImageType(JPEG), sniffImageType(PNG), sniffImageType(WEBP)]).toEqual(['image/jpeg', 'image/png', 'image/webp']);
    expect(sniffImageType(Buffer.from('GIF89a......'))).toBeNull();
    expect(sniffImageType(Buffer.from('RIFF\0\0\0\0WAVE'))).toBeNull();
    expect(sniffImageType(Buffer.alloc(0))).toBeNull();
  });
});

describe('Idempotency-Key', () => {
  it('accepts a UUID bare or quoted, in any case, and nothing else', () => {
    const id = '5f0c7a3e-2b9d-4e61-8c4a-1d7e9b3f6a25';
    expect(parseIdempotencyKey(id)).toBe(id);
    expect(parseIdempotencyKey(`"${id.toUpperCase()}"`)).toBe(id);
    expect(parseIdempotencyKey(` ${id} `)).toBe(id);
    expect(parseIdempotencyKey(undefined)).toBeNull();
    for (const bad of ['', '""', `'${id}'`, `"${id}`, `${id},${id}`, 'urn:uuid:' + id]) expect(() => parseIdempotencyKey(bad)).toThrow('UUID');
  });

  it('compares bodies as JSON values', () => {
    expect(canonicalJson({ b: [1, { d: null, c: 'x' }], a: true })).toBe('{"a":true,"b":[1,{"c":"x","d":null}]}');
    expect(requestHash({ a: 1, b: 2 }).equals(requestHash({ b: 2, a: 1 }))).toBe(true);
    expect(requestHash({ a: 1 }).equals(requestHash({ a: '1' }))).toBe(false);
    // Hashed piece by piece, it is still the SHA-256 of the canonical text (keys stored by earlier releases keep matching).
    const photo = randomBytes(300_000).toString('base64');
    for (const body of [{ b: [1, { d: null, c: 'x' }], a: true, e: undefined }, { attachments: [{ contentBase64: photo }, { contentBase64: `${photo.slice(0, 999)}"\\é\ud800` }], n: [1.5, -0, null, [], {}] }]) {
      expect(requestHash(body).equals(createHash('sha256').update(canonicalJson(body)).digest())).toBe(true);
    }
  });
});

describe('addresses', () => {
  it('reads house numbers and builds the texts Lumen sends and stores', () => {
    expect(['1500', '1500A', 'nº 12', ' 7 ', 'S/N', 's/n', 'SN', ''].map(houseNumber)).toEqual([1500, 1500, 12, 7, null, null, null, null]);
    expect(houseNumber(null)).toBeNull();
    const q = { tenantId: 't', city: 'São Paulo', brazil: true, street: 'Rua Augusta', number: '1500', neighborhood: 'Consolação' };
    expect(searchText(q)).toBe('Rua Augusta, 1500, Consolação, São Paulo');
    expect(searchText({ ...q, number: 'S/N', neighborhood: null, city: null })).toBe('Rua Augusta');
    const a = { street: 'Avenida Paulista', number: 'S/N', neighborhood: null, reference: null, latitude: null, longitude: null };
    expect(orderAddress(a)).toBe('Avenida Paulista, S/N');
    expect(orderAddress({ ...a, number: null })).toBe('Avenida Paulista');
  });
});

describe('attachment errors', () => {
  it('are worded in both languages from a stable code', () => {
    expect(attachmentErrorMessage('download-failed', { attempts: 3, cause: 'timeout' }, 'pt-BR')).toBe('Não foi possível baixar o anexo após 3 tentativa(s): tempo esgotado.');
    expect(attachmentErrorMessage('download-failed', { attempts: 1, cause: 'http', status: 404 }, 'en')).toBe('The attachment could not be downloaded after 1 attempt(s): the server answered HTTP 404.');
    expect(attachmentErrorMessage('insecure-url', null, 'en')).toBe('The attachment URL must use HTTPS.');
  });
});
