import busboy from 'busboy';
import { AppError } from '../lib/errors.js';

/** A file sent as the `media` field of a multipart form: the photo of a GeoReport request. */
export interface MediaFile {
  readonly data: Buffer;
  /** The part's declared type, lower-cased (the attachment path checks it against the bytes). */
  readonly contentType: string;
}

/**
 * The photo's size limit of the attachment path (5 MiB), plus one byte so a larger file
 * is seen as larger (and refused there, with the same message as an inline photo) rather
 * than cut silently.
 */
const MEDIA_LIMIT = 5 * 1024 * 1024 + 1;

/**
 * A multipart/form-data body already read whole (within the body limit): its text fields
 * in order, and the `media` file when there is one. Any other file field, a second
 * `media`, or a body busboy cannot read is refused with 400 naming the field.
 */
export function parseMultipart(raw: Buffer, contentType: string): Promise<{ fields: [string, string][]; media: MediaFile | null }> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': contentType }, limits: { files: 2, fileSize: MEDIA_LIMIT, fields: 200, fieldSize: 64 * 1024, parts: 202 }, defParamCharset: 'utf8' });
    } catch (err) {
      reject(new AppError('malformed-request', { reason: `the multipart form cannot be read: ${(err as Error).message}` }));
      return;
    }
    const fields: [string, string][] = [];
    let media: MediaFile | null = null;
    let refused: AppError | null = null;
    const refuse = (pointer: string, message: string): void => {
      refused ??= new AppError('validation-failed', { count: 1 }, [{ pointer, message }]);
    };
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) refuse(`/${name}`, 'is longer than 65536 bytes');
      else fields.push([name, value]);
    });
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (name !== 'media') refuse(`/${name}`, 'is not a file field of this request (send the photo as media)');
        else if (media) refuse('/media', 'may be sent once');
        else media = { data: Buffer.concat(chunks), contentType: info.mimeType.toLowerCase() };
      });
    });
    parser.on('filesLimit', () => refuse('/media', 'may be sent once'));
    parser.on('fieldsLimit', () => refuse('', 'has more than 200 fields'));
    parser.on('error', (err: Error) => reject(new AppError('malformed-request', { reason: `the multipart form cannot be read: ${err.message}` })));
    parser.on('close', () => (refused ? reject(refused) : resolve({ fields, media })));
    parser.end(raw);
  });
}
