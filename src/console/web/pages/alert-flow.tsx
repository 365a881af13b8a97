/**
 * Triage at volume on the alert page: after an action the next Pending alert of the
 * inbox's filter and order opens (or the inbox, as the operator chooses), n/p step
 * through that list, and single keys reach each action; `?` lists them.
 *
 * "The inbox's filter" is the query the inbox last showed in this tab (settings.ts
 * keeps it with the focused row); an alert opened from elsewhere steps through the
 * default inbox (every Pending alert, by priority).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, useApi, type types } from '../api.js';
import { useFeedback } from '../feedback.js';
import { useI18n, type MessageKey } from '../i18n.js';
import { navigate } from '../router.js';
import { afterTriage, inboxPlace, saveAfterTriage, saveInboxPlace, type AfterTriage } from '../settings.js';

/** The inbox's page size: a page of the list here is the inbox's page. */
const PAGE_SIZE = 100;

/** The inbox's list query for its URL query (the same filters as pages/inbox.tsx). */
function listQuery(tenantId: string, q: URLSearchParams) {
  const sort = (['priority', 'age', 'newest', 'number'] as const).find((s) => s === q.get('sort')) ?? 'priority';
  const text = (q.get('q') ?? '').trim();
  return {
    tenantId,
    status: 'Pending' as const,
    sort,
    ...(q.get('notGeolocated') === 'true' ? { notGeolocated: true } : {}),
    ...(q.get('overdue') === 'true' ? { overdue: true } : {}),
    ...(q.get('partner') ? { partner: q.get('partner')! } : {}),
    ...(q.get('partnerReason') ? { partnerReason: q.get('partnerReason')! } : {}),
    ...(text ? { text } : {}),
  };
}

function pageOf(q: URLSearchParams): number {
  return Math.max(1, Number(q.get('page') ?? '1') || 1);
}

export interface TriageFlow {
  /** After an action on this alert: a toast saying what was done, then the next alert or the inbox. */
  done(message: string, link: { to: string; label: string } | null, advance: boolean): void;
  /** n / p: the next or previous Pending alert of the filter. */
  step(dir: 1 | -1): Promise<void>;
  busy: boolean;
}

export function useTriageFlow(alert: types.Alert | undefined): TriageFlow {
  const { t } = useI18n();
  const feedback = useFeedback();
  const place = inboxPlace();
  const params = new URLSearchParams(place.query);
  // The list as the page opened (or as last read): after this alert is triaged (and so
  // gone from the list), the next one is the first that was not before it.
  const opened = useApi('listAlerts', alert ? { query: { ...listQuery(alert.tenantId, params), page: pageOf(params), pageSize: PAGE_SIZE } } : null, { revalidateOnFocus: false });
  const [busy, setBusy] = useState(false);

  // Only from this alert's page: an operator who followed the toast's link elsewhere
  // while the list was read stays where they went.
  const open = (from: string, target: types.Alert, page: number, row: number) => {
    if (window.location.pathname !== from) return;
    const q = new URLSearchParams(inboxPlace().query);
    if (page > 1) q.set('page', String(page));
    else q.delete('page');
    saveInboxPlace({ query: q.toString(), alertId: target.id, row });
    // Replaces this alert in history: Back goes to the inbox, not through each alert.
    navigate(`/alerts/${target.id}`, { replace: true });
  };

  const find = async (dir: 1 | -1, removed: boolean): Promise<{ alert: types.Alert; page: number; row: number } | null> => {
    if (!alert) return null;
    const q = new URLSearchParams(inboxPlace().query);
    let page = pageOf(q);
    const fetch = (p: number) => call('listAlerts', { query: { ...listQuery(alert.tenantId, q), page: p, pageSize: PAGE_SIZE } });
    let list = await fetch(page);
    const here = list.items.findIndex((a) => a.id === alert.id);
    let row: number;
    if (here >= 0) row = here + dir;
    else if (removed) {
      const old = opened.data?.items;
      const saved = inboxPlace();
      if (old) {
        const at = old.findIndex((a) => a.id === alert.id);
        const before = new Set(old.slice(0, Math.max(0, at)).map((a) => a.id));
        row = list.items.findIndex((a) => !before.has(a.id));
        if (row < 0) row = list.items.length;
      } else if (saved.alertId === alert.id) {
        // Acted on before the list as opened arrived: the alert's row when it was opened
        // is where the one after it stands now (it used to go to the filter's first).
        row = saved.row;
      } else row = 0;
    } else row = dir > 0 ? 0 : list.items.length - 1;
    if (row >= list.items.length && page * PAGE_SIZE < list.total) {
      page += 1;
      list = await fetch(page);
      row = 0;
    } else if (row < 0 && page > 1) {
      page -= 1;
      list = await fetch(page);
      row = list.items.length - 1;
    }
    const target = list.items[row];
    return target && target.id !== alert.id ? { alert: target, page, row } : null;
  };

  const step = async (dir: 1 | -1) => {
    if (busy) return;
    setBusy(true);
    const from = window.location.pathname;
    try {
      const next = await find(dir, false);
      if (next) open(from, next.alert, next.page, next.row);
      else feedback.ok(t(dir > 0 ? 'flow.noNext' : 'flow.noPrevious'));
    } catch (err) {
      feedback.error(err);
    } finally {
      setBusy(false);
    }
  };

  const done = (message: string, link: { to: string; label: string } | null, advance: boolean) => {
    feedback.ok(message, link ?? undefined);
    if (!advance) return;
    if (afterTriage() === 'inbox') {
      navigate(`/inbox${place.query ? `?${place.query}` : ''}`);
      return;
    }
    const from = window.location.pathname;
    void (async () => {
      try {
        const next = await find(1, true);
        if (next) open(from, next.alert, next.page, next.row);
        else if (window.location.pathname === from) {
          feedback.ok(t('flow.inboxEmpty'));
          navigate(`/inbox${place.query ? `?${place.query}` : ''}`);
        }
      } catch (err) {
        feedback.error(err);
      }
    })();
  };
  return { done, step, busy };
}

