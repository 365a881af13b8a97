import type { QueueDefinition } from './queue.js';

/** Every queue Lumen runs. Each queue lives in its own <name>.job.ts file. */
export const QUEUES: readonly QueueDefinition<never>[] = [];
