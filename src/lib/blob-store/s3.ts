import http from 'node:http';
import https from 'node:https';
import type { BlobStoreConfig } from '../../config.js';
import { checkBlobPath, type BlobStore } from './index.js';
import { sha256Hex, signRequest, uriEncode } from './sigv4.js';

type S3Config = Extract<BlobStoreConfig, { kind: 's3' }>;

interface S3Response {
  status: number;
  body: Buffer;
}

/** Longest a single S3 call may take, connect to last byte. */
const REQUEST_TIMEOUT_MS = 30_000;
/** Bodies read back (GET of a blob, error documents). Blobs are at most 5 MiB. */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** S3 answers 500/503 (SlowDown) now and then; a short retry absorbs it. */
const RETRY_DELAYS_MS = [200, 800];

export class S3Error extends Error {
  constructor(message: string, readonly status: number | null, readonly retryable: boolean) {
    super(message);
    this.name = 'S3Error';
  }
}

/**
 * An S3-compatible bucket (AWS S3, MinIO, Ceph, R2, ...) through its REST API, signed
 * with SigV4. The endpoint is the operator's own configuration, not a URL a partner
 * gave, so it is not subject to the outbound address guard; TLS 1.2+ is required for
 * https endpoints.
 */
export class S3BlobStore implements BlobStore {
  readonly description: string;
  private readonly base: URL;
  private readonly pathStyle: boolean;

  constructor(private readonly config: S3Config) {
    this.pathStyle = config.endpoint !== null;
    this.base = new URL(config.endpoint ?? `https://${config.bucket}.s3.${config.region}.amazonaws.com`);
    this.description = `s3://${config.bucket}/${config.prefix} at ${this.base.origin}`;
  }

  /** Encoded request path of an object key. */
  private objectPath(blobPath: string): string {
    const key = [this.config.prefix, checkBlobPath(blobPath)].filter(Boolean).join('/');
    const encodedKey = key.split('/').map(uriEncode).join('/');
    const basePath = this.base.pathname.replace(/\/+$/, '');
    return this.pathStyle ? `${basePath}/${uriEncode(this.config.bucket)}/${encodedKey}` : `${basePath}/${encodedKey}`;
  }

  async put(blobPath: string, content: Buffer, contentType: string, signal?: AbortSignal): Promise<void> {
    const res = await this.send('PUT', blobPath, content, { 'content-type': contentType }, signal);
    if (res.status !== 200) throw this.failure('PUT', blobPath, res);
  }

  async get(blobPath: string, signal?: AbortSignal): Promise<Buffer | null> {
    const res = await this.send('GET', blobPath, null, {}, signal);
    if (res.status === 404) return null;
    if (res.status !== 200) throw this.failure('GET', blobPath, res);
    return res.body;
  }

  async delete(blobPath: string, signal?: AbortSignal): Promise<void> {
    const res = await this.send('DELETE', blobPath, null, {}, signal);
    if (res.status !== 204 && res.status !== 200 && res.status !== 404) throw this.failure('DELETE', blobPath, res);
  }

  private failure(method: string, blobPath: string, res: S3Response): S3Error {
    const code = /<Code>([^<]{1,100})<\/Code>/.exec(res.body.toString('utf8'))?.[1] ?? 'no error code';
    return new S3Error(`S3 ${method} ${blobPath} answered ${res.status} (${code})`, res.status, res.status >= 500 || res.status === 429);
  }

  private async send(method: 'PUT' | 'GET' | 'DELETE', blobPath: string, body: Buffer | null, extra: Record<string, string>, signal?: AbortSignal): Promise<S3Response> {
    const requestPath = this.objectPath(blobPath);
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await this.once(method, requestPath, body, extra, signal);
        if ((res.status >= 500 || res.status === 429) && attempt < RETRY_DELAYS_MS.length) {
          await delay(RETRY_DELAYS_MS[attempt]!, signal);
          continue;
        }
        return res;
      } catch (err) {
        if (signal?.aborted || attempt >= RETRY_DELAYS_MS.length || (err instanceof S3Error && !err.retryable)) throw err;
        await delay(RETRY_DELAYS_MS[attempt]!, signal);
      }
    }
  }

  private once(method: string, requestPath: string, body: Buffer | null, extra: Record<string, string>, signal?: AbortSignal): Promise<S3Response> {
    const payload = body ?? Buffer.alloc(0);
    const headers: Record<string, string> = { ...extra };
    if (body) headers['content-length'] = String(body.length);
    const signed = signRequest({
      method,
      host: this.base.host,
      path: requestPath,
      headers,
      payloadHash: sha256Hex(payload),
      region: this.config.region,
      accessKeyId: this.config.accessKeyId,
      secretAccessKey: this.config.secretAccessKey,
      now: new Date(),
    });
    const isHttps = this.base.protocol === 'https:';
    const transport = isHttps ? https : http;
    return new Promise<S3Response>((resolve, reject) => {
      const req = transport.request(
        {
          method,
          protocol: this.base.protocol,
          hostname: this.base.hostname.replace(/^\[|\]$/g, ''),
          port: this.base.port || (isHttps ? 443 : 80),
          path: requestPath,
          headers: signed.headers,
          signal,
          ...(isHttps ? { minVersion: 'TLSv1.2' as const } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_RESPONSE_BYTES) {
              req.destroy(new S3Error(`S3 response over ${MAX_RESPONSE_BYTES} bytes`, res.statusCode ?? null, false));
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () => {
            clearTimeout(timer);
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) });
          });
          res.on('error', reject);
        },
      );
      // The whole exchange is bounded, not just socket idleness.
      const timer = setTimeout(() => req.destroy(new S3Error(`S3 ${method} timed out after ${REQUEST_TIMEOUT_MS} ms`, null, true)), REQUEST_TIMEOUT_MS);
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      req.end(payload);
    });
  }
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}
