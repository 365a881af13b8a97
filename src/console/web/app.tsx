/** The console's shell: language, session, the city switcher, navigation and the pages. */
import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { SWRConfig, useSWRConfig } from 'swr';
import { setApiLanguage, useApi, whenUnauthorized } from './api.js';
import { FeedbackProvider, useFeedback } from './feedback.js';
import { I18nContext, initialLanguage, saveLanguage, translator, useI18n, type Language, type MessageKey } from './i18n.js';
import { Link, match, navigate, RouterProvider, useLocation } from './router.js';
import { canIn, loadSession, rememberedTenant, rememberTenant, roleIn, SessionContext, signOut, useSession, type Ability, type Operator, type SessionState } from './session.js';
import { Loading } from './ui.js';
import { GlobalSearch } from './search.js';
// Also the page's icon: src/http/console.ts links the same hashed file.
import logo from './favicon.svg';
import { SignInPage } from './pages/sign-in.js';
import { InboxPage } from './pages/inbox.js';
import { AlertPage } from './pages/alert.js';
import { OrdersPage } from './pages/orders.js';
import { OrderPage } from './pages/order.js';
import { MapPage } from './pages/map.js';
import { PolePage } from './pages/pole.js';
import { PartnersPage } from './pages/partners.js';
import { PartnerPage } from './pages/partner.js';
import { TeamsPage } from './pages/teams.js';
import { OperatorsPage } from './pages/operators.js';
import { AuditPage } from './pages/audit.js';
import { ReportsPage } from './pages/reports.js';
import { MyTeamPage } from './pages/my-team.js';

export function App() {
  const [lang, setLangState] = useState<Language>(initialLanguage);
  const i18n = useMemo(() => {
    const dtf = new Intl.DateTimeFormat(lang, { dateStyle: 'short', timeStyle: 'short' });
    return {
      lang,
      t: translator(lang),
      setLang: (l: Language) => {
        saveLanguage(l);
        setLangState(l);
      },
      dateTime: (iso: string | null | undefined) => (iso ? dtf.format(new Date(iso)) : '—'),
    };
  }, [lang]);
  setApiLanguage(lang);
  useEffect(() => {
    document.documentElement.lang = lang;
  }, [lang]);
  return (
    <I18nContext.Provider value={i18n}>
      <RouterProvider>
        <SWRConfig value={{ provider: () => new Map() }}>
          <ReadAgainInLanguage />
          <FeedbackProvider>
            <Shell />
          </FeedbackProvider>
        </SWRConfig>
      </RouterProvider>
    </I18nContext.Provider>
  );
}

/**
 * A new language means new reason names and problem texts from the server: every read
 * on screen is asked again in it, in place. The pages stay mounted, so what the operator
 * was doing (a note being written, a selection, a filter) survives the switch; a read
 * not on screen is asked again when its page opens.
 */
function ReadAgainInLanguage() {
  const { lang } = useI18n();
  const { mutate } = useSWRConfig();
  const shown = useRef(lang);
  useEffect(() => {
    if (shown.current === lang) return;
    shown.current = lang;
    void mutate(() => true);
  }, [lang, mutate]);
  return null;
}

type State = { kind: 'loading' } | { kind: 'signed-out' } | { kind: 'signed-in'; operator: Operator };

function Shell() {
  const [state, setState] = useState<State>({ kind: 'loading' });
  const [tenantId, setTenantId] = useState('');
  const location = useLocation();
  const feedback = useFeedback();
  const { t } = useI18n();

  const enter = (operator: Operator) => {
    setTenantId(rememberedTenant(operator));
    setState({ kind: 'signed-in', operator });
  };

  useEffect(() => {
    whenUnauthorized(() => setState({ kind: 'signed-out' }));
    loadSession().then(
      (operator) => (operator ? enter(operator) : setState({ kind: 'signed-out' })),
      (err: unknown) => {
        feedback.error(err);
        setState({ kind: 'signed-out' });
      },
    );
  }, []);

  useEffect(() => {
    if (state.kind === 'signed-out' && location.path !== '/sign-in') {
      const back = location.path === '/' ? '' : `?next=${encodeURIComponent(location.path + (location.query.toString() ? `?${location.query.toString()}` : ''))}`;
      navigate(`/sign-in${back}`, { replace: true });
    }
    if (state.kind === 'signed-in' && (location.path === '/sign-in' || location.path === '/')) {
      const next = location.query.get('next');
      navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/inbox', { replace: true });
    }
  }, [state.kind, location.path]);

  if (state.kind === 'loading') return <Loading />;
  if (state.kind === 'signed-out') return <SignInPage onSignedIn={enter} />;

  const operator = state.operator;
  const session: SessionState = {
    operator,
    tenantId,
    setTenant: (id) => {
      rememberTenant(id);
      setTenantId(id);
    },
    signOut: () => {
      const done = () => {
        setState({ kind: 'signed-out' });
        feedback.ok(t('signout.done'));
      };
      signOut().then(done, (err: unknown) => {
        feedback.error(err);
        done();
      });
    },
    role: roleIn(operator, tenantId) ?? 'viewer',
    can: (ability: Ability, tenant?: string) => canIn(operator, tenant ?? tenantId, ability),
  };
  return (
    <SessionContext.Provider value={session}>
      <Layout>
        <Routes />
      </Layout>
    </SessionContext.Provider>
  );
}

