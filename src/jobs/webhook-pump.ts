import type { AppDeps } from '../app-deps.js';
import { claimDueDeliveries, recheckKeys, releaseLeases, unblockOrphans, type ClaimedDelivery, type OrderingKey } from '../db/repositories/webhook-delivery.repository.js';
import { attemptDelivery, LEASE_MS, recordAttempts, type Attempted, type SecretCache } from '../services/events/index.js';
import { DELIVERY_CHANNEL, parseNotificationPayload, releaseDueActions } from '../services/events/index.js';
import { ChannelListener } from './channel-listener.js';

export interface WebhookPumpOptions {
  /** Connection string of the database, for the listening connection. */
  readonly url: string;
  /** Attempts in flight at once in this process (and so at most this many connections to a partner). Default 64. */
  readonly concurrency?: number;
  /** How often the pump looks for due deliveries nobody woke it for, in ms. Default 2000. */
  readonly pollMs?: number;
  /** How often held events whose undo window has passed are released, in ms. Default 1000. */
  readonly holdReleaseMs?: number;
}

/** Retries further away than this are found by the poll instead of a timer of their own. */
const NEAR_RETRY_MS = 10 * 60_000;
/**
 * Deliveries leased per claim, per attempt slot: a claim takes about as long as the
 * attempts of a batch of `concurrency` on a busy machine, so it asks for two batches and
 * starts when fewer than that are waiting; the attempts then never wait for it.
 */
const CLAIMED_PER_SLOT = 2;
/** Deliveries leased at most, per attempt slot: waiting, in flight or being recorded. */
const LEASED_PER_SLOT = 6;
/** How long a few outcomes wait for more before they are recorded. */
const RECORD_DELAY_MS = 5;
/**
 * Leases a partner may hold in one process, per attempt it may have on the wire there:
 * room for the attempts being recorded and for the next ones leased while a record and
 * a claim run, so a partner at its limit does not wait for the database between
 * attempts. Measured at full size (10,000 events to one partner, 8 on the wire): with
 * leases equal to attempts 783 events/s, four per attempt 1,050, sixteen 2,392.
 */
export const LEASES_PER_PARTNER_SLOT = 16;
/** A leased delivery not started within this much of its lease's end is not sent: its lease runs out and it is claimed again (never two attempts at once). */
const LEASE_MARGIN_MS = 5_000;

/**
 * The webhook delivery worker of a serving process; webhook_delivery itself is the queue
 * (N6). The pump leases due deliveries in batches (twice `concurrency`), one statement
 * each, posts them with `concurrency` attempts in flight, and records the outcomes as
 * they come back, those that come back together in one statement. It leases the next
 * batch while the current one is being posted, so an attempt that ends is followed by
 * the next at once, without waiting for the database; it holds at most six times
 * `concurrency` leased (waiting, in flight or being recorded). Ordering per service
 * order, the retry schedule and the lease are kept by the claim and the record (see
 * webhook-delivery.repository.ts); several processes share the work, each skipping what
 * another is claiming.
 *
 * It looks for due deliveries when told (NOTIFY on DELIVERY_CHANNEL, sent by every
 * transaction that writes one), when a retry it scheduled falls due, when a record of
 * its own unblocked the next delivery of an order, and every pollMs in any case
 * (retries scheduled by other processes, leases of a process that died, a lost
 * notification). After each record that ended deliveries which had failed before, and
 * for each notification that names ordering keys, it checks those keys again for a
 * delivery left blocked (see recheckKeys).
 */
