/** The audit entries of one alert or order, newest first: who did what, before → after. */
import { useEffect } from 'preact/hooks';
import { useApi } from '../api.js';
import { useI18n } from '../i18n.js';
import { LoadError, Loading } from '../ui.js';
import { Change } from './audit.js';

export function Timeline({ entityType, entityId, tenantId, version }: { entityType: 'alert' | 'service_order'; entityId: string; tenantId: string; version: string }) {
  const { t, dateTime } = useI18n();
  const entries = useApi('listAuditEntries', { query: { tenantId, entityType, entityId, limit: 200 } });
  // `version` is the entity's updatedAt: a change made on the page shows up at once.
  useEffect(() => void entries.mutate(), [version]);
  if (entries.error) return <LoadError error={entries.error} />;
  if (!entries.data) return <Loading />;
  const items = [...entries.data.items].reverse();
  if (items.length === 0) return <p class="muted">{t('alert.timeline.empty')}</p>;
  return (
    <ol class="timeline" data-testid="timeline">
      {items.map((e) => (
        <li key={e.id}>
          <div class="timeline-head">
            <strong>{e.action}</strong> <span class="muted">{dateTime(e.at)}</span>
          </div>
          <div class="muted small">{e.actor}</div>
          {e.note ? <div class="note">{e.note}</div> : null}
          <Change before={e.before} after={e.after} />
        </li>
      ))}
    </ol>
  );
}
