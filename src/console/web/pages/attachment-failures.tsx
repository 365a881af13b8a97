/**
 * Attachment URLs Lumen could not fetch (after its retries), for one partner: a triager
 * retries or dismisses one, and the row then shows what the retry found (stored, or the
 * new cause), when, and how many attempts the URL has had.
 */
import { useState } from 'preact/hooks';
import { call, useApi, type types } from '../api.js';
import { useAction } from '../feedback.js';
import { useI18n } from '../i18n.js';
import { Link } from '../router.js';
import { Badge, LoadError, Table } from '../ui.js';
import { attachmentErrorWords } from '../words.js';

/** What the last retry of a row found, at the time the answer came. */
interface Outcome {
  at: string;
  resolved: boolean;
  row: types.AttachmentFailure;
}

export function AttachmentFailures({ tenantId, partner, canAct }: { tenantId: string; partner: string; canAct: boolean }) {
  const { t, dateTime } = useI18n();
  const list = useApi('listAttachmentFailures', { path: { tenantId }, query: { limit: 100 } });
  const [outcomes, setOutcomes] = useState<ReadonlyMap<string, Outcome>>(new Map());
  const retry = useAction(
    async (row: types.AttachmentFailure) => ({ row, result: await call('retryAttachmentFailure', { path: { failureId: row.id } }) }),
    ({ row, result }) => {
      const next = result.failure ?? row;
      setOutcomes((prev) => new Map(prev).set(row.id, { at: new Date().toISOString(), resolved: result.resolved, row: next }));
      // A stored photo leaves the list; a new failure replaces its row (new cause, more attempts).
      if (result.failure) void list.mutate((d) => (d ? { ...d, items: d.items.map((f) => (f.id === row.id ? result.failure! : f)) } : d), { revalidate: false });
      return result.resolved ? t('failures.retried.stored') : t('failures.retried.failed', { attempts: next.attempts });
    },
  );
  const dismiss = useAction(
    (id: string) => call('dismissAttachmentFailure', { path: { failureId: id } }),
    () => {
      void list.mutate();
      return t('failures.dismissed');
    },
  );
  const listed = (list.data?.items ?? []).filter((f) => f.partner === partner);
  // A row whose retry stored the photo stays in view (saying so) until the page is left.
  const stored = [...outcomes.values()].filter((o) => o.resolved && o.row.partner === partner && !listed.some((f) => f.id === o.row.id)).map((o) => o.row);
  const items = [...listed, ...stored];
  return (
    <section class="panel">
      <h2>{t('failures.title')}</h2>
      {list.error ? <LoadError error={list.error} /> : null}
      {list.data && items.length === 0 ? <p class="muted">{t('failures.empty')}</p> : null}
      {items.length > 0 ? (
        <Table
          testid="attachment-failures"
          headers={[t('col.when'), t('col.number'), t('failures.url'), t('col.result'), t('col.attempts'), t('failures.lastRetry'), ...(canAct ? [{ hidden: t('common.retry') }] : [])]}
        >
          {items.map((f) => {
            const o = outcomes.get(f.id);
            return (
              <tr key={f.id} data-failure={f.id}>
                <td class="nowrap">{dateTime(f.createdAt)}</td>
                <td>
                  <Link to={`/alerts/${f.alertId}`}>#{f.alertNumber}</Link>
                </td>
                <td>
                  <code>{f.url}</code>
                </td>
                <td class="small" data-testid="failure-result">
                  {o?.resolved ? <Badge kind="ok">{t('failures.stored')}</Badge> : attachmentErrorWords(t, f.errorCode, f.detail)}
                </td>
                <td data-testid="failure-attempts">{f.attempts}</td>
                <td class="nowrap small" data-testid="failure-retried">
                  {o ? t(o.resolved ? 'failures.retriedAt.stored' : 'failures.retriedAt.failed', { when: dateTime(o.at) }) : '—'}
                </td>
                {canAct ? (
                  <td>
                    {o?.resolved ? null : (
                      <div class="row">
                        <button type="button" class="secondary small" disabled={retry.busy} onClick={() => void retry.run(f)}>
                          {t('common.retry')}
                        </button>
                        <button type="button" class="secondary small" disabled={dismiss.busy} onClick={() => void dismiss.run(f.id)}>
                          {t('failures.dismiss')}
                        </button>
                      </div>
                    )}
                  </td>
                ) : null}
              </tr>
            );
          })}
        </Table>
      ) : null}
    </section>
  );
}