export class WebhookPump {
  private readonly concurrency: number;
  private readonly listener: ChannelListener;
  private readonly poll: NodeJS.Timeout;
  /** Releases the events of undoable actions whose window has passed (services/events/hold.ts). */
  private readonly holds: NodeJS.Timeout;
  private releasing: Promise<void> | null = null;
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  /** Leased and waiting for a free attempt slot. */
  private readonly waiting: { delivery: ClaimedDelivery; secrets: SecretCache; leasedAt: number }[] = [];
  private readonly attempts = new Set<Promise<void>>();
  private readonly toRecord: Attempted[] = [];
  private recording: Promise<void> | null = null;
  private recordTimer: NodeJS.Timeout | null = null;
  /** Leased by this process in all: waiting, in flight, or attempted and not yet recorded. */
  private leased = 0;
  /** The same, per partner: a partner this process holds at its lease limit has been left out of claims. */
  private readonly leasedByPartner = new Map<string, number>();
  /** Attempts on the wire per partner: at most the partner's in-flight limit; its other leased deliveries wait. */
  private readonly sendingByPartner = new Map<string, number>();
  private claiming: Promise<void> | null = null;
  /** Ordering keys to check again for a blocked delivery that may go now, or all of them. */
  private readonly toRecheck = new Map<string, OrderingKey>();
  private recheckAll = false;
  private rechecking: Promise<void> | null = null;
  /** Reasons to look so far, and how many of them the last claim that came back short had seen. */
  private wakes = 1;
  private drainedAt = 0;
  private stopping = false;

  private constructor(
    private readonly deps: AppDeps,
    opts: WebhookPumpOptions,
  ) {
    this.concurrency = opts.concurrency ?? 64;
    this.listener = new ChannelListener(opts.url, DELIVERY_CHANNEL, (payload) => this.notified(payload), deps.log);
    this.poll = setInterval(() => this.wake(), opts.pollMs ?? 2000);
    this.poll.unref();
    this.holds = setInterval(() => this.releaseHolds(), opts.holdReleaseMs ?? 1000);
    this.holds.unref();
  }

  /** Moves held events whose window has passed to the outbox; the deliveries it writes wake the pump. */
  private releaseHolds(): void {
    if (this.stopping || this.releasing) return;
    this.releasing = releaseDueActions(this.deps.db)
      .then(
        () => undefined,
        (err: unknown) => this.deps.log.warn({ err }, 'releasing held events failed; trying again shortly'),
      )
      .finally(() => {
        this.releasing = null;
      });
  }

  static async start(deps: AppDeps, opts: WebhookPumpOptions): Promise<WebhookPump> {
    const pump = new WebhookPump(deps, opts);
    await pump.listener.start();
    // Checks lost while no delivery worker ran are made now rather than at the next minute sweep.
    pump.recheckLater('all');
    pump.wake();
    return pump;
  }

  /** Looks for due deliveries now. */
  wake(): void {
    this.wakes++;
    this.claim();
  }

  /**
   * Stops leasing and gives back the leases of attempts not started yet; waits for the
   * attempts in flight (each ends within the webhook timeout, 10 s at most) and their
   * records. What it could not record is attempted again when the lease runs out.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.poll);
    clearInterval(this.holds);
    await this.releasing;
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    await this.listener.stop();
    await this.claiming;
    const waited = this.waiting.splice(0);
    this.holdLeases(waited.map((w) => w.delivery), -1);
    // Only leases still surely this process's are given back: an older one may have run
    // out and been taken by another process, whose lease must not be cleared.
    const startBy = this.startBy();
    const unstarted = waited.filter((w) => w.leasedAt >= startBy).map((w) => w.delivery.id);
    await releaseLeases(this.deps.db, unstarted).catch((err: unknown) => this.deps.log.warn({ err, count: unstarted.length }, 'giving back webhook leases failed; they run out'));
    while (this.attempts.size > 0) await Promise.allSettled([...this.attempts]);
    this.recordNow();
    while (this.recording) await this.recording;
    while (this.rechecking) await this.rechecking;
  }

  /**
   * Leases the next batch once fewer than a batch are waiting, if the limit allows a full
   * one. What partners at their limit of attempts on the wire hold (receivers that hang)
   * counts for neither: they are left out of the claim, and must not keep it from the
   * others (their leases are bounded per partner, and dropped unsent after 45 s).
   */
  private claim(): void {
    if (this.stopping || this.claiming || this.drainedAt === this.wakes) return;
    const limit = CLAIMED_PER_SLOT * this.concurrency;
    const { waiting, leased } = this.withoutHeldPartners();
    if (waiting >= limit || leased + limit > LEASED_PER_SLOT * this.concurrency) return;
    const seen = this.wakes;
    const leasedAt = Date.now();
    this.claiming = claimDueDeliveries(this.deps.db, limit, LEASE_MS, this.leaseLimit(), this.leasedByPartner)
      .then(
        (claimed) => {
          // Empty: everything due as of `seen` is leased, or belongs to a partner at its
          // lease limit (looked at again when woken, and when this process records the
          // attempts of a partner it held at the limit). A short claim is not enough: it
          // may have been cut by a partner's limit.
          if (claimed.length === 0) this.drainedAt = seen;
          const secrets: SecretCache = new Map();
          for (const delivery of claimed) this.waiting.push({ delivery, secrets, leasedAt });
          this.holdLeases(claimed, +1);
          this.send();
        },
        (err: unknown) => {
          // The database is unreachable or busy: the next wake-up or poll tries again.
          this.drainedAt = seen;
          this.deps.log.warn({ err }, 'claiming webhook deliveries failed');
        },
      )
      .finally(() => {
        this.claiming = null;
        this.claim();
      });
  }

