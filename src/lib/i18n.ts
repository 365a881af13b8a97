/** Languages Lumen answers in (N10). pt-BR is the default. */
export type Language = 'pt-BR' | 'en';
export const DEFAULT_LANGUAGE: Language = 'pt-BR';

/**
 * Picks pt-BR or en from an Accept-Language header, honouring q-values.
 * Anything unknown, malformed or absent falls back to pt-BR.
 */
export function negotiateLanguage(header: string | string[] | undefined): Language {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (!value) return DEFAULT_LANGUAGE;
  let best: { lang: Language; q: number } | null = null;
  for (const part of value.split(',')) {
    const [tagRaw, ...params] = part.trim().split(';');
    const tag = (tagRaw ?? '').trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    if (!Number.isFinite(q) || q <= 0) continue;
    let lang: Language | null = null;
    if (tag === 'pt' || tag.startsWith('pt-')) lang = 'pt-BR';
    else if (tag === 'en' || tag.startsWith('en-')) lang = 'en';
    else if (tag === '*') lang = DEFAULT_LANGUAGE;
    if (lang && (!best || q > best.q)) best = { lang, q };
  }
  return best?.lang ?? DEFAULT_LANGUAGE;
}

export type Localized = Readonly<Record<Language, string>>;

/** Fills {name} placeholders. */
export function format(template: string, params: Record<string, unknown> = {}): string {
  return template.replace(/\{(\w+)\}/g, (_, key: string) => (key in params ? String(params[key]) : `{${key}}`));
}
