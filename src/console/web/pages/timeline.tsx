/**
 * An alert's or an order's timeline from the API (status changes, audit entries,
 * events sent and their deliveries, merged), newest first.
 */
import { useApi, useRefreshOn, type types } from '../api.js';
import { useI18n } from '../i18n.js';
import { Badge, LoadError, Loading } from '../ui.js';
import { actorWords, fieldWords, noteWords, timelineWords, valueWords } from '../words.js';

export function Timeline({ of, id, version }: { of: 'alert' | 'order'; id: string; version: string }) {
  const alertTimeline = useApi('getAlertTimeline', of === 'alert' ? { path: { alertId: id } } : null);
  const orderTimeline = useApi('getServiceOrderTimeline', of === 'order' ? { path: { serviceOrderId: id } } : null);
  const timeline = of === 'alert' ? alertTimeline : orderTimeline;
  // `version` is the entity's updatedAt: a change made on the page shows up at once.
  useRefreshOn(version, timeline);
  if (timeline.error) return <LoadError error={timeline.error} />;
  if (!timeline.data) return <Loading />;
  return <TimelineList items={timeline.data.items} ofOrder={of === 'order'} />;
}

const KIND: Record<types.TimelineEntry['kind'], string> = { status: 'count', audit: 'neutral', event: 'ok', delivery: 'warn' };

function TimelineList({ items, ofOrder }: { items: types.TimelineEntry[]; ofOrder: boolean }) {
  const { t, dateTime } = useI18n();
  const newestFirst = [...items].sort((a, b) => b.at.localeCompare(a.at));
  if (newestFirst.length === 0) return <p class="muted">{t('alert.timeline.empty')}</p>;
  return (
    <ol class="timeline" data-testid="timeline">
      {newestFirst.map((e, i) => (
        <li key={i}>
          <div class="timeline-head">
            <Badge kind={KIND[e.kind]}>{t(`timeline.kind.${e.kind}`)}</Badge> <strong>{timelineWords(t, e, ofOrder)}</strong>
          </div>
          <div class="muted small">
            {dateTime(e.at)} · {actorWords(t, e.actor)}
          </div>
          {e.note && e.kind === 'status' ? <div class="note">{noteWords(t, e.note)}</div> : null}
          {e.kind === 'audit' && e.title === 'alert.partner-update' ? <Changes data={e.data} /> : null}
        </li>
      ))}
    </ol>
  );
}

/** A partner's resend: each changed field, before → after. */
function Changes({ data }: { data: unknown }) {
  const { t, dateTime } = useI18n();
  const { before, after } = (data ?? {}) as { before?: Record<string, unknown> | null; after?: Record<string, unknown> | null };
  const fields = Object.keys(after ?? {});
  if (fields.length === 0) return null;
  return (
    <dl class="changes" data-testid="changes">
      {fields.map((f) => (
        <div key={f}>
          <dt>{fieldWords(t, f)}</dt>
          <dd>
            <del class="before">{valueWords(t, dateTime, f, before?.[f])}</del> → <ins class="after">{valueWords(t, dateTime, f, after?.[f])}</ins>
          </dd>
        </div>
      ))}
    </dl>
  );
}
