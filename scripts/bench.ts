/**
 * `npm run bench`: the performance suite (see BENCHMARKS.md and bench/).
 * Measures the built executable dist/lumen against a real PostgreSQL, each figure
 * beside an anchor measured in the same run; `--quick` is the CI smoke mode.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseOptions, USAGE, UsageError } from '../bench/harness/options.js';
import { renderFromResults, runBench, SetupError } from '../bench/harness/runner.js';
import { ROWS } from '../bench/rows/index.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

async function main(): Promise<number> {
  let opts;
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`bench: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    throw err;
  }
  if (opts.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (opts.renderOnly) {
    renderFromResults(repo);
    process.stderr.write('bench: rendered BENCHMARKS.md from bench/results.json\n');
    return 0;
  }
  return runBench(repo, opts, ROWS, { stdout: process.stdout, stderr: process.stderr, env: process.env });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof SetupError) process.stderr.write(`bench: ${err.message}\n`);
    else process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
