/**
 * Operators and tokens. A city-admin manages the operators of the cities it
 * administers (invite, grant and revoke a role, reset a password, disable and enable)
 * and sees and revokes the tokens that reach its cities; a platform admin does the
 * same for everyone, and may invite a platform admin. The API decides what each may
 * see and do (src/services/operators/city-scope.ts); this page offers only that.
 */
import { useState } from 'preact/hooks';
import { call, useApi, type types } from '../api.js';
import { useAction } from '../feedback.js';
import { useI18n, type MessageKey } from '../i18n.js';
import { useSession } from '../session.js';
import { Badge, LoadError, Loading, Page, Table } from '../ui.js';

const ROLES = ['viewer', 'triager', 'city-admin'] as const;
type Role = (typeof ROLES)[number];

export function OperatorsPage() {
  const { t } = useI18n();
  const { can } = useSession();
  if (!can('administer')) return <Page title={t('operators.title')}>{<p class="empty">{t('common.noAccess')}</p>}</Page>;
  return (
    <Page title={t('operators.title')}>
      <Operators />
      <Tokens />
    </Page>
  );
}

function RoleSelect({ value, onChange, testid, label }: { value: Role; onChange: (r: Role) => void; testid?: string; label?: string }) {
  const { t } = useI18n();
  return (
    <select value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value as Role)} data-testid={testid} aria-label={label}>
      {ROLES.map((r) => (
        <option key={r} value={r}>
          {t(`role.${r}` as MessageKey)}
        </option>
      ))}
    </select>
  );
}

function Operators() {
  const { t } = useI18n();
  const session = useSession();
  const operators = useApi('listOperators', {});
  const [password, setPassword] = useState<{ email: string; password: string } | null>(null);
  const cityName = session.operator.grants.find((g) => g.tenantId === session.tenantId)?.tenantName ?? '';
  const refresh = () => void operators.mutate();
  return (
    <section class="panel" data-testid="operators-panel">
      <h2>{t('operators.people')}</h2>
      <Invite cityName={cityName} onInvited={(made) => {
        refresh();
        if (made.initialPassword) setPassword({ email: made.operator.email, password: made.initialPassword });
      }} />
      {password ? (
        <div class="secret" role="status" data-testid="operator-password">
          <p>{t('opadmin.password.once', { email: password.email })}</p>
          <code data-testid="operator-new-password">{password.password}</code>
          <button type="button" class="secondary small" onClick={() => setPassword(null)}>
            {t('opadmin.password.done')}
          </button>
        </div>
      ) : null}
      {operators.error ? <LoadError error={operators.error} /> : null}
      {!operators.data && !operators.error ? <Loading /> : null}
      {operators.data ? (
        <ul class="operator-list" data-testid="operators">
          {operators.data.items.map((o) => (
            <OperatorCard key={o.id} operator={o} cityName={cityName} onChanged={refresh} onPassword={(pw) => setPassword({ email: o.email, password: pw })} />
          ))}
        </ul>
      ) : null}
    </section>
  );
}

function Invite({ cityName, onInvited }: { cityName: string; onInvited: (made: { operator: types.Operator; initialPassword?: string }) => void }) {
  const { t } = useI18n();
  const session = useSession();
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [platformAdmin, setPlatformAdmin] = useState(false);
  const invite = useAction(
    () => call('createOperator', { body: { email, name, grants: [{ tenantId: session.tenantId, role }], ...(platformAdmin ? { platformAdmin: true } : {}) } }),
    (made) => {
      setEmail('');
      setName('');
      setPlatformAdmin(false);
      onInvited(made);
      return t('opadmin.invited', { email: made.operator.email });
    },
  );
  return (
    <details class="invite" data-testid="operator-invite">
      <summary>{t('opadmin.invite', { city: cityName })}</summary>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void invite.run();
        }}
      >
        <label>
          <span>{t('field.name')}</span>
          <input value={name} required maxLength={200} onInput={(e) => setName((e.target as HTMLInputElement).value)} data-testid="invite-name" />
        </label>
        <label>
          <span>{t('field.email')}</span>
          <input type="email" value={email} required maxLength={254} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} data-testid="invite-email" />
        </label>
        <label>
          <span>{t('opadmin.roleIn', { city: cityName })}</span>
          <RoleSelect value={role} onChange={setRole} testid="invite-role" />
        </label>
        {session.can('platform') ? (
          <label class="check" data-testid="invite-platform-admin">
            <input type="checkbox" checked={platformAdmin} onChange={(e) => setPlatformAdmin((e.target as HTMLInputElement).checked)} />
            <span>{t('role.platform-admin')}</span>
          </label>
        ) : null}
        <div>
          <button type="submit" disabled={invite.busy} data-testid="invite-submit">
            {t('opadmin.invite.submit')}
          </button>
        </div>
      </form>
    </details>
  );
}

