/** The partners of the current city (city-admin). */
import { useApi } from '../api.js';
import { useI18n } from '../i18n.js';
import { Link } from '../router.js';
import { useSession } from '../session.js';
import { Badge, LoadError, Loading, Page, Table } from '../ui.js';

export function PartnersPage() {
  const { t } = useI18n();
  const { tenantId, can } = useSession();
  const partners = useApi('listPartners', can('administer') ? { query: { tenantId } } : null);
  if (!can('administer')) return <Page title={t('partners.title')}>{<p class="empty">{t('common.noAccess')}</p>}</Page>;
  return (
    <Page title={t('partners.title')}>
      {partners.error ? <LoadError error={partners.error} /> : null}
      {!partners.data && !partners.error ? <Loading /> : null}
      {partners.data && partners.data.items.length === 0 ? <p class="empty">{t('partners.empty')}</p> : null}
      {partners.data && partners.data.items.length > 0 ? (
        <Table testid="partners" headers={[t('col.partner'), t('partner.transport'), t('partner.keyPrefix'), t('partner.enabled')]}>
              {partners.data.items.map((p) => (
                <tr key={p.id}>
                  <td>
                    <Link to={`/partners/${encodeURIComponent(p.code)}`}>{p.code}</Link>
                  </td>
                  <td>{p.transport === 'polling' ? t('partners.transport.polling') : t('partners.transport.webhook')}</td>
                  <td>
                    <code>{p.keyPrefix ?? '—'}</code>
                  </td>
                  <td>{p.enabled ? <Badge kind="ok">{t('common.yes')}</Badge> : <Badge kind="danger">{t('common.no')}</Badge>}</td>
                </tr>
              ))}
        </Table>
      ) : null}
    </Page>
  );
}
