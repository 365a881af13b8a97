/** Field crews' building blocks: the planned visit in words, "navigate" and tel: links, distances. */
import type { types } from './api.js';
import { useI18n, type Language } from './i18n.js';
import { SETTINGS } from './settings.js';

/** A planned visit in the operator's words ("qui., 27/11, das 08:00 às 11:00"), flagged when overdue. */
export function PlannedVisitText({ visit, testid, labelled }: { visit: types.PlannedVisit; testid?: string; labelled?: boolean }) {
  const { t, lang } = useI18n();
  return (
    <div class={visit.overdue ? 'visit overdue' : 'visit'} data-testid={testid}>
      {labelled ? <span class="muted">{t('crew.visit')}: </span> : null}
      <span>{visitWindow(t, lang, visit)}</span>
      {visit.overdue ? (
        <p class="visit-overdue" role="status" data-testid={testid ? `${testid}-overdue` : undefined}>
          {t('crew.visit.overdue')}
        </p>
      ) : null}
    </div>
  );
}

export function visitWindow(t: ReturnType<typeof useI18n>['t'], lang: Language, v: { startsAt: string; endsAt: string }): string {
  const start = new Date(v.startsAt);
  const end = new Date(v.endsAt);
  const day = new Intl.DateTimeFormat(lang, { weekday: 'short', day: '2-digit', month: '2-digit' });
  const time = new Intl.DateTimeFormat(lang, { hour: '2-digit', minute: '2-digit' });
  if (day.format(start) === day.format(end)) return t('crew.visit.window', { day: day.format(start), from: time.format(start), to: time.format(end) });
  const both = new Intl.DateTimeFormat(lang, { dateStyle: 'short', timeStyle: 'short' });
  return t('crew.visit.span', { from: both.format(start), to: both.format(end) });
}

/** The maps app of the phone (geo:) and the configured route planner (LUMEN_MAPS_URL_TEMPLATE). */
export function NavigateLinks({ lat, lon }: { lat: number; lon: number }) {
  const { t } = useI18n();
  const url = SETTINGS.mapsUrl.replaceAll('{lat}', String(lat)).replaceAll('{lon}', String(lon));
  return (
    <>
      <a class="button" href={`geo:${lat},${lon}`} data-testid="navigate-geo">
        {t('crew.navigateApp')}
      </a>
      <a class="button" href={url} target="_blank" rel="noopener noreferrer" data-testid="navigate-web">
        {t('crew.navigate')}
      </a>
    </>
  );
}

/** A phone number as a link the phone dials (digits and a leading + kept; the text as written). */
export function TelLink({ phone }: { phone: string | null | undefined }) {
  const { t } = useI18n();
  if (!phone || !phone.trim()) return null;
  const dial = phone.trim().replace(/(?!^\+)[^\d]/g, '');
  if (dial.replace('+', '').length < 3) return <span>{phone}</span>;
  return (
    <a href={`tel:${dial}`} aria-label={t('crew.call', { phone })} data-testid="tel">
      {phone}
    </a>
  );
}

/** Great-circle distance in metres. */
export function distanceMetres(a: { lat: number; lon: number }, b: { lat: number; lon: number }): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLon = (b.lon - a.lon) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6_371_000 * Math.asin(Math.min(1, Math.sqrt(h)));
}
