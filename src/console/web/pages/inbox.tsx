/**
 * The triage inbox: Pending alerts of the current city, with the filters in the URL
 * (so back/forward and a shared link give the same list) and keyboard triage:
 * j/k move the focus, x marks the focused row, Enter opens the alert. Marked rows
 * (a checkbox each, shift-click for a range, or all of the page) take one bulk action.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { useApi, useApiEach, type types } from '../api.js';
import { useI18n } from '../i18n.js';
import { Link, navigate, useLocation } from '../router.js';
import { useSession } from '../session.js';
import { Badge, LoadError, Loading, Page, Pager, useDurations } from '../ui.js';
import { BulkBar, refusalText } from './inbox-bulk.js';
import { inboxPlace, saveInboxPlace } from '../settings.js';
import { InboxGroup } from './alert-group.js';

const PAGE_SIZE = 100;

export function InboxPage() {
  const { t } = useI18n();
  const { tenantId } = useSession();
  const { query } = useLocation();
  const page = Math.max(1, Number(query.get('page') ?? '1') || 1);
  const notGeolocated = query.get('notGeolocated') === 'true';
  const overdueOnly = query.get('overdue') === 'true';
  const partner = query.get('partner') ?? '';
  // The reason code the partner sent (its own code, not the internal reason it maps to).
  const reason = query.get('partnerReason') ?? '';
  const text = query.get('q') ?? '';
  const sort = (['priority', 'age', 'newest', 'number'] as const).find((s) => s === query.get('sort')) ?? 'priority';

  const setFilter = (name: string, value: string | null) => {
    const q = new URLSearchParams(query);
    if (value === null || value === '') q.delete(name);
    else q.set(name, value);
    if (name !== 'page') q.delete('page');
    const s = q.toString();
    navigate(`/inbox${s ? `?${s}` : ''}`, { replace: name === 'q' });
  };

  // Every filter is the server's (the list holds one page of many thousands).
  const list = useApi(
    'listAlerts',
    tenantId
      ? {
          query: {
            tenantId,
            status: 'Pending',
            grouped: true,
            sort,
            page,
            pageSize: PAGE_SIZE,
            ...(notGeolocated ? { notGeolocated } : {}),
            ...(overdueOnly ? { overdue: true } : {}),
            ...(partner ? { partner } : {}),
            ...(reason ? { partnerReason: reason } : {}),
            ...(text.trim() ? { text: text.trim() } : {}),
          },
        }
      : null,
    { refreshInterval: 30_000, keepPreviousData: true },
  );
  // A pole's code typed in the search finds the pole itself (its page lists its alerts and orders).
  const poleHit = useApi('getPole', tenantId && text.trim() ? { path: { tenantId, poleCode: text.trim() }, query: { states: 1 } } : null, { keepPreviousData: false });
  const partners = useApi('listPartners', tenantId ? { query: { tenantId } } : null);
  const attention = useApi('getTenantAttention', tenantId ? { path: { tenantId } } : null, { refreshInterval: 30_000 });
  const { can } = useSession();

  const items = list.data?.items ?? [];
  // Each group of Pending alerts is one row (its oldest alert) that expands to the others.
  const groups = new Map((list.data?.groups ?? []).map((g) => [g.alertId, g]));
  const partnerCodes = (partners.data?.items ?? []).map((p) => p.code).sort();
  // Every reason code the city's partners have sent (or the chosen partner's), not only
  // this page's: the list is one page of many, and a choice must not hide the others.
  const codeSources = partner ? partnerCodes.filter((p) => p === partner) : partnerCodes;
  const partnerReasonCodes = useApiEach('listPartnerReasonCodes', tenantId && partners.data ? codeSources.map((code) => ({ path: { code } })) : null);
  const reasons = [
    ...new Set([...(partnerReasonCodes.data ?? []).flatMap((p) => p.items.filter((c) => c.alerts > 0).map((c) => c.partnerCode)), ...items.map((a) => a.partnerReasonCode).filter((r): r is string => !!r), ...(reason ? [reason] : [])]),
  ].sort();

  // Back from an alert (or the return after triage) finds the list where it was left:
  // the same focused alert (or row, when that alert was triaged), and the same scroll.
  const queryKey = query.toString();
  const place = useRef(inboxPlace());
  const restoring = useRef(place.current.query === queryKey);
  const [selected, setSelected] = useState(() => (restoring.current ? place.current.row : 0));
  /** Marked for a bulk action, by alert id; `anchor` is the row a shift-click extends from. */
  const [marked, setMarked] = useState<ReadonlySet<string>>(new Set());
  const [anchor, setAnchor] = useState<number | null>(null);
  /** Rows a refused batch named, with the reason in words (until the next action). */
  const [refused, setRefused] = useState<ReadonlyMap<string, string>>(new Map());
  // A new list (other filters), not a refresh of the same one, starts at the top, unmarked.
  const filterKey = useRef<string | null>(null);
  useEffect(() => {
    const key = JSON.stringify([partner, reason, overdueOnly, text, notGeolocated, sort, page, tenantId]);
    const first = filterKey.current === null;
    filterKey.current = key;
    if (first) return;
    wanted.current = null;
    setSelected(0);
    setMarked(new Set());
    setAnchor(null);
    setRefused(new Map());
  }, [partner, reason, overdueOnly, text, notGeolocated, sort, page, tenantId]);
  const toggle = (i: number, range: boolean) => {
    const rows = current.current.items;
    const id = rows[i]?.id;
    if (!id) return;
    setMarked((prev) => {
      const next = new Set(prev);
      const on = !prev.has(id);
      const [from, to] = range && anchor !== null ? [Math.min(anchor, i), Math.max(anchor, i)] : [i, i];
      for (let k = from; k <= to; k++) {
        const rowId = rows[k]?.id;
        if (rowId) on ? next.add(rowId) : next.delete(rowId);
      }
      return next;
    });
    setAnchor(i);
  };
  const toggleRef = useRef(toggle);
  toggleRef.current = toggle;
  // Only what is on this page can be marked: rows gone after a refresh are dropped.
  const markedIds = items.filter((a) => marked.has(a.id)).map((a) => a.id);
  const allMarked = items.length > 0 && markedIds.length === items.length;
  // The key handler is installed once and reads the current rows and selection from
  // here: a handler re-installed by an effect after each render could still hold the
  // previous selection when Enter follows j at once (it opened the row above).
  const current = useRef({ items, selected });
  current.current = { items, selected };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement | null;
      if (target && /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName)) return;
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const { items: rows, selected: at } = current.current;
      if (['j', 'k'].includes(e.key)) wanted.current = null;
      if (e.key === 'j') {
        const next = Math.min(at + 1, Math.max(0, rows.length - 1));
        current.current = { items: rows, selected: next };
        setSelected(next);
      } else if (e.key === 'k') {
        const next = Math.max(at - 1, 0);
        current.current = { items: rows, selected: next };
        setSelected(next);
      } else if (e.key === 'x') {
        toggleRef.current(at, false);
      } else if (e.key === 'Enter' && rows[at] && (!target || target === document.body || target.closest('.inbox-list'))) {
        e.preventDefault();
        // The place is kept now: Enter right after j leaves before the effect that keeps it runs.
        saveInboxPlace({ query: new URLSearchParams(window.location.search).toString(), alertId: rows[at]!.id, row: at });
        navigate(`/alerts/${rows[at]!.id}`);
      } else return;
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
  useEffect(() => {
    if (restoring.current) return;
    document.querySelector('.inbox-row[aria-current="true"]')?.scrollIntoView({ block: 'nearest' });
  }, [selected]);
  // The alert focused before follows the rows as they come (the cached ones first, which
  // may still hold alerts triaged meanwhile, then the fresh ones), until the operator moves.
  const wanted = useRef<string | null>(restoring.current ? place.current.alertId : null);
  useEffect(() => {
    if (!list.data) return;
    const at = wanted.current ? items.findIndex((a) => a.id === wanted.current) : -1;
    const row = at >= 0 ? at : Math.min(current.current.selected, Math.max(0, items.length - 1));
    if (row !== current.current.selected) {
      current.current = { items, selected: row };
      setSelected(row);
    }
    if (restoring.current) {
      restoring.current = false;
      const y = place.current.scrollY;
      requestAnimationFrame(() => window.scrollTo(0, y));
    }
  }, [list.data]);
  useEffect(() => {
    if (restoring.current || !list.data) return;
    const id = items[selected]?.id ?? null;
    if (wanted.current && id !== wanted.current) return;
    saveInboxPlace({ query: queryKey, alertId: id, row: selected });
  }, [queryKey, selected, items[selected]?.id]);
  useEffect(() => {
    // The scroll of the inbox only: leaving it scrolls the next page to the top.
    const onScroll = () => {
      if (window.location.pathname.endsWith('/inbox')) saveInboxPlace({ scrollY: window.scrollY });
    };
    window.addEventListener('scroll', onScroll, { passive: true });
    return () => window.removeEventListener('scroll', onScroll);
  }, []);

  return (
    <Page title={t('inbox.title')}>
      <div class="badges" data-testid="attention">
        <button type="button" class="badge-button" aria-pressed={!notGeolocated && !overdueOnly} onClick={() => navigate('/inbox')}>
          {t('inbox.badge.pending')} <Badge kind="count">{attention.data?.pendingAlerts ?? '…'}</Badge>
        </button>
        <button type="button" class="badge-button" aria-pressed={notGeolocated} onClick={() => setFilter('notGeolocated', notGeolocated ? null : 'true')}>
          {t('inbox.badge.notGeolocated')} <Badge kind="warn">{attention.data?.notGeolocatedAlerts ?? '…'}</Badge>
        </button>
        <button type="button" class="badge-button" aria-pressed={overdueOnly} onClick={() => setFilter('overdue', overdueOnly ? null : 'true')}>
          {t('inbox.badge.overdue')} <Badge kind="danger">{attention.data?.overduePendingAlerts ?? '…'}</Badge>
        </button>
        {attention.data && attention.data.overdueServiceOrders > 0 ? (
          <Link to="/orders?overdue=true" class="button badge-button">
            {t('inbox.badge.overdueOrders')} <Badge kind="danger">{attention.data.overdueServiceOrders}</Badge>
          </Link>
        ) : null}
        {attention.data && can('triage') && attention.data.deadDeliveries + attention.data.rejectedInboundItems + attention.data.failedAttachmentUrls > 0 ? (
          <Link to="/partners?problems=1" class="button badge-button" data-testid="partner-problems">
            {t('inbox.badge.partners')} <Badge kind="danger">{attention.data.deadDeliveries + attention.data.rejectedInboundItems + attention.data.failedAttachmentUrls}</Badge>
          </Link>
        ) : null}
      </div>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          <span>{t('inbox.filter.text')}</span>
          <input type="search" value={text} onInput={(e) => setFilter('q', (e.target as HTMLInputElement).value)} />
        </label>
        {poleHit.data && poleHit.data.code === text.trim() ? (
          <Link to={`/poles/${encodeURIComponent(poleHit.data.code)}`} class="button secondary" data-testid="pole-found">
            {t('pole.found', { code: poleHit.data.code })}
          </Link>
        ) : null}
        <label>
          <span>{t('inbox.filter.partner')}</span>
          <select value={partner} onChange={(e) => setFilter('partner', (e.target as HTMLSelectElement).value)}>
            <option value="">{t('inbox.filter.all')}</option>
            {partnerCodes.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>{t('inbox.filter.reason')}</span>
          <select value={reason} onChange={(e) => setFilter('partnerReason', (e.target as HTMLSelectElement).value)} data-testid="inbox-partner-reason">
            <option value="">{t('inbox.filter.all')}</option>
            {reasons.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>{t('inbox.sort')}</span>
          <select value={sort} onChange={(e) => setFilter('sort', (e.target as HTMLSelectElement).value)} data-testid="inbox-sort">
            <option value="priority">{t('inbox.sort.priority')}</option>
            <option value="age">{t('inbox.sort.age')}</option>
            <option value="newest">{t('inbox.sort.newest')}</option>
            <option value="number">{t('inbox.sort.number')}</option>
          </select>
        </label>
        <label class="check">
          <input type="checkbox" checked={notGeolocated} onChange={() => setFilter('notGeolocated', notGeolocated ? null : 'true')} />
          <span>{t('inbox.filter.notGeolocated')}</span>
        </label>
        <label class="check">
          <input type="checkbox" checked={overdueOnly} onChange={() => setFilter('overdue', overdueOnly ? null : 'true')} />
          <span>{t('inbox.filter.overdue')}</span>
        </label>
      </form>
      <p class="muted small keys-hint">{t('inbox.keys')}</p>
      {list.error ? <LoadError error={list.error} retry={() => void list.mutate()} /> : null}
      {!list.data && !list.error ? <Loading /> : null}
      {list.data && items.length === 0 ? <p class="empty">{t('inbox.empty')}</p> : null}
      {items.length > 0 && tenantId && can('triage', tenantId) ? (
        <div class="bulk-select">
          <label class="check">
            <input
              type="checkbox"
              checked={allMarked}
              onChange={() => {
                setMarked(allMarked ? new Set() : new Set(items.map((a) => a.id)));
                setAnchor(null);
              }}
              data-testid="select-all"
            />
            <span>{t('bulk.selectAll')}</span>
          </label>
        </div>
      ) : null}
      {markedIds.length > 0 && tenantId ? (
        <BulkBar
          tenantId={tenantId}
          ids={markedIds}
          onClear={() => setMarked(new Set())}
          onDone={() => {
            setMarked(new Set());
            setRefused(new Map());
            void list.mutate();
            void attention.mutate();
          }}
          onRefused={(items) => setRefused(new Map(items.map((r) => [r.alertId, refusalText(t, r)])))}
        />
      ) : null}
      {items.length > 0 ? (
        <ul class="inbox-list" aria-label={t('inbox.title')} data-testid="inbox">
          {items.map((a, i) => (
            <InboxRow
              key={a.id}
              alert={a}
              selected={i === selected}
              onFocus={() => {
                wanted.current = null;
                setSelected(i);
              }}
              markable={!!tenantId && can('triage', tenantId)}
              marked={marked.has(a.id)}
              onMark={(range) => toggle(i, range)}
              refusal={refused.get(a.id)}
              group={groups.get(a.id)}
              onMerged={() => {
                void list.mutate();
                void attention.mutate();
              }}
            />
          ))}
        </ul>
      ) : null}
      {list.data ? <Pager page={page} pageSize={PAGE_SIZE} total={list.data.total} onPage={(p) => setFilter('page', String(p))} /> : null}
    </Page>
  );
}

function InboxRow({
  alert: a,
  selected,
  onFocus,
  markable,
  marked,
  onMark,
  refusal,
  group,
  onMerged,
}: {
  alert: types.Alert;
  selected: boolean;
  onFocus: () => void;
  markable: boolean;
  marked: boolean;
  onMark: (range: boolean) => void;
  refusal: string | undefined;
  group?: NonNullable<types.AlertPage['groups']>[number];
  onMerged: () => void;
}) {
  const { t } = useI18n();
  const d = useDurations();
  const overdue = d.overdue(a.slaDueAt);
  return (
    <li
      class={`inbox-row${selected ? ' selected' : ''}${marked ? ' marked' : ''}${refusal ? ' refused' : ''}`}
      aria-current={selected ? 'true' : undefined}
      data-alert-id={a.id}
      onFocusIn={onFocus}
    >
      {markable ? (
        <label class="mark">
          <input
            type="checkbox"
            checked={marked}
            // The browser flips this box and the list flips the same row (a shift-click
            // extends to the rows since the last one marked), so both agree.
            onClick={(e) => onMark(e.shiftKey)}
            data-testid="mark"
          />
          <span class="sr-only">{t('bulk.selectRow', { number: a.alertNumber })}</span>
        </label>
      ) : null}
      <Thumbnail alert={a} />
      <div class="inbox-main">
        <Link to={`/alerts/${a.id}`} class="inbox-link">
          <span class="num">#{a.alertNumber}</span> <span class="desc">{a.description}</span>
        </Link>
        <div class="inbox-meta">
          <span>{a.address.street}{a.address.number ? `, ${a.address.number}` : ''}</span>
          {a.address.neighborhood ? <span>{a.address.neighborhood}</span> : null}
        </div>
        {group ? <InboxGroup alertId={a.id} summary={group} onMerged={onMerged} /> : null}
        {refusal ? (
          <p class="refusal" data-testid="refusal">
            {refusal}
          </p>
        ) : null}
      </div>
      <div class="inbox-side">
        <span class="tag" title={t('col.partner')}>
          {a.partner.code}
        </span>
        {a.partnerReasonCode ? (
          <span class="tag tag-code" title={t('col.partnerReason')}>
            {a.partnerReasonCode}
          </span>
        ) : null}
        {!a.geolocated ? <Badge kind="warn">{t('inbox.badge.notGeolocated')}</Badge> : null}
        {a.updatedByPartnerAt ? (
          <span data-testid="partner-updated">
            <Badge kind="neutral">{t('alert.partnerUpdated')}</Badge>
          </span>
        ) : null}
        <span class="age" title={t('col.age')}>
          {t('inbox.received', { time: d.age(a.createdAt) })}
        </span>
        <span class={overdue ? 'sla overdue' : 'sla'} title={t('col.sla')}>
          {overdue ? t('inbox.overdueBy', { time: d.until(a.slaDueAt) }) : t('inbox.dueIn', { time: d.until(a.slaDueAt) })}
        </span>
        <Badge kind={a.priority.toLowerCase()}>{t(`priority.${a.priority}`)}</Badge>
      </div>
    </li>
  );
}

/** The first stored photo, small; the alert's file name (partner text) is its alt text. */
function Thumbnail({ alert: a }: { alert: types.Alert }) {
  const photo = (a.photos ?? []).find((p) => p.success);
  if (!photo) return <span class="thumb thumb-empty" aria-hidden="true" />;
  return <img class="thumb" src={`/api/admin/alerts/${a.id}/attachments/${photo.id}?variant=thumbnail`} alt={photo.filename ?? ''} loading="lazy" width={56} height={56} />;
}
