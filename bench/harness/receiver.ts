import type { ChildProcess } from 'node:child_process';
import type { ReceiverMessage, ReceiverRequest } from '../drivers/webhook-receiver.js';
import { forkDriver } from './drivers.js';

export type ReceiverStats = Omit<Extract<ReceiverMessage, { type: 'stats' }>, 'type'>;

type Reply<T extends ReceiverMessage['type']> = Extract<ReceiverMessage, { type: T }>;

/** The webhook receiver process (bench/drivers/webhook-receiver.ts) seen from the bench. */
export class Receiver {
  private waiters: { type: string; resolve: (m: ReceiverMessage) => void }[] = [];
  private arrivalWaiters = new Map<string, (at: number) => void>();
  private early = new Map<string, number>();

  private constructor(private readonly child: ChildProcess, readonly port: number) {
    child.on('message', (m: ReceiverMessage) => {
      if (m.type === 'arrival') {
        const w = this.arrivalWaiters.get(m.eventId);
        if (w) {
          this.arrivalWaiters.delete(m.eventId);
          w(m.at);
        } else this.early.set(m.eventId, m.at);
        return;
      }
      const i = this.waiters.findIndex((w) => w.type === m.type);
      if (i >= 0) this.waiters.splice(i, 1)[0]!.resolve(m);
    });
  }

  static async start(repo: string, secret: string): Promise<Receiver> {
    const child = forkDriver(repo, 'webhook-receiver.ts', [secret]);
    const port = await new Promise<number>((resolve, reject) => {
      child.once('message', (m: ReceiverMessage) => (m.type === 'listening' ? resolve(m.port) : reject(new Error(`the webhook receiver said ${m.type}`))));
      child.once('exit', (code) => reject(new Error(`the webhook receiver exited with ${code}`)));
    });
    return new Receiver(child, port);
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  private ask<T extends ReceiverRequest['type']>(request: Extract<ReceiverRequest, { type: T }>): Promise<Reply<T>> {
    return new Promise((resolve) => {
      this.waiters.push({ type: request.type, resolve: (m) => resolve(m as Reply<T>) });
      this.child.send(request);
    });
  }

  async reset(): Promise<void> {
    this.early.clear();
    await this.ask({ type: 'reset' });
  }

  async stats(): Promise<ReceiverStats> {
    const { type: _type, ...stats } = await this.ask({ type: 'stats' });
    return stats;
  }

  async arrivals(): Promise<Map<string, number>> {
    return new Map((await this.ask({ type: 'arrivals' })).arrivals);
  }

  /** Push mode: each new arrival is reported at once (for latency). */
  async setPush(on: boolean): Promise<void> {
    await this.ask({ type: 'push', on });
  }

  /** Resolves with the arrival time (epoch ms) of the event, in push mode. */
  arrivalOf(eventId: string, timeoutMs: number): Promise<number> {
    const early = this.early.get(eventId);
    if (early !== undefined) {
      this.early.delete(eventId);
      return Promise.resolve(early);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.arrivalWaiters.delete(eventId);
        reject(new Error(`event ${eventId} did not reach the receiver within ${timeoutMs} ms`));
      }, timeoutMs);
      this.arrivalWaiters.set(eventId, (at) => {
        clearTimeout(timer);
        resolve(at);
      });
    });
  }

  /** Polls the receiver until `count` distinct events arrived or the deadline passed; returns what arrived. */
  async waitForCount(count: number, timeoutMs: number): Promise<ReceiverStats> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = await this.stats();
      if (s.count >= count || Date.now() > deadline) return s;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  stop(): void {
    this.child.kill('SIGTERM');
  }
}