const NAV: { to: string; key: MessageKey; needs?: Ability }[] = [
  { to: '/inbox', key: 'nav.inbox' },
  { to: '/orders', key: 'nav.orders' },
  { to: '/map', key: 'nav.map' },
  { to: '/partners', key: 'nav.partners', needs: 'triage' },
  { to: '/teams', key: 'nav.teams' },
  { to: '/operators', key: 'nav.operators', needs: 'administer' },
  { to: '/audit', key: 'nav.audit' },
  { to: '/reports', key: 'nav.reports' },
];

function Layout({ children }: { children: ComponentChildren }) {
  const session = useSession();
  const { t, lang, setLang } = useI18n();
  const location = useLocation();
  const grants = session.operator.grants;
  // "My team today" leads the navigation of an operator who is on a team of this city.
  const myTeams = useApi('listOperatorTeams', { path: { operatorId: 'me' }, query: { tenantId: session.tenantId } });
  const onATeam = (myTeams.data?.items.length ?? 0) > 0;
  return (
    <div class="shell">
      <a class="skip" href="#main">
        {t('nav.main')}
      </a>
      <header class="topbar">
        <div class="brand">
          <img class="logo" src={logo} alt="" width={28} height={28} />
          <span>{t('app.name')}</span>
        </div>
        <GlobalSearch />
        <div class="topbar-controls">
          <label class="inline">
            <span>{t('tenant.label')}</span>
            <select value={session.tenantId} onChange={(e) => session.setTenant((e.target as HTMLSelectElement).value)} data-testid="tenant-switcher">
              {grants.map((g) => (
                <option key={g.tenantId} value={g.tenantId}>
                  {g.tenantName}
                </option>
              ))}
            </select>
          </label>
          <span class="role" data-testid="role">
            {t(`role.${session.role}` as MessageKey)}
          </span>
          <label class="inline">
            <span class="sr-only">{t('lang.label')}</span>
            <select value={lang} onChange={(e) => setLang((e.target as HTMLSelectElement).value as Language)} data-testid="language">
              <option value="pt-BR">Português</option>
              <option value="en">English</option>
            </select>
          </label>
          <span class="who">{session.operator.name}</span>
          <button type="button" class="secondary" onClick={session.signOut}>
            {t('signout')}
          </button>
        </div>
      </header>
      <nav class="sidenav" aria-label={t('nav.main')}>
        {onATeam ? (
          <Link to="/my-team" class="navlink" aria-current={location.path.startsWith('/my-team') ? 'page' : undefined}>
            {t('crew.nav')}
          </Link>
        ) : null}
        {NAV.filter((n) => !n.needs || session.can(n.needs)).map((n) => (
          <Link key={n.to} to={n.to} class="navlink" aria-current={location.path.startsWith(n.to) ? 'page' : undefined}>
            {t(n.key)}
          </Link>
        ))}
      </nav>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

function Routes() {
  const { path } = useLocation();
  let params: Record<string, string> | null;
  if (match('/inbox', path)) return <InboxPage />;
  if ((params = match('/alerts/:id', path))) return <AlertPage key={params.id} id={params.id!} />;
  if (match('/orders', path)) return <OrdersPage />;
  if ((params = match('/orders/:id', path))) return <OrderPage key={params.id} id={params.id!} />;
  if (match('/map', path)) return <MapPage />;
  if ((params = match('/poles/:code', path))) return <PolePage key={params.code} code={params.code!} />;
  if (match('/partners', path)) return <PartnersPage />;
  if ((params = match('/partners/:code', path))) return <PartnerPage key={params.code} code={params.code!} />;
  if (match('/teams', path)) return <TeamsPage />;
  if (match('/operators', path)) return <OperatorsPage />;
  if (match('/audit', path)) return <AuditPage />;
  if (match('/reports', path)) return <ReportsPage />;
  if (match('/my-team', path)) return <MyTeamPage />;
  return <NotFoundPage />;
}

function NotFoundPage() {
  const { t } = useI18n();
  return (
    <section class="panel error-panel" data-testid="not-found">
      <h1>{t('common.notFound')}</h1>
      <p>{t('common.notFound.detail')}</p>
      <Link to="/inbox">{t('nav.inbox')}</Link>
    </section>
  );
}
