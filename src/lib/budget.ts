/**
 * A process-wide budget of some resource (bytes held in memory, connections open):
 * `acquire(n)` waits, first come first served, until n units fit, and never fails for
 * lack of room. A request larger than the whole budget is cut to the budget, so it
 * runs alone rather than never. Whoever holds units must not wait on this budget again
 * before releasing them: holders then always finish, and the queue always moves.
 */
export class Budget {
  private used = 0;
  private readonly queue: { units: number; grant: () => void }[] = [];

  constructor(readonly capacity: number) {
    if (!(capacity >= 1)) throw new Error(`a budget needs a capacity of at least 1 (got ${capacity})`);
  }

  /** Units held now. */
  get inUse(): number {
    return this.used;
  }

  /** Requests waiting for room. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Waits for `units` (at most the capacity), then holds them until the lease is
   * released. An aborted signal takes the request out of the queue and rejects with the
   * signal's reason.
   */
  acquire(units: number, signal?: AbortSignal): Promise<Lease> {
    const want = Math.min(Math.max(0, Math.ceil(units)), this.capacity);
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (this.queue.length === 0 && this.used + want <= this.capacity) {
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
        const at = this.queue.indexOf(entry);
        if (at < 0) return;
        this.queue.splice(at, 1);
        reject(abortReason(signal!));
        // The head may have been this request: whoever is next may fit now.
        this.drain();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(entry);
    });
  }

  private lease(units: number): Lease {
    let held = units;
    const give = (n: number): void => {
      held -= n;
      this.used -= n;
      this.drain();
    };
    return {
      get units() {
        return held;
      },
      shrink: (to) => {
        const keep = Math.max(0, Math.ceil(to));
        if (keep < held) give(held - keep);
      },
      release: () => {
        if (held > 0) give(held);
      },
    };
  }

  private drain(): void {
    while (this.queue.length > 0 && this.used + this.queue[0]!.units <= this.capacity) {
      const next = this.queue.shift()!;
      this.used += next.units;
      next.grant();
    }
  }
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
