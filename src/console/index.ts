/**
 * The operators' console: a Preact app (web/) that is a client of the admin API only.
 * This door is the server's side of it: the built files, from the executable's asset
 * when running as dist/lumen, else bundled on the fly from the sources (development,
 * `npm start`, in-process tests) once per process.
 */
import { isSingleExecutable, readAsset, repoRoot } from '../lib/assets.js';
import { bundleConsole } from './bundle.js';
import { CONSOLE_ASSET, unpackConsole, type ConsoleFiles } from './files.js';

export { CONSOLE_ASSET, packConsole, type ConsoleFile, type ConsoleFiles } from './files.js';
export { bundleConsole, ASSET_PREFIX } from './bundle.js';

let loading: Promise<ConsoleFiles> | null = null;

export function consoleFiles(): Promise<ConsoleFiles> {
  loading ??= load().catch((err: unknown) => {
    loading = null; // a failed development build is tried again on the next request
    throw err;
  });
  return loading;
}

async function load(): Promise<ConsoleFiles> {
  if (isSingleExecutable()) return unpackConsole(readAsset(CONSOLE_ASSET));
  return bundleConsole(repoRoot());
}
