import { statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { LumenServer } from '../harness/lumen.js';
import { check, series, type Line } from '../harness/results.js';
import { median } from '../harness/stats.js';
import type { RowDefinition } from '../harness/context.js';

/** Decimal megabytes, as the target is written. */
const MB = 1_000_000;

/**
 * The executable itself: its size, start to the first 200 of /readyz on a migrated
 * database (and, once, on an empty one, migrations included), and its resident
 * memory after idling. Runs first, while the bench database is still empty.
 */
export const executableRow: RowDefinition = {
  id: 'executable',
  title: 'Executable: start to /readyz, idle RSS, size',
  async run(ctx) {
    await ctx.stopLumen();
    const { sizes } = ctx;
    const size = statSync(ctx.setup.executable).size;

    ctx.log('first start on the empty database (applies every migration)');
    const first = await LumenServer.start(ctx.setup);
    const firstStartMs = first.readyMs;
    await first.stop();

    const starts: number[] = [];
    const rss: number[] = [];
    for (let i = 0; i < sizes.starts; i++) {
      const server = await LumenServer.start(ctx.setup);
      starts.push(server.readyMs);
      await sleep(sizes.idleSeconds * 1000);
      rss.push(server.rssBytes() / MB);
      await server.stop();
    }
    const start = series('ms', starts, median);
    const idle = series('MB', rss, median);
    const lines: Line[] = [
      {
        label: 'start to /readyz (migrated database)',
        lumen: start,
        detail: `first start on an empty database, migrations included: ${Math.round(firstStartMs)} ms`,
        checks: [check('≤ 1 s', start.median <= 1000)],
      },
      {
        label: `idle RSS (after ${sizes.idleSeconds} s idle)`,
        lumen: idle,
        checks: [check('≤ 150 MB', idle.median <= 150)],
      },
      {
        label: 'size of dist/lumen',
        lumen: series('MB', [size / MB], median),
        checks: [check('reported', true)],
      },
    ];
    return {
      lines,
      notes: [],
      params: { starts: sizes.starts, idleSeconds: sizes.idleSeconds, sizeBytes: size },
    };
  },
};
