import pkg from '../package.json' with { type: 'json' };

export const VERSION: string = pkg.version;

/** `lumen 0.1.0 (node v24.x.y)`: Lumen's version and the runtime it runs on. */
export function versionLine(): string {
  return `lumen ${VERSION} (node ${process.version})`;
}
