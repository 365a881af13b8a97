/** Small building blocks every page shares. Everything a partner sent is rendered as text. */
import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';
import { ApiError } from './api.js';
import { useI18n, type MessageKey } from './i18n.js';
import { Link } from './router.js';

export function Loading() {
  const { t } = useI18n();
  return (
    <p class="muted" role="status">
      {t('common.loading')}
    </p>
  );
}

/** A failed read: not-found for 404 (a foreign city's id looks the same), else the problem. */
export function LoadError({ error, retry }: { error: ApiError | Error; retry?: () => void }) {
  const { t } = useI18n();
  if (error instanceof ApiError && error.status === 404) {
    return (
      <section class="panel error-panel" data-testid="not-found">
        <h2>{t('common.notFound')}</h2>
        <p>{t('common.notFound.detail')}</p>
      </section>
    );
  }
  return (
    <section class="panel error-panel" role="alert">
      <h2>{error instanceof ApiError ? error.title : t('common.error')}</h2>
      <p>{error instanceof ApiError ? error.detail : error.message}</p>
      {retry ? (
        <button type="button" onClick={retry}>
          {t('common.retry')}
        </button>
      ) : null}
    </section>
  );
}

export function Page({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <div class="page">
      <div class="page-head">
        <h1>{title}</h1>
        {actions ? <div class="page-actions">{actions}</div> : null}
      </div>
      {children}
    </div>
  );
}

export function Field({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="field">
      <dt>{label}</dt>
      <dd>{children ?? '—'}</dd>
    </div>
  );
}

export function Badge({ kind, children }: { kind: string; children: ComponentChildren }) {
  return <span class={`badge badge-${kind}`}>{children}</span>;
}

export function StatusBadge({ status }: { status: string }) {
  const { t } = useI18n();
  const key = `status.${status}` as MessageKey;
  return <Badge kind={status.toLowerCase()}>{t(key)}</Badge>;
}

/** "3 h", "2 d": how long ago (or, negative, how long until). */
export function useDurations() {
  const { t } = useI18n();
  const span = (ms: number) => {
    const m = Math.max(0, Math.round(Math.abs(ms) / 60_000));
    if (m < 90) return t('time.minutes', { n: m });
    const h = Math.round(m / 60);
    if (h < 48) return t('time.hours', { n: h });
    return t('time.days', { n: Math.round(h / 24) });
  };
  return {
    age: (iso: string) => span(Date.now() - Date.parse(iso)),
    until: (iso: string) => span(Date.parse(iso) - Date.now()),
    overdue: (iso: string) => Date.parse(iso) < Date.now(),
  };
}

export function Pager({ page, pageSize, total, onPage }: { page: number; pageSize: number; total: number; onPage: (p: number) => void }) {
  const { t } = useI18n();
  const pages = Math.max(1, Math.ceil(total / pageSize));
  if (pages <= 1) return null;
  return (
    <nav class="pager" aria-label={t('common.page', { page, pages })}>
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        {t('common.previous')}
      </button>
      <span>{t('common.page', { page, pages })}</span>
      <button type="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        {t('common.next')}
      </button>
    </nav>
  );
}

/** A column the list can be ordered by: the header is a button, `sorted` when it is the current order. */
export interface SortableHeader {
  label: string;
  sorted: boolean;
  /** How the API orders by this column (its `aria-sort`). */
  direction: 'ascending' | 'descending' | 'other';
  onSort: () => void;
  testid?: string;
}

/** A table with a header row; the cells come as children (`<tr>` rows). */
export function Table({ headers, testid, children }: { headers: (string | { hidden: string } | SortableHeader)[]; testid?: string; children: ComponentChildren }) {
  const { t } = useI18n();
  const ref = useRef<HTMLTableElement>(null);
  // On a phone each row is a card (styles.css, .table-cards): every cell shows its column's
  // name before it, taken from the header of the same position.
  const labels = headers.map((h) => (typeof h === 'string' ? h : 'onSort' in h ? h.label : ''));
  useLayoutEffect(() => {
    for (const row of Array.from(ref.current?.tBodies[0]?.rows ?? [])) {
      Array.from(row.cells).forEach((cell, i) => {
        const label = row.cells.length === labels.length ? (labels[i] ?? '') : '';
        if (cell.getAttribute('data-label') !== label) cell.setAttribute('data-label', label);
      });
    }
  });
  return (
    <div class="table-wrap">
      <table class="table table-cards" data-testid={testid} ref={ref}>
        <thead>
          <tr>
            {headers.map((h, i) => (
              <th key={i} scope="col" aria-sort={typeof h === 'object' && 'onSort' in h ? (h.sorted ? h.direction : 'none') : undefined}>
                {typeof h === 'string' ? (
                  h
                ) : 'onSort' in h ? (
                  <button type="button" class={h.sorted ? 'th-sort sorted' : 'th-sort'} aria-pressed={h.sorted} title={t('common.sortBy', { column: h.label })} onClick={h.onSort} data-testid={h.testid}>
                    {h.label}
                    <span aria-hidden="true">{h.sorted ? ' ▾' : ' ↕'}</span>
                  </button>
                ) : (
                  <span class="sr-only">{h.hidden}</span>
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** The head of a detail page: its status and the way back to its list. */
export function DetailActions({ status, back }: { status: string; back: string }) {
  const { t } = useI18n();
  return (
    <>
      <StatusBadge status={status} />
      <Link to={back} class="button secondary">
        {t('common.back')}
      </Link>
    </>
  );
}

/** One choice of a <select>: the value sent, the words shown. */
export interface ChoiceOption {
  value: string;
  label: string;
}

/**
 * A <select> of named choices, the empty one first when given ("any", "no team"): the one
 * shape of every list the console chooses from, so each shows words, never codes.
 */
export function Choice<V extends string>({ value, onChange, options, empty, testid, label }: { value: V | ''; onChange: (value: V) => void; options: readonly { value: V; label: string }[]; empty?: string; testid?: string; label?: string }) {
  return (
    <select value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value as V)} data-testid={testid} aria-label={label}>
      {empty !== undefined ? <option value="">{empty}</option> : null}
      {options.map((o) => (
        <option key={o.value} value={o.value}>
          {o.label}
        </option>
      ))}
    </select>
  );
}

/** A city's teams as choices, by name. */
export const teamChoices = (teams: readonly { id: string; name: string }[] | undefined): ChoiceOption[] => (teams ?? []).map((x) => ({ value: x.id, label: x.name }));

/** The teams of a city to choose from, "no team" first (an order may start without one). */
export function TeamSelect({ teams, value, onChange, testid, empty }: { teams: readonly { id: string; name: string }[]; value: string; onChange: (teamId: string) => void; testid: string; empty?: string }) {
  const { t } = useI18n();
  return <Choice value={value} onChange={onChange} options={teamChoices(teams)} empty={empty ?? t('alert.team.none')} testid={testid} />;
}
