import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../app-deps.js';
import { acquirePermits, releasePermits, renewPermits } from '../db/repositories/webhook-permit.repository.js';
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
/** How long a send permit stays this instance's without a renewal, and how often held ones are renewed. */
export const PERMIT_TTL_MS = 30_000;
const PERMIT_RENEW_MS = 10_000;
/** A partner with nothing waiting or on the wire here keeps one permit this long (its next event goes without a round trip), then none. */
const PERMIT_IDLE_KEEP_MS = 30_000;
/** A partner whose permits are all held by other instances: its leases here are given back and it is left out of claims this long. */
const PERMIT_BACKOFF_MS = 500;

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
export interface WebhookPumpState {
  /** Send permits held, per partner id. */
  permits: Record<string, number>;
  /** Attempts on the wire, per partner id. */
  sending: Record<string, number>;
  /** Partners whose permits other instances hold, left out of this one's claims for now. */
  backingOff: string[];
}

interface WaitingDelivery {
  delivery: ClaimedDelivery;
  secrets: SecretCache;
  leasedAt: number;
}

export class WebhookPump {
  private readonly concurrency: number;
  private readonly listener: ChannelListener;
  private readonly poll: NodeJS.Timeout;
  /** Releases the events of undoable actions whose window has passed (services/events/hold.ts). */
  private readonly holds: NodeJS.Timeout;
  private releasing: Promise<void> | null = null;
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  /** Leased and waiting for a free attempt slot. */
  private readonly waiting: WaitingDelivery[] = [];
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
  /** This instance's name in webhook_send_permit. */
  private readonly holder = randomUUID();
  /** Send permits held per partner: attempts on the wire here never exceed them (LUMEN_WEBHOOK_MAX_IN_FLIGHT_PER_PARTNER across every instance). */
  private permits = new Map<string, number>();
  /** Until when the permits held are surely still this instance's (last acquire or renewal, less a margin). */
  private permitsValidUntil = 0;
  private acquiring: Promise<void> | null = null;
  private wantPermits = false;
  /** Partners whose permits other instances hold: left out of claims until then. */
  private readonly permitBackoff = new Map<string, number>();
  /** Partners with nothing here since then: their permits are given back when the idle time passes. */
  private readonly idleSince = new Map<string, number>();
  private readonly permitTimer: NodeJS.Timeout;
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
    this.permitTimer = setInterval(() => this.renewPermits(), PERMIT_RENEW_MS);
    this.permitTimer.unref();
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

  /** What this instance holds and sends per partner now (diagnostics and tests). */
  state(): WebhookPumpState {
    return {
      permits: Object.fromEntries(this.permits),
      sending: Object.fromEntries(this.sendingByPartner),
      backingOff: [...this.permitBackoff.keys()],
    };
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
    clearInterval(this.permitTimer);
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
    while (this.acquiring) await this.acquiring;
    await releasePermits(this.deps.db, this.holder, null).catch((err: unknown) => this.deps.log.warn({ err }, 'giving back webhook send permits failed; they run out'));
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
    this.claiming = claimDueDeliveries(this.deps.db, limit, LEASE_MS, this.leaseLimit(), this.claimHeld())
      .then(
        (claimed) => {
          // Short of the limit: everything due as of `seen` is leased, or belongs to a
          // partner held at its lease limit, so the next claim waits for a reason to look
          // (a notification, a retry falling due, the poll, or a record that takes a
          // partner below half its limit). The claim takes each partner's free slots and
          // then the oldest `limit` of them: fewer than `limit` means no partner was cut
          // by the batch, only by its own slots, after which it holds its whole limit.
          // Claiming again at once found nothing: in a 10,000-event fan-out to one partner,
          // every other claim came back empty.
          if (claimed.length < limit) this.drainedAt = seen;
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
    const permitsValid = Date.now() < this.permitsValidUntil;
    const startBy = this.startBy();
    let short = false;
    // Partners found at their limit in this pass: the rest of their waiting deliveries are
    // passed over at the cost of a lookup (this runs after every attempt, over a backlog
    // of up to a claim's deliveries, most of them a busy partner's).
    const full = new Set<string>();
    let i = 0;
    while (!this.stopping && this.attempts.size < this.concurrency && i < this.waiting.length) {
      if (this.waiting[i]!.leasedAt < startBy) {
        // Waited too long behind its partner's limit (a receiver that hangs): left to run out.
        this.holdLeases([this.waiting.splice(i, 1)[0]!.delivery], -1);
        continue;
      }
      const partner = this.waiting[i]!.delivery.external_system_id;
      if (full.has(partner)) {
        i++;
        continue;
      }
      const sending = this.sendingByPartner.get(partner) ?? 0;
      const permitted = permitsValid ? Math.min(limit, this.permits.get(partner) ?? 0) : 0;
      if (sending >= permitted) {
        // More permits are asked for (one statement for every partner short of them).
        if (sending < limit && !this.permitBackoff.has(partner)) short = true;
        full.add(partner);
        i++;
        continue;
      }
      this.idleSince.delete(partner);
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
        else {
          this.sendingByPartner.delete(partner);
          if (!this.waiting.some((w) => w.delivery.external_system_id === partner)) this.idleSince.set(partner, Date.now());
        }
        this.attempts.delete(run);
        this.send();
        this.claim();
      });
    }
    if (short) this.acquire();
  }

