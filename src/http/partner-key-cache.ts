import type { IncomingHttpHeaders } from 'node:http';
import type { Database } from '../db/database.js';
import { findActiveKeyForCache, type ActiveKey } from '../db/repositories/api-key.repository.js';
import { ChannelListener } from '../jobs/channel-listener.js';
import { keyMatches } from '../lib/api-key.js';
import { AppError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import type { Scope } from '../db/tables/foundation.js';
import { authenticatePartnerCounted, presentedKey, principalOf, type PartnerPrincipal } from './auth.js';
import { decideRateLimit, RateCounter, rateLimitWindow } from './rate-limit.js';

/** The channel migration 0096's triggers notify on: a partner's id, or '*'. */
export const PARTNER_AUTH_CHANNEL = 'lumen_partner_auth';

/** Keys kept at most; past it the cache starts again empty (a bound on memory, not an eviction policy). */
const MAX_ENTRIES = 100_000;

interface CachedKey extends ActiveKey {
  readonly expires_at: Date | null;
  readonly key_prefix: string;
}

/**
 * Partner authentication without a round trip (issue 26): key id → the key's hash, its
 * partner, scopes, settings, kept in this process. Every change that matters (a key
 * rotated, revoked or expired early, a partner disabled, its scopes, rate limit or code
 * changed) notifies every instance through LISTEN/NOTIFY (migration 0096's triggers, so
 * any writer does), and the entries of that partner are dropped. While the listening
 * connection is down nothing is answered from the cache (it is dropped, and every
 * request reads the database as before) until the connection is back: a notification
 * missed meanwhile cannot leave a stale entry behind. An entry read while a
 * notification arrived is not kept (a generation counter), so a read racing a change
 * cannot cache the old state. Unknown keys are not cached: they always reach the
 * database.
 *
 * Rate limits are counted in process (RateCounter) and reconciled in batches.
 */
export class PartnerKeyCache {
  private readonly entries = new Map<string, CachedKey>();
  private generation = 0;
  private readonly listener: ChannelListener;
  readonly counter: RateCounter;
  private hits = 0;

  constructor(
    private readonly db: Database,
    directUrl: string,
    private readonly log: Logger,
  ) {
    this.listener = new ChannelListener(directUrl, PARTNER_AUTH_CHANNEL, (payload) => this.notified(payload), log);
    this.counter = new RateCounter(db, (err) => log.warn({ err }, 'reconciling rate-limit counts failed; retrying'));
  }

  async start(): Promise<void> {
    await this.listener.start();
  }

  async stop(): Promise<void> {
    await this.listener.stop();
    this.drop();
    await this.counter.stop();
  }

  /** Requests answered from the cache so far (tests, metrics). */
  get cacheHits(): number {
    return this.hits;
  }

  /** Whether requests are answered from the cache now (the listening connection is up). */
  get active(): boolean {
    return this.listener.listening;
  }

  /** authenticatePartnerCounted, from the cache when it can be trusted. */
  async authenticate(headers: IncomingHttpHeaders, opts: { anyOfScopes: readonly Scope[]; defaultLimitPerMinute: number }): Promise<PartnerPrincipal> {
    if (!this.listener.listening) {
      this.drop();
      const principal = await authenticatePartnerCounted(this.db, headers, opts);
      if (principal.quota) this.counter.learn(principal.externalSystemId, rateLimitWindow(), principal.quota.limit - principal.quota.remaining);
      return principal;
    }
    const { presented, keyId } = presentedKey(headers);
    // One turn of the event loop first: a notification already on the listening
    // socket (a change committed just before this request arrived) is read before the
    // cache answers. No round trip; it narrows the window to the notification's own
    // travel time (about a millisecond).
    if (this.entries.has(keyId)) await new Promise<void>((resolve) => setImmediate(resolve));
    let entry = this.listener.listening ? this.entries.get(keyId) : undefined;
    if (entry) {
      this.hits++;
    } else {
      const generation = this.generation;
      const row = await findActiveKeyForCache(this.db, keyId);
      if (!row) throw new AppError('unauthorized');
      entry = row;
      if (generation === this.generation && this.listener.listening) {
        if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
        this.entries.set(keyId, row);
      }
    }
    if (!keyMatches(presented, entry.key_hash)) throw new AppError('unauthorized');
    const now = Date.now();
    if (entry.expires_at && entry.expires_at.getTime() <= now) {
      this.entries.delete(keyId);
      throw new AppError('unauthorized');
    }
    const principal: PartnerPrincipal = { ...principalOf(entry), keyExpiresAt: entry.expires_at, keyPrefix: entry.key_prefix };
    // Not counted: a call without the operation's scope (requireScope refuses it next).
    if (opts.anyOfScopes.length > 0 && !opts.anyOfScopes.some((s) => entry.scopes.includes(s))) return principal;
    const count = await this.counter.count(entry.external_system_id, rateLimitWindow(now));
    return { ...principal, quota: decideRateLimit(this.db, count, entry.rate_limit_per_minute ?? opts.defaultLimitPerMinute, now) };
  }

  private notified(payload: string | null): void {
    // null: the listener reconnected, and what was sent meanwhile is lost.
    if (payload === null || payload === '*' || payload === '') return this.drop();
    this.generation++;
    for (const [keyId, entry] of this.entries) if (entry.external_system_id === payload) this.entries.delete(keyId);
  }

  private drop(): void {
    this.generation++;
    this.entries.clear();
  }
}
