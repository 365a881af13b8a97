import type { IncomingMessage } from 'node:http';
import { AppError } from '../lib/errors.js';

/** Reads the whole body, refusing (413) past the limit, by Content-Length or while streaming. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw new AppError('payload-too-large', { limit });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new AppError('payload-too-large', { limit });
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** application/json or any +json type, with optional parameters; 415 otherwise. */
export function requireJson(contentType: string | undefined): void {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type)) return;
  throw new AppError('unsupported-media-type');
}

/** Strict UTF-8 JSON parse; 400 malformed-json with the parser's reason. */
export function parseJson(raw: Buffer): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw new AppError('malformed-json', { reason: 'the body is not valid UTF-8' });
  }
  if (text.trim() === '') throw new AppError('malformed-json', { reason: 'the body is empty' });
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new AppError('malformed-json', { reason: (err as Error).message });
  }
}
