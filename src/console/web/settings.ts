/** What the server told the page in its `lumen-console` meta element (no inline script). */
export interface ConsoleSettings {
  /** XYZ tile template; null: no basemap, markers on a plain background. */
  tileUrl: string | null;
  tileAttribution: string;
  /** The "navigate" link's URL template, with {lat} and {lon} (LUMEN_MAPS_URL_TEMPLATE). */
  mapsUrl: string;
}

const DEFAULT_MAPS_URL = 'https://www.openstreetmap.org/directions?to={lat},{lon}';

export function readSettings(): ConsoleSettings {
  const raw = document.querySelector('meta[name="lumen-console"]')?.getAttribute('content') ?? '{}';
  try {
    const parsed = JSON.parse(raw) as Partial<ConsoleSettings>;
    return {
      tileUrl: typeof parsed.tileUrl === 'string' ? parsed.tileUrl : null,
      tileAttribution: typeof parsed.tileAttribution === 'string' ? parsed.tileAttribution : '',
      mapsUrl: typeof parsed.mapsUrl === 'string' ? parsed.mapsUrl : DEFAULT_MAPS_URL,
    };
  } catch {
    return { tileUrl: null, tileAttribution: '', mapsUrl: DEFAULT_MAPS_URL };
  }
}

export const SETTINGS = readSettings();