function OperatorCard({ operator: o, cityName, onChanged, onPassword }: { operator: types.Operator; cityName: string; onChanged: () => void; onPassword: (pw: string) => void }) {
  const { t, dateTime } = useI18n();
  const session = useSession();
  const [confirming, setConfirming] = useState(false);
  const [newRole, setNewRole] = useState<Role>('viewer');
  const grant = useAction(
    (tenantId: string, role: Role) => call('grantOperatorRole', { path: { operatorId: o.id, tenantId }, body: { role } }),
    () => {
      onChanged();
      return t('opadmin.granted', { name: o.name });
    },
  );
  const revoke = useAction(
    (tenantId: string) => call('revokeOperatorRole', { path: { operatorId: o.id, tenantId } }),
    () => {
      onChanged();
      return t('opadmin.revoked', { name: o.name });
    },
  );
  const reset = useAction(
    () => call('resetOperatorPassword', { path: { operatorId: o.id } }),
    (r) => {
      onPassword(r.password);
      onChanged();
      return t('opadmin.reset.done', { name: o.name });
    },
  );
  const disable = useAction(
    () => call(o.disabledAt ? 'enableOperator' : 'disableOperator', { path: { operatorId: o.id } }),
    () => {
      setConfirming(false);
      onChanged();
      return t(o.disabledAt ? 'opadmin.enabled' : 'opadmin.disabled', { name: o.name });
    },
  );
  const inCity = o.grants.some((g) => g.tenantId === session.tenantId);
  // One's own account: no way to lock oneself out from here (another admin can).
  const self = o.id === session.operator.id;
  const busy = grant.busy || revoke.busy || reset.busy || disable.busy;
  return (
    <li class="operator-card" data-testid="operator" data-email={o.email}>
      <div class="operator-head">
        <strong>{o.name}</strong> {o.disabledAt ? <Badge kind="danger">{t('operators.disabled')}</Badge> : null}
        {o.platformAdmin ? <Badge kind="count">{t('role.platform-admin')}</Badge> : null}
        <span class="muted small operator-email">{o.email}</span>
        <span class="muted small">{t('opadmin.since', { when: dateTime(o.createdAt) })}</span>
      </div>
      <div class="operator-teams small">
        <span class="muted">{t('crew.operatorTeams')}:</span> <OperatorTeams operatorId={o.id} />
      </div>
      <ul class="grant-list">
        {o.grants.map((g) => (
          <li key={g.tenantId} data-testid="grant" data-city={g.tenantName}>
            <span>{g.tenantName}</span>
            {self ? (
              <span>{t(`role.${g.role}` as MessageKey)}</span>
            ) : (
              <>
                <RoleSelect value={g.role as Role} onChange={(r) => void grant.run(g.tenantId, r)} testid="grant-role" label={t('opadmin.roleOf', { name: o.name, city: g.tenantName })} />
                <button type="button" class="secondary small" disabled={busy} onClick={() => void revoke.run(g.tenantId)} data-testid="grant-revoke">
                  {t('opadmin.revoke', { city: g.tenantName })}
                </button>
              </>
            )}
          </li>
        ))}
      </ul>
      {!inCity && !self && session.tenantId ? (
        <div class="grant-add">
          <label>
            <span>{t('opadmin.roleIn', { city: cityName })}</span>
            <RoleSelect value={newRole} onChange={setNewRole} testid="grant-add-role" />
          </label>
          <button type="button" class="secondary small" disabled={busy} onClick={() => void grant.run(session.tenantId, newRole)} data-testid="grant-add">
            {t('opadmin.grant', { city: cityName })}
          </button>
        </div>
      ) : null}
      {self ? (
        <p class="muted small">{t('opadmin.self')}</p>
      ) : o.rolesElsewhere ? (
        <p class="muted small" data-testid="operator-elsewhere">
          {t('opadmin.elsewhere')}
        </p>
      ) : (
        <div class="operator-actions">
          <button type="button" class="secondary small" disabled={busy} onClick={() => void reset.run()} data-testid="operator-reset">
            {t('opadmin.reset')}
          </button>
          {o.disabledAt ? (
            <button type="button" class="secondary small" disabled={busy} onClick={() => void disable.run()} data-testid="operator-enable">
              {t('opadmin.enable')}
            </button>
          ) : confirming ? (
            <>
              <span class="small">{t('opadmin.disable.confirm', { name: o.name })}</span>
              <button type="button" class="danger small" disabled={busy} onClick={() => void disable.run()} data-testid="operator-disable-confirm">
                {t('opadmin.disable.yes')}
              </button>
              <button type="button" class="secondary small" onClick={() => setConfirming(false)}>
                {t('opadmin.disable.no')}
              </button>
            </>
          ) : (
            <button type="button" class="secondary small" disabled={busy} onClick={() => setConfirming(true)} data-testid="operator-disable">
              {t('opadmin.disable')}
            </button>
          )}
        </div>
      )}
    </li>
  );
}

