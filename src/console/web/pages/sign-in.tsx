import { useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import logo from '../favicon.svg';
import { useI18n, type Language } from '../i18n.js';
import { signIn, type Operator } from '../session.js';

/** Email and password against POST /api/admin/session; the session lives in an HttpOnly cookie. */
export function SignInPage({ onSignedIn }: { onSignedIn: (operator: Operator) => void }) {
  const { t, lang, setLang } = useI18n();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<{ title: string; detail: string } | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      onSignedIn(await signIn(email, password));
    } catch (err) {
      setProblem(err instanceof ApiError ? { title: err.title, detail: err.detail } : { title: t('common.error'), detail: err instanceof Error ? err.message : String(err) });
      setBusy(false);
    }
  };

  return (
    <main class="signin" id="main">
      <form class="panel signin-form" onSubmit={submit} aria-labelledby="signin-title">
        <div class="brand big">
          <img class="logo" src={logo} alt="" width={28} height={28} />
          <span>{t('app.name')}</span>
        </div>
        <h1 id="signin-title">{t('signin.title')}</h1>
        <p class="muted">{t('app.console')}</p>
        <label>
          <span>{t('signin.email')}</span>
          <input type="email" name="email" autoComplete="username" required value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          <span>{t('signin.password')}</span>
          <input type="password" name="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword((e.target as HTMLInputElement).value)} />
        </label>
        {problem ? (
          <div class="form-error" role="alert" data-testid="signin-error">
            <strong>{problem.title}</strong> {problem.detail}
          </div>
        ) : null}
        <button type="submit" disabled={busy}>
          {busy ? t('signin.busy') : t('signin.submit')}
        </button>
        <label class="inline">
          <span>{t('lang.label')}</span>
          <select value={lang} onChange={(e) => setLang((e.target as HTMLSelectElement).value as Language)}>
            <option value="pt-BR">Português</option>
            <option value="en">English</option>
          </select>
        </label>
      </form>
    </main>
  );
}
