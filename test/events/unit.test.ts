import { verify } from '@octokit/webhooks-methods';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { maxAttempts, parseRetryAfter, retryDelayMs } from '../../src/services/events/delivery.js';
import { signWebhookBody, verifyWebhookSignature } from '../../src/lib/webhook-signature.js';

const BASE = { LUMEN_SECRET_KEY: '22'.repeat(32), LUMEN_DATA_DIR: '/tmp/lumen-events-unit' };

describe('webhook signature', () => {
  it('is sha256=<lowercase hex HMAC> of the exact bytes, as an independent implementation computes it', async () => {
    const body = '{"b":1,"a":"ção"}';
    const sig = signWebhookBody('s3cret-s3cret-s3cret', Buffer.from(body, 'utf8'));
    expect(sig).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(await verify('s3cret-s3cret-s3cret', body, sig)).toBe(true);
    expect(verifyWebhookSignature('s3cret-s3cret-s3cret', body, sig)).toBe(true);
    expect(verifyWebhookSignature('s3cret-s3cret-s3cret', '{"a":"ção","b":1}', sig)).toBe(false);
    expect(verifyWebhookSignature('s3cret-s3cret-s3cret', body, sig.toUpperCase())).toBe(false);
    expect(verifyWebhookSignature('s3cret-s3cret-s3cret', body, undefined)).toBe(false);
  });
});

describe('retry schedule', () => {
  const schedule = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

  it('makes 8 attempts in about 28 hours by default', () => {
    const config = loadConfig(BASE);
    expect(config.webhookRetryScheduleMs).toEqual(schedule);
    expect(maxAttempts(config.webhookRetryScheduleMs)).toBe(8);
    const total = schedule.reduce((a, b) => a + b, 0) / 3_600_000;
    expect(total).toBeGreaterThan(27);
    expect(total).toBeLessThan(29);
  });

  it('jitters each step by ±20% and never retries before Retry-After', () => {
    expect(retryDelayMs(schedule, 1, null, () => 0)).toBe(4_000);
    expect(retryDelayMs(schedule, 1, null, () => 1)).toBe(6_000);
    expect(retryDelayMs(schedule, 2, null, () => 0.5)).toBe(300_000);
    expect(retryDelayMs(schedule, 1, 60_000, () => 0.5)).toBe(60_000);
    expect(retryDelayMs(schedule, 7, null, () => 0.5)).toBe(36_000_000);
  });

  it('reads Retry-After as seconds or an HTTP date, capped at a day', () => {
    const now = Date.parse('2026-03-14T12:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Sat, 14 Mar 2026 12:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Sat, 14 Mar 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('999999', now)).toBe(86_400_000);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });

  it('takes LUMEN_WEBHOOK_RETRY_SCHEDULE, LUMEN_WEBHOOK_TIMEOUT_MS and LUMEN_EVENT_RETENTION_DAYS, reporting bad values', () => {
    const c = loadConfig({ ...BASE, LUMEN_WEBHOOK_RETRY_SCHEDULE: '50ms, 1s,2m,1h', LUMEN_WEBHOOK_TIMEOUT_MS: '500', LUMEN_EVENT_RETENTION_DAYS: '90' });
    expect(c.webhookRetryScheduleMs).toEqual([50, 1000, 120_000, 3_600_000]);
    expect(c.webhookTimeoutMs).toBe(500);
    expect(c.eventRetentionDays).toBe(90);
    expect(loadConfig(BASE).webhookTimeoutMs).toBe(10_000);
    expect(loadConfig(BASE).eventRetentionDays).toBe(30);
    try {
      loadConfig({ ...BASE, LUMEN_WEBHOOK_RETRY_SCHEDULE: '5s,soon', LUMEN_EVENT_RETENTION_DAYS: '7', LUMEN_WEBHOOK_TIMEOUT_MS: '20000' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const text = (err as ConfigError).problems.join('\n');
      expect(text).toMatch(/LUMEN_WEBHOOK_RETRY_SCHEDULE/);
      expect(text).toMatch(/LUMEN_EVENT_RETENTION_DAYS/);
      expect(text).toMatch(/LUMEN_WEBHOOK_TIMEOUT_MS/);
    }
    expect(() => loadConfig({ ...BASE, LUMEN_ENVIRONMENT: 'production', LUMEN_WEBHOOK_TIMEOUT_MS: '500' })).toThrow(/LUMEN_WEBHOOK_TIMEOUT_MS/);
  });
});
