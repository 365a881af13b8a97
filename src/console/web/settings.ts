/** What the server told the page in its `lumen-console` meta element (no inline script). */
export interface ConsoleSettings {
  /** XYZ tile template; null: no basemap, markers on a plain background. */
  tileUrl: string | null;
  tileAttribution: string;
}

export function readSettings(): ConsoleSettings {
  const raw = document.querySelector('meta[name="lumen-console"]')?.getAttribute('content') ?? '{}';
  try {
    const parsed = JSON.parse(raw) as Partial<ConsoleSettings>;
    return { tileUrl: typeof parsed.tileUrl === 'string' ? parsed.tileUrl : null, tileAttribution: typeof parsed.tileAttribution === 'string' ? parsed.tileAttribution : '' };
  } catch {
    return { tileUrl: null, tileAttribution: '' };
  }
}

export const SETTINGS = readSettings();
