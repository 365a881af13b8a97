import { Worker } from 'node:worker_threads';
import type { ScryptOptions } from 'node:crypto';
import { AppError } from './errors.js';

/**
 * scrypt on threads of its own, a bounded number at once. node:crypto's async scrypt
 * runs on libuv's thread pool, the one file and blob-store work uses too (4 threads by
 * default): a flood of sign-ins (each hash ~32 MiB and 50-100 ms) would leave a partner's
 * photo waiting behind it. Here at most `size` hashes run, each on a worker thread; a
 * request waits at most `maxWaitMs` for one, else it is refused with 503 and
 * Retry-After (the caller's answer to an overload, not a queue that grows).
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
parentPort.on('message', (job) => {
  try {
    const key = scryptSync(job.password, Buffer.from(job.salt), job.keylen, job.options);
    parentPort.postMessage({ id: job.id, key });
  } catch (err) {
    parentPort.postMessage({ id: job.id, error: String((err && err.message) || err) });
  }
});
`;

interface Job {
  id: number;
  password: string;
  salt: Buffer;
  keylen: number;
  options: ScryptOptions;
  resolve: (key: Buffer) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout | null;
}

export class HashPool {
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Job>();
  private readonly queue: Job[] = [];
  private readonly live = new Set<Worker>();
  private nextId = 0;

  constructor(
    private size: number,
    private readonly maxWaitMs = 2000,
  ) {}

  /** How many hashes may run at once (LUMEN_PASSWORD_HASHES); takes effect for new workers. */
  resize(size: number): void {
    this.size = Math.max(1, size);
  }

  get waiting(): number {
    return this.queue.length;
  }

  scrypt(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      const job: Job = { id: ++this.nextId, password, salt, keylen, options, resolve, reject, timer: null };
      const worker = this.take();
      if (worker) return this.run(worker, job);
      job.timer = setTimeout(() => {
        const i = this.queue.indexOf(job);
        if (i >= 0) this.queue.splice(i, 1);
        reject(new AppError('unavailable', {}, undefined, { 'retry-after': '1' }));
      }, this.maxWaitMs);
      this.queue.push(job);
    });
  }

  private take(): Worker | null {
    const idle = this.idle.pop();
    if (idle) return idle;
    if (this.live.size >= this.size) return null;
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    this.live.add(worker);
    worker.on('message', (msg: { id: number; key?: Uint8Array; error?: string }) => this.done(worker, msg));
    worker.on('error', (err) => this.lost(worker, err));
    worker.on('exit', () => this.lost(worker, new Error('password hashing thread exited')));
    return worker;
  }

  private run(worker: Worker, job: Job): void {
    if (job.timer) clearTimeout(job.timer);
    this.busy.set(worker, job);
    // Keeps the process alive while a hash is computed (a CLI command awaits it), not while idle.
    worker.ref();
    worker.postMessage({ id: job.id, password: job.password, salt: job.salt, keylen: job.keylen, options: job.options });
  }

  private done(worker: Worker, msg: { id: number; key?: Uint8Array; error?: string }): void {
    const job = this.busy.get(worker);
    this.busy.delete(worker);
    if (job && job.id === msg.id) {
      if (msg.key) job.resolve(Buffer.from(msg.key));
      else job.reject(new Error(msg.error ?? 'scrypt failed'));
    }
    const next = this.queue.shift();
    if (next) return this.run(worker, next);
    worker.unref();
    this.idle.push(worker);
  }

  /** A thread that failed or exited: its job fails, and a later hash starts a new thread. */
  private lost(worker: Worker, err: Error): void {
    if (!this.live.delete(worker)) return;
    const job = this.busy.get(worker);
    this.busy.delete(worker);
    const i = this.idle.indexOf(worker);
    if (i >= 0) this.idle.splice(i, 1);
    job?.reject(err);
  }
}
