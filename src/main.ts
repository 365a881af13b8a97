import { runCli } from './cli/program.js';

// The single entry point: `lumen <command>` (the executable) or `tsx src/main.ts <command>`.
runCli(process.argv.slice(2), { env: process.env, stdout: process.stdout, stderr: process.stderr }).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`lumen: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
