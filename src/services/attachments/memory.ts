import type { Config } from '../../config.js';
import { Budget } from '../../lib/budget.js';

const budgets = new WeakMap<Config, Budget>();

/**
 * The attachment bytes this process may hold at once (LUMEN_ATTACHMENT_MEMORY): one
 * budget per configuration, which is one per process (intake over HTTP and partner
 * polling share it).
 */
export function attachmentMemory(config: Config): Budget {
  let budget = budgets.get(config);
  if (!budget) {
    budget = new Budget(config.attachmentMemoryBytes);
    budgets.set(config, budget);
  }
  return budget;
}