  /**
   * Starts waiting attempts while slots are free, oldest first, passing over a partner
   * that has its limit of attempts on the wire (a receiver that hangs holds that many
   * slots, never the pump).
   */
  private send(): void {
    const limit = this.deps.config.webhookMaxInFlightPerPartner;
    const startBy = this.startBy();
    let i = 0;
    while (!this.stopping && this.attempts.size < this.concurrency && i < this.waiting.length) {
      if (this.waiting[i]!.leasedAt < startBy) {
        // Waited too long behind its partner's limit (a receiver that hangs): left to run out.
        this.holdLeases([this.waiting.splice(i, 1)[0]!.delivery], -1);
        continue;
      }
      const partner = this.waiting[i]!.delivery.external_system_id;
      const sending = this.sendingByPartner.get(partner) ?? 0;
      if (sending >= limit) {
        i++;
        continue;
      }
      const { delivery, secrets } = this.waiting.splice(i, 1)[0]!;
      this.sendingByPartner.set(partner, sending + 1);
      // No abort signal: an attempt ends within the webhook timeout, which bounds a stop as well.
      const run = attemptDelivery(this.deps, delivery, secrets).then(
        (attempted) => {
          this.toRecord.push(attempted);
          this.record();
        },
        (err: unknown) => {
          // Not expected (an attempt records its own failures); the lease runs out and it is made again.
          this.holdLeases([delivery], -1);
          this.deps.log.error({ err, deliveryId: delivery.id }, 'webhook attempt failed unexpectedly');
        },
      );
      this.attempts.add(run);
      void run.finally(() => {
        const left = (this.sendingByPartner.get(partner) ?? 1) - 1;
        if (left > 0) this.sendingByPartner.set(partner, left);
        else this.sendingByPartner.delete(partner);
        this.attempts.delete(run);
        this.send();
        this.claim();
      });
    }
  }

  /**
   * Records what came back, in one statement; what comes back meanwhile waits for the
   * next. Fewer than half a batch wait up to RECORD_DELAY_MS for more: fewer, larger
   * statements, for the database and this process alike.
   */
  private record(): void {
    if (this.recording || this.toRecord.length === 0) return;
    if (!this.stopping && this.toRecord.length < this.concurrency / 2) {
      this.recordTimer ??= setTimeout(() => {
        this.recordTimer = null;
        this.recordNow();
      }, RECORD_DELAY_MS);
      return;
    }
    this.recordNow();
  }

  private recordNow(): void {
    if (this.recordTimer) clearTimeout(this.recordTimer);
    this.recordTimer = null;
    if (this.recording || this.toRecord.length === 0) return;
    const group = this.toRecord.splice(0);
    this.recording = recordAttempts(this.deps, group)
      .then(
        (released) => {
          for (const { settled } of group) if (settled.nextAttemptAt) this.wakeAt(settled.nextAttemptAt);
          for (const next of released) this.wakeAt(next.next_attempt_at);
          // Only a delivery that had failed before can have had one written blocked behind it meanwhile.
          this.recheckLater(group.filter((a) => a.settled.nextAttemptAt === null && a.settled.attempt > 1).map((a) => a.delivery));
        },
        (err: unknown) => {
          // Their leases run out and the attempts are made again (at least once).
          this.deps.log.error({ err, count: group.length }, 'recording webhook attempts failed');
        },
      )
      .finally(() => {
        // A partner held at its limit had due deliveries left out of every claim since:
        // now that some of its leases are over, look again rather than at the next poll.
        const atLimit = this.holdLeases(group.map((a) => a.delivery), -1);
        this.recording = null;
        this.record();
        if (atLimit) this.wake();
        else this.claim();
      });
  }

