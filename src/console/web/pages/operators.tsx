/**
 * Operators and tokens. A city-admin sees and revokes the tokens that reach their
 * cities; a platform admin also sees every operator and their roles.
 */
import { call, useApi } from '../api.js';
import { useAction } from '../feedback.js';
import { useI18n, type MessageKey } from '../i18n.js';
import { useSession } from '../session.js';
import { Badge, LoadError, Loading, Page, Table } from '../ui.js';

export function OperatorsPage() {
  const { t } = useI18n();
  const { can } = useSession();
  if (!can('administer')) return <Page title={t('operators.title')}>{<p class="empty">{t('common.noAccess')}</p>}</Page>;
  return (
    <Page title={t('operators.title')}>
      {can('platform') ? <Operators /> : null}
      <Tokens />
    </Page>
  );
}

function Operators() {
  const { t, dateTime } = useI18n();
  const operators = useApi('listOperators', {});
  return (
    <section class="panel">
      <h2>{t('operators.people')}</h2>
      {operators.error ? <LoadError error={operators.error} /> : null}
      {!operators.data && !operators.error ? <Loading /> : null}
      {operators.data ? (
        <Table testid="operators" headers={[t('col.name'), t('signin.email'), t('operators.roles'), t('crew.operatorTeams'), t('col.created')]}>
              {operators.data.items.map((o) => (
                <tr key={o.id}>
                  <td>
                    {o.name} {o.disabledAt ? <Badge kind="danger">{t('operators.disabled')}</Badge> : null}
                  </td>
                  <td>{o.email}</td>
                  <td>
                    {o.platformAdmin ? <Badge kind="count">{t('role.platform-admin')}</Badge> : null}
                    {o.grants.map((g) => (
                      <div key={g.tenantId}>
                        {g.tenantName}: {t(`role.${g.role}` as MessageKey)}
                      </div>
                    ))}
                  </td>
                  <td>
                    <OperatorTeams operatorId={o.id} />
                  </td>
                  <td>{dateTime(o.createdAt)}</td>
                </tr>
              ))}
        </Table>
      ) : null}
    </section>
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
