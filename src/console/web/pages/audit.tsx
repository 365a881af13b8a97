/** The audit log of the current city: who, what, when, and what changed (before → after). */
import { useState } from 'preact/hooks';
import { useApi, type types } from '../api.js';
import { useI18n } from '../i18n.js';
import { Link } from '../router.js';
import { useSession } from '../session.js';
import { LoadError, Loading, Page, Table } from '../ui.js';
import { actionWords, actorWords, entityWords, fieldWords, valueWords } from '../words.js';

const ENTITY_TYPES = ['alert', 'service_order', 'partner', 'team', 'tenant', 'admin_token'] as const;

export function AuditPage() {
  const { t } = useI18n();
  const { tenantId } = useSession();
  const [entityType, setEntityType] = useState<(typeof ENTITY_TYPES)[number] | ''>('');
  const entries = useApi('listAuditEntries', { query: { tenantId, limit: 500, ...(entityType ? { entityType } : {}) } });
  return (
    <Page title={t('audit.title')}>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          <span>{t('audit.entity')}</span>
          <select value={entityType} onChange={(e) => setEntityType((e.target as HTMLSelectElement).value as typeof entityType)}>
            <option value="">{t('inbox.filter.all')}</option>
            {ENTITY_TYPES.map((x) => (
              <option key={x} value={x}>
                {entityWords(t, x)}
              </option>
            ))}
          </select>
        </label>
      </form>
      {entries.error ? <LoadError error={entries.error} /> : null}
      {!entries.data && !entries.error ? <Loading /> : null}
      {entries.data && entries.data.items.length === 0 ? <p class="empty">{t('audit.empty')}</p> : null}
      {entries.data && entries.data.items.length > 0 ? <AuditTable items={[...entries.data.items].reverse()} /> : null}
    </Page>
  );
}

function EntityLink({ e }: { e: types.AuditEntry }) {
  const { t } = useI18n();
  const words = entityWords(t, e.entityType);
  if (e.entityType === 'alert') return <Link to={`/alerts/${e.entityId}`}>{words}</Link>;
  if (e.entityType === 'service_order') return <Link to={`/orders/${e.entityId}`}>{words}</Link>;
  return <span>{words}</span>;
}

function AuditTable({ items }: { items: types.AuditEntry[] }) {
  const { t, dateTime } = useI18n();
  return (
    <Table testid="audit" headers={[t('col.when'), t('col.who'), t('col.what'), t('col.change')]}>
          {items.map((e) => (
            <tr key={e.id}>
              <td class="nowrap">{dateTime(e.at)}</td>
              <td>{actorWords(t, e.actor)}</td>
              <td>
                <strong>{actionWords(t, e.action)}</strong> · <EntityLink e={e} />
              </td>
              <td>
                <Change before={e.before} after={e.after} />
              </td>
            </tr>
      ))}
    </Table>
  );
}

/** The fields that differ between before and after, one line each. */
export function Change({ before, after }: { before: unknown; after: unknown }) {
  const { t, dateTime } = useI18n();
  const b = before && typeof before === 'object' ? (before as Record<string, unknown>) : {};
  const a = after && typeof after === 'object' ? (after as Record<string, unknown>) : {};
  const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])].filter((k) => JSON.stringify(b[k]) !== JSON.stringify(a[k]));
  if (keys.length === 0) return null;
  return (
    <ul class="changes">
      {keys.map((k) => (
        <li key={k}>
          {fieldWords(t, k)}: <span class="before">{valueWords(t, dateTime, k, b[k])}</span> → <span class="after">{valueWords(t, dateTime, k, a[k])}</span>
        </li>
      ))}
    </ul>
  );
}
