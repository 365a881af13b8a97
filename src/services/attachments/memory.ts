import type { Config } from '../../config.js';
import { Budget, SharedBudget } from '../../lib/budget.js';

const budgets = new WeakMap<Config, SharedBudget>();

/**
 * The attachment bytes this process may hold at once (LUMEN_ATTACHMENT_MEMORY): one
 * budget per configuration, which is one per process (intake over HTTP and partner
 * polling share it), of which one city may hold LUMEN_TENANT_BUDGET_SHARE percent, so
 * its slow hosts never hold every other city's photos back.
 */
export function attachmentMemory(config: Config): SharedBudget {
  let budget = budgets.get(config);
  if (!budget) {
    budget = new SharedBudget(new Budget(config.attachmentMemoryBytes), config.tenantBudgetShare);
    budgets.set(config, budget);
  }
  return budget;
}
