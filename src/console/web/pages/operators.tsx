/** Operators and their tokens (city-admin for their cities, platform-admin for all). */
import { useI18n } from '../i18n.js';
import { useSession } from '../session.js';
import { Page } from '../ui.js';

export function OperatorsPage() {
  const { t } = useI18n();
  const { can, operator } = useSession();
  if (!can('administer')) return <Page title={t('operators.title')}>{<p class="empty">{t('common.noAccess')}</p>}</Page>;
  return (
    <Page title={t('operators.title')}>
      <section class="panel">
        <dl class="fields">
          <div class="field">
            <dt>{t('col.name')}</dt>
            <dd>{operator.name}</dd>
          </div>
        </dl>
        <p class="muted">{t('common.notAvailable')}</p>
      </section>
    </Page>
  );
}