  /**
   * Counts leases taken (+1) or over (-1), in all and per partner. Returns whether a
   * partner whose leases are over was held at its lease limit before.
   */
  private holdLeases(deliveries: readonly ClaimedDelivery[], change: 1 | -1): boolean {
    const limit = this.leaseLimit();
    let wasAtLimit = false;
    for (const d of deliveries) {
      const before = this.leasedByPartner.get(d.external_system_id) ?? 0;
      if (change < 0 && before >= limit) wasAtLimit = true;
      const after = before + change;
      if (after > 0) this.leasedByPartner.set(d.external_system_id, after);
      else this.leasedByPartner.delete(d.external_system_id);
    }
    this.leased += change * deliveries.length;
    return wasAtLimit;
  }

  /** Deliveries waiting and leases held, leaving out the partners that have their limit of attempts on the wire. */
  private withoutHeldPartners(): { waiting: number; leased: number } {
    const onWire = this.deps.config.webhookMaxInFlightPerPartner;
    let leased = this.leased;
    const held = new Set<string>();
    for (const [partner, n] of this.sendingByPartner) {
      if (n < onWire) continue;
      held.add(partner);
      leased -= this.leasedByPartner.get(partner) ?? 0;
    }
    if (held.size === 0) return { waiting: this.waiting.length, leased };
    let waiting = 0;
    for (const w of this.waiting) if (!held.has(w.delivery.external_system_id)) waiting++;
    return { waiting, leased };
  }

  /** Leases taken before this are not started any more: an attempt (at most the webhook timeout) could outlive them. */
  private startBy(): number {
    return Date.now() - (LEASE_MS - this.deps.config.webhookTimeoutMs - LEASE_MARGIN_MS);
  }

  /** Leases one partner may hold in this process (see LEASES_PER_PARTNER_SLOT). */
  private leaseLimit(): number {
    return this.deps.config.webhookMaxInFlightPerPartner * LEASES_PER_PARTNER_SLOT;
  }

  /** A notification: its keys (none after a reconnect: all, since some may have been missed). */
  private notified(payload: string | null): void {
    this.recheckLater(payload === null ? 'all' : parseNotificationPayload(payload));
    this.wake();
  }

  private recheckLater(keys: readonly OrderingKey[] | 'all'): void {
    if (keys === 'all') this.recheckAll = true;
    else for (const k of keys) this.toRecheck.set(`${k.external_system_id}/${k.ordering_key}`, { external_system_id: k.external_system_id, ordering_key: k.ordering_key });
    this.recheck();
  }

  /** Checks the keys gathered so far, in one statement; those gathered meanwhile wait for the next. */
  private recheck(): void {
    if (this.rechecking || (!this.recheckAll && this.toRecheck.size === 0)) return;
    const all = this.recheckAll;
    const keys = [...this.toRecheck.values()];
    this.recheckAll = false;
    this.toRecheck.clear();
    this.rechecking = (all ? unblockOrphans(this.deps.db) : recheckKeys(this.deps.db, keys))
      .then(
        (released) => {
          for (const r of released) this.wakeAt(r.next_attempt_at);
        },
        (err: unknown) => {
          // Left to the minute sweep, which checks every blocked delivery.
          this.deps.log.warn({ err }, 'checking blocked webhook deliveries failed');
        },
      )
      .finally(() => {
        this.rechecking = null;
        this.recheck();
      });
  }

  private wakeAt(at: Date): void {
    const delay = at.getTime() - Date.now();
    if (delay <= 0) return this.wake();
    if (delay > NEAR_RETRY_MS || this.stopping) return;
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      this.wake();
    }, delay + 5);
    timer.unref();
    this.retryTimers.add(timer);
  }
}
