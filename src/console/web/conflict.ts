/**
 * A 409 on an alert or an order: someone else changed it first. The page reads the
 * object again and says in words what happened, who did it and how long ago (the
 * newest change in the object's timeline), instead of the API's state code.
 */
import { ApiError, call, type types } from './api.js';
import type { MessageKey, Translate } from './i18n.js';
import { actorWords, statusWords } from './words.js';

/** The newest change a person or the partner made (status or audit), not an event sent. */
function newestChange(items: types.TimelineEntry[]): types.TimelineEntry | undefined {
  return items.filter((e) => e.kind === 'status' || e.kind === 'audit').sort((a, b) => b.at.localeCompare(a.at))[0];
}

/** "há 1 min", "há 3 h"; "agora há pouco" under a minute. */
export function agoWords(t: Translate, iso: string, now = Date.now()): string {
  const m = Math.round((now - Date.parse(iso)) / 60_000);
  if (m < 1) return t('conflict.justNow');
  const span = m < 90 ? t('time.minutes', { n: m }) : m < 48 * 60 ? t('time.hours', { n: Math.round(m / 60) }) : t('time.days', { n: Math.round(m / 1440) });
  return t('conflict.ago', { span });
}

function who(t: Translate, items: types.TimelineEntry[]): { actor: string; ago: string } {
  const last = newestChange(items);
  return last ? { actor: actorWords(t, last.actor), ago: agoWords(t, last.at) } : { actor: t('conflict.someone'), ago: t('conflict.justNow') };
}

/**
 * The alert as it is now and what happened to it, in words; null when it did not change
 * since the page read it (the 409 was about something else, such as a closed order to
 * link to, and its own problem says so).
 */
export async function alertConflict(t: Translate, alertId: string, seen: string): Promise<{ alert: types.Alert; error: ApiError } | null> {
  const [alert, timeline] = await Promise.all([call('getAlert', { path: { alertId } }), call('getAlertTimeline', { path: { alertId } })]);
  if (alert.updatedAt === seen) return null;
  const { actor, ago } = who(t, timeline.items);
  const key = (['Linked', 'Cancelled', 'Resolved'].includes(alert.status) ? `conflict.alert.${alert.status}` : 'conflict.alert.other') as MessageKey;
  const detail = t(key, { number: alert.serviceOrder?.number ?? '', actor, ago });
  return { alert, error: new ApiError(409, t('conflict.title'), detail, 'conflict') };
}

/** The order as it is now and what happened to it, in words; null when it did not change since the page read it. */
export async function orderConflict(t: Translate, serviceOrderId: string, seen: string): Promise<{ order: types.AdminServiceOrder; error: ApiError } | null> {
  const [order, timeline] = await Promise.all([call('getServiceOrder', { path: { serviceOrderId } }), call('getServiceOrderTimeline', { path: { serviceOrderId } })]);
  if (order.updatedAt === seen) return null;
  const { actor, ago } = who(t, timeline.items);
  const key = (['COMPLETED', 'CANCELLED'].includes(order.status) ? `conflict.order.${order.status}` : 'conflict.order.other') as MessageKey;
  const detail = t(key, { actor, ago, status: statusWords(t as never, order.status).toLowerCase() });
  return { order, error: new ApiError(409, t('conflict.title'), detail, 'conflict') };
}

/** Whether a failed change is "someone changed it first" (409), not a wrong request. */
export const isConflict = (err: unknown): err is ApiError => err instanceof ApiError && err.status === 409 && err.code !== 'ambiguous' && err.code !== 'location-unconfirmed';
