/**
 * Visible feedback for every action: a message in a live region (read out by screen
 * readers) saying it worked, or the problem+json title and detail when it did not.
 * A button stays disabled while its request runs, so nothing is sent twice.
 */
import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';
import { useI18n } from './i18n.js';

interface Message {
  id: number;
  kind: 'ok' | 'error';
  title: string;
  detail?: string;
  errors?: { pointer: string; message: string }[];
}

interface Feedback {
  ok(title: string): void;
  error(err: unknown): void;
}

const FeedbackContext = createContext<Feedback>({ ok: () => {}, error: () => {} });

export function FeedbackProvider({ children }: { children: ComponentChildren }) {
  const { t } = useI18n();
  const [messages, setMessages] = useState<Message[]>([]);
  const next = useRef(1);
  const push = useCallback((m: Omit<Message, 'id'>) => {
    const id = next.current++;
    setMessages((list) => [...list.slice(-3), { ...m, id }]);
    // Errors stay until dismissed; confirmations go after a while.
    if (m.kind === 'ok') setTimeout(() => setMessages((list) => list.filter((x) => x.id !== id)), 6000);
  }, []);
  const feedback: Feedback = {
    ok: (title) => push({ kind: 'ok', title }),
    error: (err) => push(err instanceof ApiError ? { kind: 'error', title: err.title, detail: err.detail, errors: err.errors } : { kind: 'error', title: t('common.error'), detail: err instanceof Error ? err.message : String(err) }),
  };
  return (
    <FeedbackContext.Provider value={feedback}>
      {children}
      <div class="toasts" role="status" aria-live="polite">
        {messages.map((m) => (
          <div key={m.id} class={`toast toast-${m.kind}`} data-testid={`toast-${m.kind}`}>
            <strong>{m.title}</strong>
            {m.detail ? <span>{m.detail}</span> : null}
            {m.errors && m.errors.length > 0 ? (
              <ul class="toast-errors">
                {m.errors.map((e, i) => (
                  <li key={i}>
                    <code>{e.pointer || '/'}</code> {e.message}
                  </li>
                ))}
              </ul>
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
