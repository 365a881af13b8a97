import { gzipSync } from 'node:zlib';
import { HttpClient } from '../harness/http.js';
import { check, series } from '../harness/results.js';
import { getOk } from '../harness/timing.js';
import type { RowDefinition } from '../harness/context.js';

/**
 * The console's JavaScript as the executable ships it: the scripts /console's page
 * loads, read from the running server and gzipped (level 9), in KB (1000 bytes).
 * A size, not a time: no anchor.
 */
export const consoleBundleRow: RowDefinition = {
  id: 'console-bundle',
  title: 'Console JavaScript shipped',
  async run(ctx) {
    const server = await ctx.lumen();
    const client = new HttpClient(server.baseUrl);
    try {
      const html = (await getOk(client, '/console/')).body.toString('utf8');
      const scripts = [...html.matchAll(/<script[^>]*\bsrc="([^"]+\.js)"/g)].map((m) => m[1]!);
      if (scripts.length === 0) throw new Error('/console/ loads no script');
      let raw = 0;
      let gz = 0;
      for (const src of scripts) {
        const body = (await getOk(client, new URL(src, `${server.baseUrl}/console/`).pathname)).body;
        raw += body.length;
        gz += gzipSync(body, { level: 9 }).length;
      }
      const kb = gz / 1000;
      return {
        lines: [
          {
            label: `JavaScript of /console (${scripts.length} file${scripts.length === 1 ? '' : 's'}), gzip`,
            lumen: series('KB', [kb], (v) => v[0]!),
            detail: `${(raw / 1000).toFixed(1)} KB before gzip`,
            checks: [check('≤ 300 KB gzip', kb <= 300)],
          },
        ],
        notes: ['Measured from the executable as served, so it is what a browser downloads on first load (before its own gzip negotiation).'],
        params: { scripts: scripts.join(' '), rawBytes: raw, gzipBytes: gz },
      };
    } finally {
      client.close();
    }
  },
};
