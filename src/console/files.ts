/**
 * The built console: its files by name (under /console/assets/), and which of them
 * the page loads. Packed into one asset of the executable as JSON with base64 bodies.
 */
export interface ConsoleFile {
  readonly body: Buffer;
  readonly type: string;
}

export interface ConsoleFiles {
  readonly files: ReadonlyMap<string, ConsoleFile>;
  /** The module the page loads. */
  readonly script: string;
  readonly style: string;
  readonly icon: string;
  /** The service worker's script, served as /console/sw.js (its scope is the console). */
  readonly worker: string;
  /** The web app manifest's PNG icons by base name (`icon-192`), as file names. */
  readonly appIcons: Readonly<Record<string, string>>;
}

/** Name of the asset inside the executable (scripts/build.ts writes it). */
export const CONSOLE_ASSET = 'console.json';

interface Packed {
  script: string;
  style: string;
  icon: string;
  worker: string;
  appIcons: Record<string, string>;
  files: Record<string, { type: string; base64: string }>;
}

export function packConsole(built: ConsoleFiles): Buffer {
  const files: Packed['files'] = {};
  for (const [name, file] of [...built.files].sort(([a], [b]) => a.localeCompare(b))) files[name] = { type: file.type, base64: file.body.toString('base64') };
  const packed: Packed = { script: built.script, style: built.style, icon: built.icon, worker: built.worker, appIcons: { ...built.appIcons }, files };
  return Buffer.from(JSON.stringify(packed));
}

export function unpackConsole(bytes: Buffer): ConsoleFiles {
  const packed = JSON.parse(bytes.toString('utf8')) as Packed;
  const files = new Map<string, ConsoleFile>(Object.entries(packed.files).map(([name, f]) => [name, { type: f.type, body: Buffer.from(f.base64, 'base64') }]));
  return { files, script: packed.script, style: packed.style, icon: packed.icon, worker: packed.worker, appIcons: packed.appIcons };
}
