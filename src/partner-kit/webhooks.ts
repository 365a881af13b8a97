import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** Header names as Node lowercases them. */
export type IncomingHeaders = Record<string, string | string[] | undefined>;

function header(headers: IncomingHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

function lumenSignatureMatches(secret: string, rawBody: Buffer | string, got: string | undefined): boolean {
  if (typeof got !== 'string' || !/^sha256=[0-9a-f]{64}$/.test(got)) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`);
  const received = Buffer.from(got);
  return received.length === expected.length && timingSafeEqual(received, expected);
}

/**
 * Lumen's own scheme: `X-Lumen-Signature: sha256=<hex HMAC-SHA256 of the exact body
 * bytes>` keyed with the webhook secret as text (a `whsec_…` secret included). Verify
 * the raw bytes you received, never a re-serialised JSON. Constant time. During a
 * secret rotation's overlap the replaced secret's signature comes in
 * `X-Lumen-Signature-Previous`: a receiver still on the old secret verifies with it.
 */
export function verifyLumenSignature(secret: string, rawBody: Buffer | string, headers: IncomingHeaders): boolean {
  return lumenSignatureMatches(secret, rawBody, header(headers, 'x-lumen-signature')) || lumenSignatureMatches(secret, rawBody, header(headers, 'x-lumen-signature-previous'));
}

/**
 * The `whsec_…` form of a webhook secret, as Standard Webhooks libraries take it: a
 * `whsec_` secret (Lumen makes them so) as it is; a secret chosen in another form (hex,
 * text) is `whsec_` + base64 of its UTF-8 bytes, which is how Lumen keys the standard
 * signature with it.
 */
export function standardWebhookSecret(secret: string): string {
  return secret.startsWith('whsec_') ? secret : `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`;
}

/**
 * The Standard Webhooks scheme (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`), verified with the standard's own library, which also refuses
 * a timestamp more than five minutes away from now (replays). `secret` is the webhook
 * secret Lumen showed for the partner (any form: see standardWebhookSecret). During a
 * secret rotation the header carries a signature per secret: either secret verifies.
 */
export function verifyStandardWebhook(secret: string, rawBody: Buffer | string, headers: IncomingHeaders): boolean {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signature = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signature) return false;
  try {
    new Webhook(standardWebhookSecret(secret)).verify(typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8'), { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature });
    return true;
  } catch {
    return false;
  }
}

/**
 * Whichever scheme the delivery carries: Standard Webhooks when its headers are there
 * (it also guards against replays), else Lumen's. For a partner whose `signature` is
 * `both`, either is enough.
 */
export function verifyWebhook(secret: string, rawBody: Buffer | string, headers: IncomingHeaders): boolean {
  return header(headers, 'webhook-signature') !== undefined ? verifyStandardWebhook(secret, rawBody, headers) : verifyLumenSignature(secret, rawBody, headers);
}
