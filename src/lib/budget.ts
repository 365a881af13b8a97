/**
 * A process-wide budget of some resource (bytes held in memory, connections open):
 * `acquire(n)` waits, first come first served, until n units fit, and never fails for
 * lack of room. A request larger than the whole budget is cut to the budget, so it
 * runs alone rather than never. Whoever holds units must not wait on this budget again
 * before releasing them: holders then always finish, and the queue always moves.
 */
export class Budget {
  /** One key: first come first served, as FairBudget serves within a key. */
  private readonly fair: FairBudget;

  constructor(readonly capacity: number) {
    this.fair = new FairBudget(capacity);
  }

  /** Units held now. */
  get inUse(): number {
    return this.fair.inUse;
  }

  /** Requests waiting for room. */
  get waiting(): number {
    return this.fair.waiting;
  }

  /**
   * Waits for `units` (at most the capacity), then holds them until the lease is
   * released. An aborted signal takes the request out of the queue and rejects with the
   * signal's reason.
   */
  acquire(units: number, signal?: AbortSignal): Promise<Lease> {
    return this.fair.acquire('', units, signal);
  }
}

/**
 * A budget whose waiting requests are served by key (a city) in turn: while several keys
 * wait, the next free units go to the next key in the round, however many requests
 * each has queued, so a city that sends a flood delays another city's request by at
 * most one of its own for each unit that frees, never by its whole queue. A key alone uses the whole
 * budget, as with Budget. Within a key, first come first served.
 */
export class FairBudget {
  private used = 0;
  /** Waiting requests per key; the map's order is the round's order (the head's turn is next). */
  private readonly queues = new Map<string, { units: number; grant: () => void }[]>();

  constructor(readonly capacity: number) {
    if (!(capacity >= 1)) throw new Error(`a budget needs a capacity of at least 1 (got ${capacity})`);
  }

  get inUse(): number {
    return this.used;
  }

  get waiting(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.length;
    return n;
  }

  /** Waits for `units` (at most the capacity) in `key`'s turn, then holds them until released. */
  acquire(key: string, units: number, signal?: AbortSignal): Promise<Lease> {
    const want = Math.min(Math.max(0, Math.ceil(units)), this.capacity);
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (this.queues.size === 0 && this.used + want <= this.capacity) {
      this.used += want;
      return Promise.resolve(this.lease(want));
    }
    return new Promise<Lease>((resolve, reject) => {
      const entry = {
        units: want,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.lease(want));
        },
      };
      const onAbort = (): void => {
        const queue = this.queues.get(key);
        const at = queue?.indexOf(entry) ?? -1;
        if (at < 0) return;
        queue!.splice(at, 1);
        if (queue!.length === 0) this.queues.delete(key);
        reject(abortReason(signal!));
        // The head may have been this request: whoever is next may fit now.
        this.drain();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const queue = this.queues.get(key);
      if (queue) queue.push(entry);
      else this.queues.set(key, [entry]);
    });
  }

  private lease(units: number): Lease {
    return leaseOf(units, (n) => {
      this.used -= n;
      this.drain();
    });
  }

  private drain(): void {
    for (;;) {
      const turn = this.queues.entries().next();
      if (turn.done) return;
      const [key, queue] = turn.value;
      const next = queue[0]!;
      // The key whose turn it is waits for its units: nobody passes it, so large requests are not starved.
      if (this.used + next.units > this.capacity) return;
      queue.shift();
      this.used += next.units;
      // To the end of the round (or out of it when nothing of it waits).
      this.queues.delete(key);
      if (queue.length > 0) this.queues.set(key, queue);
      next.grant();
    }
  }
}

/** A lease of `units`; `give(n)` hands n of them back to their budget. */
function leaseOf(units: number, give: (n: number) => void): Lease {
  let held = units;
  const giveBack = (n: number): void => {
    held -= n;
    give(n);
  };
  return {
    get units() {
      return held;
    },
    shrink: (to) => {
      const keep = Math.max(0, Math.ceil(to));
      if (keep < held) giveBack(held - keep);
    },
    release: () => {
      if (held > 0) giveBack(held);
    },
  };
}

/** Units held from a Budget. Releasing twice is harmless. */
export interface Lease {
  readonly units: number;
  /** Gives back what is above `to` (nothing when the lease holds `to` or less). */
  shrink(to: number): void;
  release(): void;
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : Object.assign(new Error('aborted'), { name: 'AbortError' });
}

/** What holds units of a budget: a Budget, or one city's view of a SharedBudget. */
export interface Acquirer {
  acquire(units: number, signal?: AbortSignal): Promise<Lease>;
}

/**
 * A process-wide budget of which one key (a city) may hold at most a share: a city
 * whose hosts drip slowly fills its own share and waits there, never the whole budget,
 * so another city's request finds room at once. A unit is taken from the key's share
 * first, then from the total (always in that order, so holders never wait on each
 * other in a circle). Shares of keys that hold nothing are dropped.
 */
export class SharedBudget {
  private readonly shares = new Map<string, Budget>();

  constructor(
    readonly total: Budget,
    /** Percent of the total one key may hold (1–100). */
    readonly sharePercent: number,
  ) {}

  get shareCapacity(): number {
    return Math.max(1, Math.floor((this.total.capacity * this.sharePercent) / 100));
  }

  /** The budget as one key sees it. */
  for(key: string | null): Acquirer {
    return { acquire: (units, signal) => this.acquire(key, units, signal) };
  }

  async acquire(key: string | null, units: number, signal?: AbortSignal): Promise<Lease> {
    if (key === null || this.sharePercent >= 100) return this.total.acquire(units, signal);
    let share = this.shares.get(key);
    if (!share) {
      share = new Budget(this.shareCapacity);
      this.shares.set(key, share);
    }
    const own = await share.acquire(units, signal);
    let all: Lease;
    try {
      all = await this.total.acquire(own.units, signal);
    } catch (err) {
      this.give(key, own);
      throw err;
    }
    return {
      get units() {
        return all.units;
      },
      shrink: (to) => {
        all.shrink(to);
        own.shrink(to);
      },
      release: () => {
        all.release();
        this.give(key, own);
      },
    };
  }

  /** Units one key holds now (diagnostics, tests). */
  heldBy(key: string): number {
    return this.shares.get(key)?.inUse ?? 0;
  }

  private give(key: string, lease: Lease): void {
    lease.release();
    const share = this.shares.get(key);
    if (share && share.inUse === 0 && share.waiting === 0) this.shares.delete(key);
  }
}
