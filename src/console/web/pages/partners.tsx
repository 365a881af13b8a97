/**
 * The partners of the current city, each with what failed and waits for an operator
 * (dead deliveries, refused polled items, photo URLs that could not be fetched), so the
 * inbox's "partner problems" badge lands on the partners concerned (`?problems=1`).
 * Triagers and up: a triager redelivers from a partner's delivery log.
 */
import { useApiEach, useApi } from '../api.js';
import { useI18n } from '../i18n.js';
import { Link, navigate, useLocation } from '../router.js';
import { useSession } from '../session.js';
import { Badge, LoadError, Loading, Page, Table } from '../ui.js';

/** Dead deliveries counted per partner: the log's page is at most this long ("100+"). */
const DEAD_LIMIT = 100;

export function PartnersPage() {
  const { t } = useI18n();
  const { tenantId, can } = useSession();
  const { query } = useLocation();
  const problemsOnly = query.get('problems') === '1';
  const allowed = can('triage');
  const partners = useApi('listPartners', allowed ? { query: { tenantId } } : null);
  const codes = (partners.data?.items ?? []).map((p) => p.code);
  const dead = useApiEach('listWebhookDeliveries', partners.data ? codes.map((code) => ({ path: { code }, query: { status: 'dead' as const, limit: DEAD_LIMIT } })) : null);
  const rejected = useApiEach('listRejectedInboundItems', partners.data ? codes.map((code) => ({ path: { code }, query: { status: 'open' as const, pageSize: 1 } })) : null);
  const photos = useApi('listAttachmentFailures', allowed ? { path: { tenantId }, query: { limit: 100 } } : null);
  if (!allowed) return <Page title={t('partners.title')}>{<p class="empty">{t('common.noAccess')}</p>}</Page>;
  const counts = (code: string, i: number) => ({
    dead: dead.data?.[i]?.deliveries.length,
    rejected: rejected.data?.[i]?.total,
    photos: photos.data ? photos.data.items.filter((f) => f.partner === code && !f.dismissedAt).length : undefined,
  });
  const rows = (partners.data?.items ?? []).map((p, i) => ({ p, c: counts(p.code, i) })).filter(({ c }) => !problemsOnly || (c.dead ?? 0) + (c.rejected ?? 0) + (c.photos ?? 0) > 0);
  const count = (n: number | undefined, testid: string, max?: number) =>
    n === undefined ? <span class="muted">…</span> : n === 0 ? <span class="muted" data-testid={testid}>0</span> : <Badge kind="danger">{max !== undefined && n >= max ? `${max}+` : <span data-testid={testid}>{n}</span>}</Badge>;
  return (
    <Page title={t('partners.title')}>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label class="check">
          <input type="checkbox" checked={problemsOnly} onChange={() => navigate(problemsOnly ? '/partners' : '/partners?problems=1')} data-testid="partners-problems" />
          <span>{t('partners.problemsOnly')}</span>
        </label>
      </form>
      {partners.error ? <LoadError error={partners.error} /> : null}
      {!partners.data && !partners.error ? <Loading /> : null}
      {partners.data && partners.data.items.length === 0 ? <p class="empty">{t('partners.empty')}</p> : null}
      {partners.data && partners.data.items.length > 0 && rows.length === 0 ? <p class="empty">{t('partners.noProblems')}</p> : null}
      {rows.length > 0 ? (
        <Table
          testid="partners"
          headers={[t('col.partner'), t('partner.transport'), t('partners.col.dead'), t('partners.col.rejected'), t('partners.col.photos'), t('partner.keyPrefix'), t('partner.enabled')]}
        >
          {rows.map(({ p, c }) => (
            <tr key={p.id} data-partner={p.code}>
              <td>
                <Link to={`/partners/${encodeURIComponent(p.code)}`}>{p.code}</Link>
              </td>
              <td>{p.transport === 'polling' ? t('partners.transport.polling') : t('partners.transport.webhook')}</td>
              <td>{c.dead ? <Link to={`/partners/${encodeURIComponent(p.code)}?deliveries=dead`}>{count(c.dead, 'dead-count', DEAD_LIMIT)}</Link> : count(c.dead, 'dead-count')}</td>
              <td>{count(c.rejected, 'rejected-count')}</td>
              <td>{count(c.photos, 'photos-count')}</td>
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
