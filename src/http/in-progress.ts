import { AppError } from '../lib/errors.js';

/**
 * Requests in progress per key, in this process: past the limit a request is refused
 * with 429 and Retry-After before its body is read, so one partner cannot hold the
 * memory of many large requests at once (each may carry 40 MB of inline photos).
 * Per instance, like the memory it protects.
 */
export class InProgressLimit {
  private readonly counts = new Map<string, number>();

  constructor(private readonly limit: number) {}

  /** Takes a place for `key`, or throws 429; call the result when the request is over. */
  enter(key: string): () => void {
    const n = this.counts.get(key) ?? 0;
    // Its own policy name: the answer must not name the minute quota ("default"), which
    // has room left; it is this limit that applied (documented in the contracts' 429).
    if (n >= this.limit) throw new AppError('rate-limited', { retryAfter: 1 }, undefined, { 'retry-after': '1', 'ratelimit-policy': `"in-progress";q=${this.limit}`, ratelimit: '"in-progress";r=0;t=1' });
    this.counts.set(key, n + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const now = (this.counts.get(key) ?? 1) - 1;
      if (now <= 0) this.counts.delete(key);
      else this.counts.set(key, now);
    };
  }
}
