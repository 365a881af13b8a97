/**
 * The console's search, in the top bar of every page: one box for an alert (its
 * number, protocol, address as displayed, citizen, phone, description), an order
 * (its number, address) and a pole (its code) of the selected city. Results appear
 * under the box as the operator types; Enter opens the first one; "all results"
 * opens the inbox filtered by the same text.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { useApi } from './api.js';
import { useI18n } from './i18n.js';
import { counted } from './pages/inbox-bulk.js';
import { Link, navigate, useLocation } from './router.js';
import { useSession } from './session.js';

const SHOWN = 5;
/** Typing pauses this long before the lists are asked (every key would be a request). */
const SETTLE_MS = 250;

interface Hit {
  key: string;
  to: string;
  kind: string;
  title: string;
  detail: string;
}

export function GlobalSearch() {
  const { t } = useI18n();
  const { tenantId } = useSession();
  const location = useLocation();
  const [typed, setTyped] = useState('');
  const [query, setQuery] = useState('');
  const [open, setOpen] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    const timer = setTimeout(() => setQuery(typed.trim()), SETTLE_MS);
    return () => clearTimeout(timer);
  }, [typed]);
  // A page opened from the results closes them.
  useEffect(() => setOpen(false), [location.path]);

  const ask = tenantId && query.length > 0;
  // Pole codes are looked up as typed and, when that differs, in capitals (codes are
  // written in capitals: "cwb-pst-00731" finds CWB-PST-00731).
  const upper = query.toUpperCase();
  const exactPole = useApi('getPole', ask ? { path: { tenantId, poleCode: query }, query: { states: 1 } } : null, { keepPreviousData: false, shouldRetryOnError: false });
  const upperPole = useApi('getPole', ask && upper !== query ? { path: { tenantId, poleCode: upper }, query: { states: 1 } } : null, { keepPreviousData: false, shouldRetryOnError: false });
  const pole = exactPole.data || upper === query ? exactPole : upperPole;
  const orders = useApi('listServiceOrders', ask ? { query: { tenantId, text: query, limit: SHOWN } } : null, { keepPreviousData: false });
  const alerts = useApi('listAlerts', ask ? { query: { tenantId, text: query, pageSize: SHOWN, sort: 'newest' } } : null, { keepPreviousData: false });

  const hits: Hit[] = [];
  if (pole.data && pole.data.code.toUpperCase() === query.toUpperCase()) {
    hits.push({ key: `p${pole.data.id}`, to: `/poles/${encodeURIComponent(pole.data.code)}`, kind: t('search.kind.pole'), title: pole.data.code, detail: pole.data.address });
  }
  for (const o of orders.data?.items ?? []) hits.push({ key: `o${o.id}`, to: `/orders/${o.id}`, kind: t('search.kind.order'), title: o.number, detail: o.address });
  for (const a of alerts.data?.items ?? []) {
    hits.push({
      key: `a${a.id}`,
      to: `/alerts/${a.id}`,
      kind: t('search.kind.alert'),
      title: `#${a.alertNumber} ${a.description}`,
      detail: `${a.address.street}${a.address.number ? `, ${a.address.number}` : ''} · ${a.protocolNumber}`,
    });
  }
  // Results show once every list has answered the text as typed now (no flicker of
  // an older text's results, no pole jumping in above the rows being read).
  const settled = (r: { data?: unknown; error?: unknown }) => r.data !== undefined || r.error !== undefined;
  const ready = Boolean(ask) && typed.trim() === query && settled(exactPole) && (upper === query || settled(upperPole)) && settled(orders) && settled(alerts);

  function submit(e: Event) {
    e.preventDefault();
    if (!ready || !hits[0]) return;
    // The search is done: the page it opens gets the focus (its keys work at once).
    input.current?.blur();
    navigate(hits[0].to);
  }

  return (
    <div
      class="global-search"
      ref={box}
      onFocusOut={(e) => {
        if (!box.current?.contains(e.relatedTarget as Node | null)) setOpen(false);
      }}
      onKeyDown={(e) => {
        if (e.key === 'Escape') setOpen(false);
      }}
    >
      <form role="search" onSubmit={submit}>
        <label>
          <span class="sr-only">{t('search.label')}</span>
          <input
            type="search"
            ref={input}
            value={typed}
            placeholder={t('search.placeholder')}
            onInput={(e) => {
              setTyped((e.target as HTMLInputElement).value);
              setOpen(true);
            }}
            onFocus={() => setOpen(true)}
            data-testid="global-search"
            aria-controls={open && typed.trim() ? 'global-search-results' : undefined}
            autocomplete="off"
          />
        </label>
      </form>
      {open && typed.trim() ? (
        <div class="search-results" id="global-search-results" data-testid="global-search-results" data-ready={ready ? 'true' : 'false'} aria-live="polite">
          {!ready ? <p class="muted small">{t('search.searching')}</p> : null}
          {ready && hits.length === 0 ? <p class="muted small">{t('search.none', { text: query })}</p> : null}
          {ready && hits.length > 0 ? (
            <ul>
              {hits.map((h) => (
                <li key={h.key}>
                  <Link to={h.to} class="search-hit">
                    <span class="tag">{h.kind}</span> <strong>{h.title}</strong>
                    <span class="muted small">{h.detail}</span>
                  </Link>
                </li>
              ))}
            </ul>
          ) : null}
          {ready && alerts.data && alerts.data.total > 0 ? (
            <Link to={`/inbox?q=${encodeURIComponent(query)}`} class="small" data-testid="global-search-all">
              {counted(t, 'search.all', alerts.data.total)}
            </Link>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
