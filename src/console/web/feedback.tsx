/**
 * Visible feedback for every action: a message in a live region (read out by screen
 * readers) saying it worked, or the problem+json title and detail when it did not.
 * A button stays disabled while its request runs, so nothing is sent twice.
 */
import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import { useSWRConfig } from 'swr';
import { ApiError, call, whenUndoable, type UndoTicket } from './api.js';
import { useI18n } from './i18n.js';
import { BASE, navigate } from './router.js';
import { problemWords } from './words.js';
import { Link } from './router.js';

interface Message {
  id: number;
  kind: 'ok' | 'error';
  title: string;
  detail?: string;
  /** A way to what was done (the order an alert went to). */
  link?: { to: string; label: string };
}

interface Feedback {
  ok(title: string, link?: { to: string; label: string }): void;
  error(err: unknown): void;
}

const FeedbackContext = createContext<Feedback>({ ok: () => {}, error: () => {} });

/** The layout's phone breakpoint (styles.css). */
const PHONE_WIDTH = '(max-width: 820px)';

/** The phone breakpoint's query, made once (null where the browser has no matchMedia). */
let phoneQuery: MediaQueryList | null | undefined;
function phoneWidthQuery(): MediaQueryList | null {
  if (phoneQuery === undefined) phoneQuery = typeof window.matchMedia === 'function' ? window.matchMedia(PHONE_WIDTH) : null;
  return phoneQuery;
}

/** Whether the window is phone-sized now (follows rotation and resizing). */
function usePhoneWidth(): boolean {
  const [phone, setPhone] = useState(() => phoneWidthQuery()?.matches ?? false);
  useEffect(() => {
    const query = phoneWidthQuery();
    if (!query) return undefined;
    const changed = () => setPhone(query.matches);
    // A change between the first render and this subscription is not missed.
    changed();
    query.addEventListener('change', changed);
    return () => query.removeEventListener('change', changed);
  }, []);
  return phone;
}

export function FeedbackProvider({ children }: { children: ComponentChildren }) {
  const { t } = useI18n();
  const [messages, setMessages] = useState<Message[]>([]);
  const next = useRef(1);
  const bar = useRef<HTMLDivElement>(null);
  const push = useCallback((m: Omit<Message, 'id'>) => {
    const id = next.current++;
    // One toast per cause: the same message again replaces the one shown.
    setMessages((list) => [...list.filter((x) => x.title !== m.title || x.detail !== m.detail).slice(-2), { ...m, id }]);
    // Errors stay until dismissed; confirmations go after a while.
    if (m.kind === 'ok') setTimeout(() => setMessages((list) => list.filter((x) => x.id !== id)), 6000);
  }, []);
  const undo = useUndo(push);
  // On a phone only the newest confirmation shows (errors stay until dismissed): a stack
  // of them would cover the page the crew is working on.
  const phone = usePhoneWidth();
  const lastOk = [...messages].reverse().find((m) => m.kind === 'ok');
  const shown = phone ? messages.filter((m) => m.kind === 'error' || m === lastOk) : messages;
  const feedback: Feedback = {
    ok: (title, link) => push({ kind: 'ok', title, ...(link ? { link } : {}) }),
    error: (err) => push(err instanceof ApiError ? { kind: 'error', ...problemWords(t, err) } : { kind: 'error', title: t('common.error'), detail: err instanceof Error ? err.message : String(err) }),
  };
  // The toasts sit in a bar along the bottom; the page gets room below its content for
  // it, so no button is ever under a toast (it can always be scrolled into view).
  useEffect(() => {
    const height = bar.current ? bar.current.offsetHeight : 0;
    document.body.style.paddingBottom = height ? `${height + 16}px` : '';
  }, [messages, phone, undo !== null]);
  return (
    <FeedbackContext.Provider value={feedback}>
      {children}
      <div class="toasts" role="status" aria-live="polite" ref={bar}>
        {undo}
        {shown.map((m) => (
          <div key={m.id} class={`toast toast-${m.kind}`} data-testid={`toast-${m.kind}`}>
            <strong>{m.title}</strong>
            {m.detail ? <span>{m.detail}</span> : null}
            {m.link ? (
              <Link to={m.link.to} class="toast-link">
                {m.link.label}
              </Link>
            ) : null}
            <button type="button" class="toast-close" aria-label="×" onClick={() => setMessages((list) => list.filter((x) => x.id !== m.id))}>
              ×
            </button>
          </div>
        ))}
      </div>
    </FeedbackContext.Provider>
  );
}

export function useFeedback(): Feedback {
  return useContext(FeedbackContext);
}

/**
 * Runs one change: busy while it runs, a confirmation or the problem after, and
 * `after` (usually revalidating what the page shows) only when it worked.
 */
export function useAction<A extends unknown[], R>(run: (...args: A) => Promise<R>, done: (result: R) => string | void) {
  const feedback = useFeedback();
  const [busy, setBusy] = useState(false);
  const go = async (...args: A): Promise<R | undefined> => {
    if (busy) return undefined;
    setBusy(true);
    try {
      const result = await run(...args);
      const message = done(result);
      if (message) feedback.ok(message);
      return result;
    } catch (err) {
      feedback.error(err);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, run: go };
}

/**
 * The offer to undo the last undoable action (a triage action, an order's
 * cancellation), shown while its window lasts with the seconds left: "Desfazer" puts
 * everything back (the partner never hears of it), returns to the page the action was
 * made on and reads every page's data again. A newer action replaces the offer.
 */
function useUndo(push: (m: Omit<Message, 'id'>) => void) {
  const { t } = useI18n();
  const { mutate } = useSWRConfig();
  const [ticket, setTicket] = useState<UndoTicket | null>(null);
  const [now, setNow] = useState(Date.now());
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    whenUndoable((next) => {
      setTicket(next);
      setNow(Date.now());
    });
    return () => whenUndoable(null);
  }, []);
  useEffect(() => {
    if (!ticket) return undefined;
    const timer = setInterval(() => {
      const at = Date.now();
      setNow(at);
      if (at >= ticket.until) setTicket((current) => (current === ticket ? null : current));
    }, 250);
    return () => clearInterval(timer);
  }, [ticket]);
  if (!ticket || now >= ticket.until) return null;
  const seconds = Math.max(1, Math.ceil((ticket.until - now) / 1000));
  const run = async () => {
    if (busy) return;
    setBusy(true);
    try {
      await call('undoAction', { path: { actionId: ticket.actionId } });
      setTicket(null);
      const back = ticket.returnTo.startsWith(BASE) ? ticket.returnTo.slice(BASE.length) || '/' : ticket.returnTo;
      navigate(back);
      await mutate(() => true);
      push({ kind: 'ok', title: t('undo.done') });
    } catch (err) {
      setTicket(null);
      push(err instanceof ApiError ? { kind: 'error', ...problemWords(t, err) } : { kind: 'error', title: t('common.error') });
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="toast toast-undo" data-testid="undo-offer">
      <strong>{t('undo.offer', { seconds })}</strong>
      <span>{t('undo.hint')}</span>
      <button type="button" class="undo-button" disabled={busy} onClick={() => void run()} data-testid="undo">
        {t('undo.button')}
      </button>
    </div>
  );
}
