/** What the plan tests read of EXPLAIN (FORMAT JSON): one node of a plan, with its children. */
export interface PlanNode {
  'Node Type'?: string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Recheck Cond'?: string;
  Filter?: string;
  /** With ANALYZE: rows returned per loop, loops, and rows a filter read and left. */
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

interface Queryable {
  query<R>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

/** Every node of a plan, the root first. */
export function planNodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(planNodes)];
}

/**
 * Every node of a compiled statement's plan. With `analyze` the statement runs: call it
 * inside a transaction the caller rolls back when the statement writes.
 */
export async function explainNodes(client: Queryable, q: { sql: string; parameters: readonly unknown[] }, opts: { analyze?: boolean } = {}): Promise<PlanNode[]> {
  const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (${opts.analyze ? 'ANALYZE, ' : ''}FORMAT JSON) ${q.sql}`, [...q.parameters]);
  return planNodes(rows[0]!['QUERY PLAN'][0].Plan);
}
