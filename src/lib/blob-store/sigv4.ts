import { createHash, createHmac } from 'node:crypto';

/**
 * AWS Signature Version 4 for S3 requests (header form). Pure: the caller supplies
 * the time, so the result can be checked against AWS's published examples.
 * https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html
 */
export interface SignInput {
  method: string;
  /** Host header value (host[:port]). */
  host: string;
  /** Already URI-encoded path, starting with "/". */
  path: string;
  /** Query parameters (unencoded); empty for object PUT/GET/DELETE. */
  query?: Record<string, string>;
  /** Extra headers to sign (names in any case). host, x-amz-date and x-amz-content-sha256 are added. */
  headers?: Record<string, string>;
  /** Lowercase hex SHA-256 of the payload (or UNSIGNED-PAYLOAD). */
  payloadHash: string;
  region: string;
  service?: string;
  accessKeyId: string;
  secretAccessKey: string;
  now: Date;
}

export interface SignedHeaders {
  /** Every header to send, including authorization. */
  headers: Record<string, string>;
  signature: string;
}

export const sha256Hex = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding as SigV4 wants it: everything but A-Z a-z 0-9 - . _ ~ is %XX. */
export function uriEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** amzDate 20130524T000000Z and its day 20130524. */
export function amzDate(now: Date): { amzDate: string; day: string } {
  const iso = now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  return { amzDate: iso, day: iso.slice(0, 8) };
}

export function signRequest(input: SignInput): SignedHeaders {
  const service = input.service ?? 's3';
  const { amzDate: stamp, day } = amzDate(input.now);
  const all: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.headers ?? {})) all[k.toLowerCase()] = v;
  all.host = input.host;
  all['x-amz-date'] = stamp;
  all['x-amz-content-sha256'] = input.payloadHash;
  const names = Object.keys(all).sort();
  const canonicalHeaders = names.map((n) => `${n}:${all[n]!.trim().replace(/\s+/g, ' ')}\n`).join('');
  const signedHeaders = names.join(';');
  const canonicalQuery = Object.entries(input.query ?? {})
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const canonicalRequest = [input.method.toUpperCase(), input.path, canonicalQuery, canonicalHeaders, signedHeaders, input.payloadHash].join('\n');
  const scope = `${day}/${input.region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', stamp, scope, sha256Hex(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${input.secretAccessKey}`, day), input.region), service), 'aws4_request');
  const signature = createHmac('sha256', key).update(stringToSign).digest('hex');
  return {
    signature,
    headers: { ...all, authorization: `AWS4-HMAC-SHA256 Credential=${input.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}` },
  };
}
