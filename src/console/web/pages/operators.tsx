/**
 * Operators and tokens. A city-admin sees and revokes the tokens that reach their
 * cities; a platform admin also sees every operator and their roles.
 */
import { call, useApi } from '../api.js';
import { useAction } from '../feedback.js';
import { useI18n, type MessageKey } from '../i18n.js';
import { useSession } from '../session.js';
import { Badge, LoadError, Loading, Page } from '../ui.js';

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
        <div class="table-wrap">
          <table class="table" data-testid="operators">
            <thead>
              <tr>
                <th scope="col">{t('col.name')}</th>
                <th scope="col">{t('signin.email')}</th>
                <th scope="col">{t('operators.roles')}</th>
                <th scope="col">{t('col.created')}</th>
              </tr>
            </thead>
            <tbody>
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
                  <td>{dateTime(o.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
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
        <div class="table-wrap">
          <table class="table" data-testid="tokens">
            <thead>
              <tr>
                <th scope="col">{t('col.name')}</th>
                <th scope="col">{t('partner.keyPrefix')}</th>
                <th scope="col">{t('operators.owner')}</th>
                <th scope="col">{t('operators.expires')}</th>
                <th scope="col">
                  <span class="sr-only">{t('operators.revoke')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
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
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
