/**
 * Client routes under /console/: every page has its own URL, links push history
 * entries, and back/forward (popstate) re-render the page the URL names. The server
 * answers the same page for every /console/ path, so a deep link or a reload works.
 */
import { createContext, type ComponentChildren } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';

export const BASE = '/console';

export interface Location {
  path: string;
  query: URLSearchParams;
}

function current(): Location {
  const path = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) || '/' : '/';
  return { path, query: new URLSearchParams(window.location.search) };
}

const listeners = new Set<() => void>();

/**
 * Goes to a console path (`/inbox`, `/alerts/ID?x=1`); `replace` keeps history as it is;
 * `keepScroll` leaves the page where it is (a map writing its view into the URL).
 */
export function navigate(to: string, opts: { replace?: boolean; keepScroll?: boolean } = {}): void {
  const url = `${BASE}${to}`;
  if (url === window.location.pathname + window.location.search) return;
  if (opts.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  if (!opts.keepScroll) window.scrollTo(0, 0);
  for (const l of listeners) l();
}

const LocationContext = createContext<Location>(current());

export function RouterProvider({ children }: { children: ComponentChildren }) {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const update = () => setLocation(current());
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return <LocationContext.Provider value={location}>{children}</LocationContext.Provider>;
}

export function useLocation(): Location {
  return useContext(LocationContext);
}

/** Matches `/alerts/:id` against a path; the parameters are URI-decoded. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/');
  const s = path.replace(/\/+$/, '').split('/');
  if (p.length !== s.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    const part = p[i]!;
    if (part.startsWith(':')) {
      try {
        params[part.slice(1)] = decodeURIComponent(s[i]!);
      } catch {
        return null;
      }
    } else if (part !== s[i]) return null;
  }
  return params;
}

/** An in-app link: a real <a href> (open in a new tab works), navigated without a reload. */
export function Link({ to, children, class: className, ...rest }: { to: string; children: ComponentChildren; class?: string; 'aria-current'?: 'page' | undefined; title?: string }) {
  return (
    <a
      href={`${BASE}${to}`}
      class={className}
      {...rest}
      onClick={(e) => {
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}
