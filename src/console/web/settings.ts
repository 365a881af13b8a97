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

/**
 * What the alert page does after a triage action (create order, link, discard,
 * reclassify): open the next Pending alert of the inbox's filter (the default, for
 * triage at volume) or return to the inbox. Kept in the browser, like the language.
 */
export type AfterTriage = 'next' | 'inbox';
const AFTER_TRIAGE_KEY = 'lumen.afterTriage';

export function afterTriage(): AfterTriage {
  return localStorage.getItem(AFTER_TRIAGE_KEY) === 'inbox' ? 'inbox' : 'next';
}

export function saveAfterTriage(value: AfterTriage): void {
  localStorage.setItem(AFTER_TRIAGE_KEY, value);
}

/**
 * Where the operator is in the inbox: its query (filters, sort, page), the focused
 * alert and row, and the scroll. The inbox saves it as it changes and restores it when
 * it opens with the same query (Back, or the return after triage); the alert page reads
 * the query for "next"/"previous" and moves the focused alert along. Per tab.
 */
export interface InboxPlace {
  query: string;
  alertId: string | null;
  row: number;
  scrollY: number;
}
const INBOX_KEY = 'lumen.inboxPlace';

export function inboxPlace(): InboxPlace {
  try {
    const raw = JSON.parse(sessionStorage.getItem(INBOX_KEY) ?? 'null') as Partial<InboxPlace> | null;
    if (raw && typeof raw.query === 'string') return { query: raw.query, alertId: typeof raw.alertId === 'string' ? raw.alertId : null, row: Number(raw.row) || 0, scrollY: Number(raw.scrollY) || 0 };
  } catch {
    /* a damaged entry is the same as none */
  }
  return { query: '', alertId: null, row: 0, scrollY: 0 };
}

export function saveInboxPlace(place: Partial<InboxPlace>): void {
  sessionStorage.setItem(INBOX_KEY, JSON.stringify({ ...inboxPlace(), ...place }));
}
