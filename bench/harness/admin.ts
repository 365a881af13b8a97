import type { BenchContext } from './context.js';
import { lumenJson } from './lumen.js';

/** A platform-wide admin token through the CLI (once per run): the console's reach, every tenant. */
export function adminToken(ctx: BenchContext): Promise<string> {
  return ctx.once('admin-token', async () => (await lumenJson<{ token: string }>(ctx.setup, ['admin-token', 'create', '--name', 'bench-console'])).token);
}
