import type { IncomingMessage } from 'node:http';
import { AppError, JSON_ONLY } from '../lib/errors.js';
import { firstDuplicateKey } from '../lib/json-strict.js';

/**
 * Reads the whole body, refusing (413) past the limit, by Content-Length or while
 * streaming, and (408) when it has not arrived in full within `timeoutMs`: a total
 * deadline, so a client trickling one byte a second cannot hold the request open. Both
 * refusals close the connection (`Connection: close`): the rest of that body is never
 * read. A body cut short by the client (the connection closed before the declared
 * length arrived) is malformed; nobody is left to read the answer.
 */
export function readBody(req: IncomingMessage, limit: number, timeoutMs: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(new AppError('payload-too-large', { limit }, undefined, CLOSE));
  // The client may have gone while authentication ran: its 'aborted' and 'close' came
  // before anyone listened, and neither comes again.
  if (req.destroyed || req.readableAborted) return Promise.reject(cutShort());
  // With a Content-Length the body is read straight into one buffer of that size: no
  // list of chunks to join into a second copy at the end.
  const length = declared === undefined ? NaN : Number(declared);
  const into = Number.isSafeInteger(length) && length >= 0 ? Buffer.allocUnsafe(length) : null;
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (err: AppError | null): void => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('aborted', onAborted).off('error', onAborted).off('close', onAborted);
      if (err) {
        req.pause();
        reject(err);
      } else {
        resolve(into ? into.subarray(0, size) : Buffer.concat(chunks));
      }
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit || (into && size > into.length)) finish(new AppError('payload-too-large', { limit }, undefined, CLOSE));
      else if (into) chunk.copy(into, size - chunk.length);
      else chunks.push(chunk);
    };
    const onEnd = (): void => finish(null);
    const onAborted = (): void => finish(cutShort());
    const timer = setTimeout(() => finish(new AppError('request-timeout', { seconds: Math.ceil(timeoutMs / 100) / 10 }, undefined, CLOSE)), timeoutMs);
    // A closed request that did not end first was cut short ('close' follows 'end' otherwise).
    req.on('data', onData).on('end', onEnd).on('aborted', onAborted).on('error', onAborted).on('close', onAborted);
  });
}

/**
 * The client closed the connection before its body was complete: answered as malformed
 * (nobody reads it) and named AbortError, so the request is logged as abandoned.
 */
function cutShort(): AppError {
  const err = new AppError('malformed-json', { reason: 'the body ended before it was complete' }, undefined, CLOSE);
  err.name = 'AbortError';
  return err;
}

/** A refused body is not read to its end, so the connection cannot carry another request. */
const CLOSE = { connection: 'close' } as const;

/**
 * application/json, with at most a `charset=utf-8` parameter (RFC 8259 JSON is UTF-8;
 * the charset parameter has no meaning for it, but clients send it); 415 for anything
 * else, other +json types (merge-patch, problem) and other charsets included.
 */
export function requireJson(contentType: string | undefined): void {
  const [type, ...params] = (contentType ?? '').split(';').map((p) => p.trim().toLowerCase());
  if (type !== 'application/json') throw new AppError('unsupported-media-type', JSON_ONLY);
  for (const param of params) {
    if (param === '') continue;
    const [name, value] = param.split('=').map((p) => p.trim());
    if (name !== 'charset' || (value !== 'utf-8' && value !== '"utf-8"')) throw new AppError('unsupported-media-type', JSON_ONLY);
  }
}

/**
 * Reads a JSON body (readBody's limits, then requireJson) and parses it, holding at most
 * two copies of it at any moment: the bytes until they are decoded to text, the text
 * until it is parsed. Neither outlives this call.
 */
export async function readJson(req: IncomingMessage, limit: number, timeoutMs: number): Promise<unknown> {
  let raw: Buffer | null = await readBody(req, limit, timeoutMs);
  requireJson(req.headers['content-type']);
  const text = utf8Text(raw);
  raw = null;
  return parseJsonText(text);
}

/** Strict UTF-8 JSON parse of bytes already read; 400 malformed-json with the parser's reason. */
export function parseJson(raw: Buffer): unknown {
  return parseJsonText(utf8Text(raw));
}

function utf8Text(raw: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw new AppError('malformed-json', { reason: 'the body is not valid UTF-8' });
  }
}

/**
 * Strict JSON parse; 400 malformed-json with the parser's reason, and 400 when one object
 * names a property twice (JSON.parse would keep the last silently), with its pointer.
 */
function parseJsonText(text: string): unknown {
  if (!/\S/.test(text)) throw new AppError('malformed-json', { reason: 'the body is empty' });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new AppError('malformed-json', { reason: (err as Error).message });
  }
  const duplicate = typeof value === 'object' && value !== null ? firstDuplicateKey(text) : null;
  if (duplicate !== null) throw new AppError('malformed-json', { reason: `the property ${duplicate} appears more than once in its object` }, [{ pointer: duplicate, message: 'appears more than once in its object (each property may be given once)' }]);
  return value;
}
