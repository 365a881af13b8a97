import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** Header names as Node lowercases them. */
export type IncomingHeaders = Record<string, string | string[] | undefined>;

function header(headers: IncomingHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Lumen's own scheme: `X-Lumen-Signature: sha256=<hex HMAC-SHA256 of the exact body
 * bytes>` keyed with the webhook secret. Verify the raw bytes you received, never a
 * re-serialised JSON. Constant time.
 */
export function verifyLumenSignature(secret: string, rawBody: Buffer | string, headers: IncomingHeaders): boolean {
  const got = header(headers, 'x-lumen-signature');
  if (typeof got !== 'string' || !/^sha256=[0-9a-f]{64}$/.test(got)) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`);
  const received = Buffer.from(got);
  return received.length === expected.length && timingSafeEqual(received, expected);
}

/**
 * The Standard Webhooks scheme (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`), verified with the standard's own library, which also refuses
 * a timestamp more than five minutes away from now (replays). `secret` is the
 * `whsec_…` secret Lumen showed for the partner. During a secret rotation the header
 * carries a signature per secret: either secret verifies.
 */
export function verifyStandardWebhook(secret: string, rawBody: Buffer | string, headers: IncomingHeaders): boolean {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signature = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signature) return false;
  try {
    new Webhook(secret).verify(typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8'), { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature });
    return true;
  } catch {
    return false;
  }
}