/** The operator's choice of what follows a triage action (kept in this browser). */
export function AfterTriageChoice() {
  const { t } = useI18n();
  const [value, setValue] = useState<AfterTriage>(afterTriage);
  return (
    <label class="after-triage">
      <span>{t('flow.after')}</span>
      <select
        value={value}
        onChange={(e) => {
          const v = (e.target as HTMLSelectElement).value === 'inbox' ? 'inbox' : 'next';
          saveAfterTriage(v);
          setValue(v);
        }}
        data-testid="after-triage"
      >
        <option value="next">{t('flow.after.next')}</option>
        <option value="inbox">{t('flow.after.inbox')}</option>
      </select>
    </label>
  );
}

/** The alert page's keys, in the order the dialog lists them. */
export const ALERT_KEYS: readonly { key: string; label: MessageKey }[] = [
  { key: 'o', label: 'flow.key.order' },
  { key: 'l', label: 'flow.key.link' },
  { key: 'd', label: 'flow.key.discard' },
  { key: 'r', label: 'flow.key.reclassify' },
  { key: 'n', label: 'flow.key.next' },
  { key: 'p', label: 'flow.key.previous' },
  { key: '?', label: 'flow.key.help' },
];

/** The testid of the field or button each action key moves the focus to. */
const TARGETS: Record<string, string> = { o: 'create-order', l: 'link-order', d: 'discard-note', r: 'reason-picker-input' };

/**
 * The keys of the alert page. A key typed in a field (or with Ctrl/Alt/Meta) is the
 * field's; an action key moves the focus to its action (Enter then does it), so one
 * stray key never changes anything by itself.
 */
export function useAlertKeys(flow: TriageFlow, onHelp: () => void) {
  const handlers = useRef({ flow, onHelp });
  handlers.current = { flow, onHelp };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement | null;
      if (target && (/^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName) || target.isContentEditable)) return;
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      if (document.querySelector('dialog[open]')) return;
      const { flow: f, onHelp: help } = handlers.current;
      if (e.key === '?') help();
      else if (e.key === 'n') void f.step(1);
      else if (e.key === 'p') void f.step(-1);
      else if (TARGETS[e.key]) {
        const el = document.querySelector<HTMLElement>(`[data-testid="${TARGETS[e.key]}"]`);
        if (!el) return;
        el.scrollIntoView({ block: 'center' });
        el.focus();
      } else return;
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}

/** The list of keys, as a modal dialog (Escape or the button closes it); shown while mounted. */
export function ShortcutsDialog({ onClose }: { onClose: () => void }) {
  const { t } = useI18n();
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  return (
    <dialog ref={ref} class="shortcuts" aria-labelledby="shortcuts-title" onClose={onClose} data-testid="shortcuts">
      <h2 id="shortcuts-title">{t('flow.keys.title')}</h2>
      <dl class="keys">
        {ALERT_KEYS.map((k) => (
          <div key={k.key}>
            <dt>
              <kbd>{k.key}</kbd>
            </dt>
            <dd>{t(k.label)}</dd>
          </div>
        ))}
      </dl>
      <p class="muted small">{t('flow.keys.note')}</p>
      <form method="dialog">
        <button type="submit" data-testid="shortcuts-close">
          {t('flow.keys.close')}
        </button>
      </form>
    </dialog>
  );
}
