import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import type { Database, Executor } from '../db/database.js';
import type { Jobs } from './index.js';

/**
 * Carries the job queue on a database handle and on every transaction opened from it,
 * so code that only receives a transaction (the outbox's emitEvent) can still enqueue
 * in that transaction. Leaves queries and results untouched.
 */
class JobsCarrier implements KyselyPlugin {
  constructor(readonly jobs: Jobs) {}
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/** The same database, whose transactions know the job queue (see jobsOf). */
export function withJobs(db: Database, jobs: Jobs): Database {
  return db.withPlugin(new JobsCarrier(jobs));
}

/** The job queue carried by this database or transaction, or null when it carries none. */
export function jobsOf(executor: Executor): Jobs | null {
  const carrier = executor.getExecutor().plugins.find((p): p is JobsCarrier => p instanceof JobsCarrier);
  return carrier?.jobs ?? null;
}
