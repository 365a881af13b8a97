/** Attachment URLs Lumen could not fetch (after its retries), for one partner: retry or dismiss. */
import { call, useApi } from '../api.js';
import { useAction } from '../feedback.js';
import { useI18n } from '../i18n.js';
import { Link } from '../router.js';
import { LoadError, Table } from '../ui.js';

export function AttachmentFailures({ tenantId, partner }: { tenantId: string; partner: string }) {
  const { t, dateTime } = useI18n();
  const list = useApi('listAttachmentFailures', { path: { tenantId }, query: { limit: 100 } });
  const retry = useAction(
    (id: string) => call('retryAttachmentFailure', { path: { failureId: id } }),
    () => {
      void list.mutate();
      return t('failures.retried');
    },
  );
  const dismiss = useAction(
    (id: string) => call('dismissAttachmentFailure', { path: { failureId: id } }),
    () => {
      void list.mutate();
      return t('failures.dismissed');
    },
  );
  const items = (list.data?.items ?? []).filter((f) => f.partner === partner);
  return (
    <section class="panel">
      <h2>{t('failures.title')}</h2>
      {list.error ? <LoadError error={list.error} /> : null}
      {list.data && items.length === 0 ? <p class="muted">{t('failures.empty')}</p> : null}
      {items.length > 0 ? (
        <Table testid="attachment-failures" headers={[t('col.when'), t('col.number'), 'URL', t('col.result'), { hidden: t('common.retry') }]}>
          {items.map((f) => (
            <tr key={f.id}>
              <td class="nowrap">{dateTime(f.createdAt)}</td>
              <td>
                <Link to={`/alerts/${f.alertId}`}>#{f.alertNumber}</Link>
              </td>
              <td>
                <code>{f.url}</code>
              </td>
              <td class="small">
                {f.errorCode}: {f.detail}
              </td>
              <td>
                <div class="row">
                  <button type="button" class="secondary small" disabled={retry.busy} onClick={() => void retry.run(f.id)}>
                    {t('common.retry')}
                  </button>
                  <button type="button" class="secondary small" disabled={dismiss.busy} onClick={() => void dismiss.run(f.id)}>
                    {t('failures.dismiss')}
                  </button>
                </div>
              </td>
            </tr>
          ))}
        </Table>
      ) : null}
    </section>
  );
}
