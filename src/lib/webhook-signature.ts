import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header carrying the signature of a webhook body (N6). */
export const SIGNATURE_HEADER = 'X-Lumen-Signature';

/**
 * `sha256=<lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the webhook
 * secret>` (interface 5.2). Sign the bytes that are sent, never a re-serialisation.
 */
export function signWebhookBody(secret: string, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** The receiver's check, in constant time; what partners are told to do. */
export function verifyWebhookSignature(secret: string, body: Buffer | string, header: string | undefined): boolean {
  if (typeof header !== 'string' || !/^sha256=[0-9a-f]{64}$/.test(header)) return false;
  const expected = Buffer.from(signWebhookBody(secret, body), 'utf8');
  const received = Buffer.from(header, 'utf8');
  return received.length === expected.length && timingSafeEqual(received, expected);
}
