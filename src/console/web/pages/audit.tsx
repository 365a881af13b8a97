/** The audit log of the current city: who, what, when, and what changed (before → after). */
import { useState } from 'preact/hooks';
import { call, useApi, type types } from '../api.js';
import { cityHint } from '../refs.js';
import { useI18n } from '../i18n.js';
import { Link } from '../router.js';
import { useSession } from '../session.js';
import { LoadError, Loading, Page, Table } from '../ui.js';
import { actionWords, actorWords, entityWords, fieldWords, QUIET_FIELDS, startsWithWord, valueWords } from '../words.js';

const ENTITY_TYPES = ['alert', 'service_order', 'partner', 'team', 'tenant', 'admin_token', 'operator'] as const;

/** A date input (YYYY-MM-DD) as the start of that day in the browser's zone, ISO. */
function dayStart(day: string): string | undefined {
  return day ? new Date(`${day}T00:00:00`).toISOString() : undefined;
}

export function AuditPage() {
  const { t, lang } = useI18n();
  const { tenantId } = useSession();
  const [entityType, setEntityType] = useState<(typeof ENTITY_TYPES)[number] | ''>('');
  const [who, setWho] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [number, setNumber] = useState('');
  const [subject, setSubject] = useState<{ entityType: 'alert' | 'service_order'; entityId: string } | null>(null);
  const [notFound, setNotFound] = useState(false);
  // `to` is a day: entries of that whole day are in.
  const until = to ? new Date(new Date(`${to}T00:00:00`).getTime() + 86_400_000).toISOString() : undefined;
  const since = dayStart(from);
  const query = {
    tenantId,
    limit: 500,
    ...(subject ? subject : entityType ? { entityType } : {}),
    ...(who.trim() ? { actor: who.trim() } : {}),
    ...(since ? { since } : {}),
    ...(until ? { until } : {}),
  };
  const entries = useApi('listAuditEntries', { query });
  const teams = useApi('listTeams', { query: { tenantId } });
  const teamNames = new Map((teams.data?.items ?? []).map((x) => [x.id, x.name]));
  const reasons = useApi('listReasons', { path: { tenantId } });
  const reasonNames = new Map((reasons.data?.items ?? []).map((r) => [r.code, `${lang === 'en' ? r.nameEn : r.namePt} (${r.code})`]));
  // The entries wait for the names of their teams and reasons: a table drawn before them would
  // show an id or a code first. A read of names that failed leaves those values as they are.
  const namesSettled = (teams.data !== undefined || teams.error !== undefined) && (reasons.data !== undefined || reasons.error !== undefined);
  const find = async (ref: string) => {
    setNotFound(false);
    const r = ref.trim().replace(/^#/, '');
    if (!r) return setSubject(null);
    try {
      if (/^OS-/i.test(r)) setSubject({ entityType: 'service_order', entityId: (await call('getServiceOrder', { path: { serviceOrderId: r }, query: cityHint(r, tenantId) })).id });
      else setSubject({ entityType: 'alert', entityId: (await call('getAlert', { path: { alertId: r }, query: cityHint(r, tenantId) })).id });
    } catch {
      setSubject(null);
      setNotFound(true);
    }
  };
  const exportUrl = `/api/admin/tenants/${tenantId}/exports/audit?${new URLSearchParams({ ...(since ? { from: since } : {}), ...(until ? { to: until } : {}) }).toString()}`;
  return (
    <Page
      title={t('audit.title')}
      actions={
        <a class="button secondary" href={exportUrl} download data-testid="audit-export">
          {t('audit.export')}
        </a>
      }
    >
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          void find(number);
        }}
      >
        <label>
          <span>{t('audit.entity')}</span>
          <select value={entityType} disabled={subject !== null} onChange={(e) => setEntityType((e.target as HTMLSelectElement).value as typeof entityType)} data-testid="audit-type">
            <option value="">{t('inbox.filter.all')}</option>
            {ENTITY_TYPES.map((x) => (
              <option key={x} value={x}>
                {entityWords(t, x)}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>{t('audit.who')}</span>
          <input type="search" value={who} maxLength={200} onInput={(e) => setWho((e.target as HTMLInputElement).value)} data-testid="audit-who" />
        </label>
        <label>
          <span>{t('audit.from')}</span>
          <input type="date" value={from} max={to || undefined} onChange={(e) => setFrom((e.target as HTMLInputElement).value)} data-testid="audit-from" />
        </label>
        <label>
          <span>{t('audit.to')}</span>
          <input type="date" value={to} min={from || undefined} onChange={(e) => setTo((e.target as HTMLInputElement).value)} data-testid="audit-to" />
        </label>
        <label>
          <span>{t('audit.number')}</span>
          <input type="search" value={number} maxLength={64} onInput={(e) => setNumber((e.target as HTMLInputElement).value)} onBlur={() => void find(number)}
            onKeyDown={(e) => {
              // The form has no submit button, so Enter does not submit it: look the number up here.
              if (e.key === 'Enter') {
                e.preventDefault();
                void find(number);
              }
            }}
            data-testid="audit-number"
          />
        </label>
      </form>
      {notFound ? (
        <p class="warn-text" data-testid="audit-number-unknown">
          {t('audit.numberUnknown', { number })}
        </p>
      ) : null}
      {entries.error ? <LoadError error={entries.error} /> : null}
      {(!entries.data && !entries.error) || (entries.data && entries.data.items.length > 0 && !namesSettled) ? <Loading /> : null}
      {entries.data && entries.data.items.length === 0 ? <p class="empty">{t('audit.empty')}</p> : null}
      {entries.data && entries.data.items.length > 0 && namesSettled ? <AuditTable items={[...entries.data.items].reverse()} teamNames={teamNames} reasonNames={reasonNames} /> : null}
    </Page>
  );
}

function EntityLink({ e }: { e: types.AuditEntry }) {
  const { t } = useI18n();
  const kind = entityWords(t, e.entityType);
  // A name that already says what it is ('Equipe Noturna', a team) is not prefixed again.
  const words = e.entityLabel ? (startsWithWord(e.entityLabel, kind) ? e.entityLabel : `${kind} ${e.entityLabel}`) : kind;
  if (e.entityType === 'alert') return <Link to={`/alerts/${e.entityId}`}>{words}</Link>;
  if (e.entityType === 'service_order') return <Link to={`/orders/${e.entityId}`}>{words}</Link>;
  return <span>{words}</span>;
}

function AuditTable({ items, teamNames, reasonNames }: { items: types.AuditEntry[]; teamNames: ReadonlyMap<string, string>; reasonNames: ReadonlyMap<string, string> }) {
  const { t, dateTime } = useI18n();
  return (
    <Table testid="audit" headers={[t('col.when'), t('col.who'), t('col.what'), t('col.change')]}>
          {items.map((e) => (
            <tr key={e.id}>
              <td class="nowrap">{dateTime(e.at)}</td>
              <td>{actorWords(t, e.actor)}</td>
              <td>
                {/* One element: on a phone the cell is a grid of label and content, and loose parts would fall into the label's column. */}
                <span>
                  <strong>{actionWords(t, e.action)}</strong> · <EntityLink e={e} />
                </span>
              </td>
              <td>
                <Change before={e.before} after={e.after} teamNames={teamNames} reasonNames={reasonNames} />
              </td>
            </tr>
      ))}
    </Table>
  );
}

/** The fields that differ between before and after, one line each. */
export function Change({ before, after, teamNames, reasonNames }: { before: unknown; after: unknown; teamNames?: ReadonlyMap<string, string>; reasonNames?: ReadonlyMap<string, string> }) {
  const { t, dateTime } = useI18n();
  const b = before && typeof before === 'object' ? (before as Record<string, unknown>) : {};
  const a = after && typeof after === 'object' ? (after as Record<string, unknown>) : {};
  // Absent, null and '' all read "none": a field empty on both sides did not change.
  const empty = (v: unknown) => v === undefined || v === null || v === '';
  // Teams and reasons by their names (a reason with its code), as the other pages show them.
  const shown = (k: string, v: unknown) =>
    k === 'teamId' && teamNames?.has(String(v)) ? teamNames.get(String(v)) : k === 'reasonCode' && reasonNames?.has(String(v)) ? reasonNames.get(String(v)) : valueWords(t, dateTime, k, v);
  const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])]
    .filter((k) => JSON.stringify(b[k]) !== JSON.stringify(a[k]) && !(empty(b[k]) && empty(a[k])))
    .filter((k) => !QUIET_FIELDS.has(k))
    // The order's number says which order; its id adds nothing.
    .filter((k) => !(k === 'serviceOrderId' && ('serviceOrderNumber' in a || 'serviceOrder' in a)));
  if (keys.length === 0) return null;
  return (
    <ul class="changes">
      {keys.map((k) => (
        <li key={k}>
          {fieldWords(t, k)}: <span class="before">{shown(k, b[k])}</span> → <span class="after">{shown(k, a[k])}</span>
        </li>
      ))}
    </ul>
  );
}
