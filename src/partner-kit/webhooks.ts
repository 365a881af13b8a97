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

/** How far the signed time of a delivery may be from the receiver's clock (seconds): older deliveries are refused as replays. */
export const REPLAY_WINDOW_SECONDS = 300;

/**
 * `X-Lumen-Signature-V2: t=<Unix seconds>,v2=<hex HMAC-SHA256 of "<t>.<body>">[,v2=…]`:
 * any `v2` made with the secret, and `t` within the window of now.
 */
function lumenV2Matches(secret: string, rawBody: Buffer | string, got: string, nowSeconds: number, windowSeconds: number): boolean {
  const parts = got.split(',').map((p) => p.trim());
  const t = /^t=(\d{1,12})$/.exec(parts[0] ?? '')?.[1];
  if (!t || Math.abs(nowSeconds - Number(t)) > windowSeconds) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest('hex'));
  return parts.slice(1).some((p) => {
    const received = Buffer.from(/^v2=([0-9a-f]{64})$/.exec(p)?.[1] ?? '');
    return received.length === expected.length && timingSafeEqual(received, expected);
  });
}

/**
 * Lumen's own scheme. `X-Lumen-Signature-V2: t=<Unix seconds>,v2=<hex HMAC-SHA256 of
 * "<t>.<exact body bytes>">` keyed with the webhook secret as text (a `whsec_…` secret
 * included): the time is signed with the body, and a delivery whose `t` is more than
 * `windowSeconds` (300) from now is refused, so a captured delivery cannot be replayed
 * later. During a secret rotation's overlap it carries one `v2=` per secret. Verify the
 * raw bytes you received, never a re-serialised JSON. Constant time.
 *
 * Without the V2 header (a Lumen before it), the deprecated `X-Lumen-Signature:
 * sha256=<hex HMAC of the body>` (and `X-Lumen-Signature-Previous`) is checked, which
 * no window protects.
 */
export function verifyLumenSignature(secret: string, rawBody: Buffer | string, headers: IncomingHeaders, opts: { windowSeconds?: number; now?: Date } = {}): boolean {
  const v2 = header(headers, 'x-lumen-signature-v2');
  if (v2 !== undefined) return lumenV2Matches(secret, rawBody, v2, Math.floor((opts.now ?? new Date()).getTime() / 1000), opts.windowSeconds ?? REPLAY_WINDOW_SECONDS);
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