  /**
   * Asks, in one statement, for as many permits as each partner with deliveries waiting
   * here could use (up to its limit), and gives back those of partners idle here for
   * PERMIT_IDLE_KEEP_MS (one is kept until then, so a partner's next event goes without
   * this round trip). A partner that got none while another instance holds them all:
   * its leases here are given back, for the instance that holds its permits to claim,
   * and it is left out of claims for PERMIT_BACKOFF_MS.
   */
  private acquire(): void {
    if (this.stopping) return;
    if (this.acquiring) {
      this.wantPermits = true;
      return;
    }
    this.wantPermits = false;
    const limit = this.deps.config.webhookMaxInFlightPerPartner;
    const now = Date.now();
    const wants = new Map<string, number>();
    for (const w of this.waiting) {
      const p = w.delivery.external_system_id;
      if (this.permitBackoff.has(p)) continue;
      wants.set(p, Math.min(limit, (wants.get(p) ?? this.sendingByPartner.get(p) ?? 0) + 1));
    }
    for (const [p, n] of this.sendingByPartner) if (!wants.has(p)) wants.set(p, n);
    for (const p of this.permits.keys()) if (!wants.has(p) && !this.idleSince.has(p)) this.idleSince.set(p, now);
    for (const [p, since] of this.idleSince) {
      if (wants.has(p)) continue;
      wants.set(p, now - since < PERMIT_IDLE_KEEP_MS ? 1 : 0);
      if (now - since >= PERMIT_IDLE_KEEP_MS) this.idleSince.delete(p);
    }
    if (wants.size === 0) return;
    const asked = Date.now();
    this.acquiring = acquirePermits(this.deps.db, this.holder, wants, limit, PERMIT_TTL_MS)
      .then(
        (held) => {
          this.permitsValidUntil = asked + PERMIT_TTL_MS - this.deps.config.webhookTimeoutMs - LEASE_MARGIN_MS;
          const blocked: string[] = [];
          for (const [p, want] of wants) {
            const n = held.get(p) ?? 0;
            if (n > 0) this.permits.set(p, n);
            else this.permits.delete(p);
            if (n === 0 && want > 0 && !this.sendingByPartner.has(p)) blocked.push(p);
          }
          if (blocked.length) this.backOff(blocked);
        },
        (err: unknown) => this.deps.log.warn({ err }, 'taking webhook send permits failed'),
      )
      .finally(() => {
        this.acquiring = null;
        if (this.wantPermits) this.acquire();
        this.send();
        // Sends that started make room for the next claim.
        this.claim();
      });
  }

  /** Gives back the leases waiting here for partners whose permits other instances hold, and leaves them out of claims for a while. */
  private backOff(partners: readonly string[]): void {
    const until = Date.now() + PERMIT_BACKOFF_MS;
    const set = new Set(partners);
    for (const p of partners) this.permitBackoff.set(p, until);
    const given: WaitingDelivery[] = [];
    for (let i = this.waiting.length - 1; i >= 0; i--) if (set.has(this.waiting[i]!.delivery.external_system_id)) given.push(this.waiting.splice(i, 1)[0]!);
    this.holdLeases(given.map((w) => w.delivery), -1);
    const startBy = this.startBy();
    void releaseLeases(this.deps.db, given.filter((w) => w.leasedAt >= startBy).map((w) => w.delivery.id)).catch((err: unknown) => this.deps.log.warn({ err }, 'giving back webhook leases failed; they run out'));
    const timer = setTimeout(() => {
      // The backoffs this timer was set for end now, unless a later backoff replaced one.
      // Not "those whose time has come by the clock": a timer counts from the event loop's
      // own clock, read at the start of the tick, so it may fire a few ms before `until`,
      // and a partner left in backoff then was left out of every claim for good.
      const now = Date.now();
      for (const [p, t] of this.permitBackoff) if (t <= now || (t === until && set.has(p))) this.permitBackoff.delete(p);
      this.wake();
    }, PERMIT_BACKOFF_MS);
    timer.unref();
  }

  /** Renews the permits held; what is no longer held (a renewal that came too late) is forgotten. */
  private renewPermits(): void {
    if (this.stopping || this.permits.size === 0) return;
    const asked = Date.now();
    void renewPermits(this.deps.db, this.holder, PERMIT_TTL_MS).then(
      (held) => {
        this.permitsValidUntil = asked + PERMIT_TTL_MS - this.deps.config.webhookTimeoutMs - LEASE_MARGIN_MS;
        for (const p of [...this.permits.keys()]) {
          const n = held.get(p) ?? 0;
          if (n > 0) this.permits.set(p, Math.min(n, this.permits.get(p)!));
          else this.permits.delete(p);
        }
        // Idle partners' permits are given back by the next acquire.
        if (this.idleSince.size > 0) this.acquire();
      },
      (err: unknown) => this.deps.log.warn({ err }, 'renewing webhook send permits failed; no attempt starts once they may have run out'),
    );
  }

  /** The lease counts the claim leaves out partners by: those at their lease limit, and those backing off (as if at it). */
  private claimHeld(): ReadonlyMap<string, number> {
    const limit = this.leaseLimit();
    const held = new Map(this.leasedByPartner);
    // A partner is claimed for again once half its leases are over, not after each few:
    // every claim walks past the leases in flight, so many small claims cost the
    // database more per delivery than fewer large ones.
    for (const [p, n] of held) if (n >= limit / 2) held.set(p, limit);
    for (const p of this.permitBackoff.keys()) held.set(p, limit);
    return held;
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
      // Left out of claims from half its lease limit (see claimHeld): it is looked for again when it drops below.
      if (change < 0 && before >= limit / 2 && before + change < limit / 2) wasAtLimit = true;
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