function Tokens() {
  const { t, dateTime } = useI18n();
  const tokens = useApi('listAdminTokens', {});
  const revoke = useAction(
    (id: string) => call('revokeAdminToken', { path: { tokenId: id } }),
    () => {
      void tokens.mutate();
      return t('operators.revoked');
    },
  );
  return (
    <section class="panel">
      <h2>{t('operators.tokens')}</h2>
      {tokens.error ? <LoadError error={tokens.error} /> : null}
      {!tokens.data && !tokens.error ? <Loading /> : null}
      {tokens.data && tokens.data.items.length === 0 ? <p class="muted">{t('operators.noTokens')}</p> : null}
      {tokens.data && tokens.data.items.length > 0 ? (
        <Table testid="tokens" headers={[t('col.name'), t('partner.keyPrefix'), t('operators.owner'), t('operators.expires'), { hidden: t('operators.revoke') }]}>
              {tokens.data.items.map((k) => (
                <tr key={k.id}>
                  <td>{k.name}</td>
                  <td>
                    <code>{k.keyPrefix}</code>
                  </td>
                  <td>{k.operator ? k.operator.email : k.scope}</td>
                  <td>{k.revokedAt ? <Badge kind="danger">{t('operators.revokedAt', { at: dateTime(k.revokedAt) })}</Badge> : dateTime(k.expiresAt)}</td>
                  <td>
                    {k.revokedAt ? null : (
                      <button type="button" class="secondary small" disabled={revoke.busy} onClick={() => void revoke.run(k.id)}>
                        {t('operators.revoke')}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
        </Table>
      ) : null}
    </section>
  );
}

/** The teams an operator belongs to, in the cities the caller sees. */
function OperatorTeams({ operatorId }: { operatorId: string }) {
  const { t } = useI18n();
  const teams = useApi('listOperatorTeams', { path: { operatorId } });
  if (!teams.data) return null;
  if (teams.data.items.length === 0) return <span class="muted">{t('crew.operatorTeams.none')}</span>;
  return (
    <ul class="plain" data-testid="operator-teams">
      {teams.data.items.map((team) => (
        <li key={team.id}>{team.name}</li>
      ))}
    </ul>
  );
}
