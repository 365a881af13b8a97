/** The audit log of the current city: who, what, when, and what changed (before → after). */
import { useState } from 'preact/hooks';
import { useApi, type types } from '../api.js';
import { useI18n } from '../i18n.js';
import { Link } from '../router.js';
import { useSession } from '../session.js';
import { LoadError, Loading, Page, Table } from '../ui.js';

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
                {x}
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

function entityLink(e: types.AuditEntry) {
  if (e.entityType === 'alert') return <Link to={`/alerts/${e.entityId}`}>{e.entityType}</Link>;
  if (e.entityType === 'service_order') return <Link to={`/orders/${e.entityId}`}>{e.entityType}</Link>;
  return <span>{e.entityType}</span>;
}

function AuditTable({ items }: { items: types.AuditEntry[] }) {
  const { t, dateTime } = useI18n();
  return (
    <Table testid="audit" headers={[t('col.when'), t('col.who'), t('col.what'), t('col.change')]}>
          {items.map((e) => (
            <tr key={e.id}>
              <td class="nowrap">{dateTime(e.at)}</td>
              <td>{e.actor}</td>
              <td>
                <strong>{e.action}</strong> {entityLink(e)}
                {e.note ? <div class="note">{e.note}</div> : null}
              </td>
              <td>
                <Change before={e.before} after={e.after} />
              </td>
            </tr>
      ))}
    </Table>
  );
}

function show(v: unknown): string {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'string') return v;
  // A list of records (an order's alerts) reads better as what each one became.
  if (Array.isArray(v) && v.every((x) => x && typeof x === 'object')) {
    return v.map((x: Record<string, unknown>) => Object.entries(x).filter(([k]) => k !== 'id').map(([, y]) => String(y)).join(' ') || '·').join(', ');
  }
  return JSON.stringify(v);
}

/** The fields that differ between before and after, one line each. */
export function Change({ before, after }: { before: unknown; after: unknown }) {
  const b = before && typeof before === 'object' ? (before as Record<string, unknown>) : {};
  const a = after && typeof after === 'object' ? (after as Record<string, unknown>) : {};
  const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])].filter((k) => JSON.stringify(b[k]) !== JSON.stringify(a[k]));
  if (keys.length === 0) return null;
  return (
    <ul class="changes">
      {keys.map((k) => (
        <li key={k}>
          <code>{k}</code>: <span class="before">{show(b[k])}</span> → <span class="after">{show(a[k])}</span>
        </li>
      ))}
    </ul>
  );
}
