/**
 * Groups of Pending alerts (issues 23 §1, 24 §2): duplicates on one pole or close
 * together, and a suspected supply fault (telemetry lamp-outs on one circuit or close
 * together that went dark together). The inbox shows a group as one row that expands
 * to its alerts; the alert page shows it at the top. "Unir" makes one order for the
 * whole group through the bulk create-order (all or nothing), after a confirmation.
 */
import { useState } from 'preact/hooks';
import { ApiError, call, useApi, type types } from '../api.js';
import { useFeedback } from '../feedback.js';
import { useI18n, type Translate } from '../i18n.js';
import { Link } from '../router.js';
import { useSession } from '../session.js';
import { Badge, LoadError, Loading } from '../ui.js';
import { counted } from './inbox-bulk.js';

type Summary = NonNullable<types.AlertPage['groups']>[number];

/** The group in one line: "2 outros alertas pendentes neste poste", "… a até 25 m", or the supply fault. */
export function groupLine(t: Translate, g: { kind: types.AlertGroupKind; others: number; samePole: boolean; circuit: string | null; meters?: number | null }): string {
  if (g.kind === 'supply-fault') {
    const line = counted(t, 'dup.supply.others', g.others);
    return g.circuit ? `${line} · ${t('dup.supply.circuit', { circuit: g.circuit })}` : line;
  }
  if (g.samePole) return counted(t, 'dup.pole', g.others);
  if (g.meters !== undefined && g.meters !== null) return counted(t, 'dup.near', g.others, { meters: Math.max(1, Math.round(g.meters)) });
  return counted(t, 'dup.nearby', g.others);
}

function summaryOf(group: types.AlertGroup): { kind: types.AlertGroupKind; others: number; samePole: boolean; circuit: string | null; meters: number | null } {
  const circuits = new Set(group.items.map((i) => i.circuit));
  return {
    kind: group.kind ?? 'duplicate',
    others: group.items.length,
    samePole: group.items.every((i) => i.samePole),
    circuit: circuits.size === 1 ? [...circuits][0]! : null,
    meters: group.items.reduce<number | null>((m, i) => (i.distanceMeters === null ? m : Math.max(m ?? 0, i.distanceMeters)), null),
  };
}

/** In an inbox row: the group's line and a button that shows its alerts beneath. */
export function InboxGroup({ alertId, summary, onMerged }: { alertId: string; summary: Summary; onMerged: () => void }) {
  const { t } = useI18n();
  const [open, setOpen] = useState(false);
  const supply = summary.kind === 'supply-fault';
  return (
    <div class={`dup-inbox${supply ? ' dup-supply' : ''}`} data-testid="dup-group">
      <button type="button" class="dup-toggle secondary small" aria-expanded={open} onClick={() => setOpen(!open)} data-testid="dup-toggle">
        <span aria-hidden="true">{open ? '▾' : '▸'}</span> {supply ? <strong>{t('dup.supply.title')}</strong> : null} <span data-testid="dup-line">{groupLine(t, summary)}</span>
      </button>
      {open ? <GroupMembers alertId={alertId} onMerged={onMerged} /> : null}
    </div>
  );
}

/** At the top of the alert page, above the triage panel: nothing when the alert has no group. */
export function AlertGroupBanner({ alertId, onMerged }: { alertId: string; onMerged: () => void }) {
  const { t } = useI18n();
  const group = useApi('getAlertGroup', { path: { alertId } });
  if (!group.data || group.data.items.length === 0) return null;
  const s = summaryOf(group.data);
  const supply = s.kind === 'supply-fault';
  return (
    <section class={`panel dup-banner${supply ? ' dup-supply' : ''}`} aria-label={supply ? t('dup.supply.title') : t('dup.title')} data-testid="dup-banner">
      <h2>{supply ? t('dup.supply.title') : t('dup.title')}</h2>
      <p data-testid="dup-line">{groupLine(t, s)}</p>
      <GroupMembers alertId={alertId} onMerged={onMerged} />
    </section>
  );
}

/** The group's alerts (links to their pages) and the merge with its confirmation. */
function GroupMembers({ alertId, onMerged }: { alertId: string; onMerged: () => void }) {
  const { t } = useI18n();
  const { tenantId, can } = useSession();
  const feedback = useFeedback();
  const group = useApi('getAlertGroup', { path: { alertId } });
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  if (group.error) return <LoadError error={group.error} retry={() => void group.mutate()} />;
  if (!group.data) return <Loading />;
  const items = group.data.items;
  if (items.length === 0) return <p class="muted small">{t('dup.none')}</p>;
  const ids = [alertId, ...items.map((i) => i.alertId)];
  const merge = async () => {
    if (!tenantId) return;
    setBusy(true);
    try {
      const result = await call('bulkTriageAlerts', { body: { tenantId, alertIds: ids, action: 'create-order' } });
      feedback.ok(counted(t, 'dup.merged', result.handled, { number: result.serviceOrder?.number ?? '' }));
      setConfirming(false);
      void group.mutate();
      onMerged();
    } catch (err) {
      // A group that changed meanwhile (an alert left Pending) is refused whole: read it again.
      feedback.error(err instanceof ApiError && Array.isArray(err.problem.results) ? new ApiError(err.status, t('dup.changed.title'), t('dup.changed'), 'bulk') : err);
      setConfirming(false);
      void group.mutate();
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="dup-members">
      <ul class="dup-list" data-testid="dup-list">
        {items.map((i) => (
          <li key={i.alertId} data-alert-id={i.alertId}>
            <Link to={`/alerts/${i.alertId}`}>
              <span class="num">#{i.alertNumber}</span> <span class="desc">{i.description}</span>
            </Link>
            <span class="dup-where muted small">
              {i.address}
              {' · '}
              {i.samePole ? t('dup.samePole') : i.distanceMeters !== null ? t('dup.meters', { meters: Math.round(i.distanceMeters) }) : ''}
              {i.circuit ? ` · ${t('dup.supply.circuit', { circuit: i.circuit })}` : ''}
            </span>
            <Badge kind={i.priority.toLowerCase()}>{t(`priority.${i.priority}`)}</Badge>
          </li>
        ))}
      </ul>
      {tenantId && can('triage', tenantId) ? (
        confirming ? (
          <div class="confirm" role="alert" data-testid="dup-confirm">
            <p>{counted(t, 'dup.confirm', ids.length)}</p>
            <button type="button" disabled={busy} onClick={() => void merge()} data-testid="dup-confirm-yes">
              {t('dup.confirm.yes')}
            </button>{' '}
            <button type="button" class="secondary" disabled={busy} onClick={() => setConfirming(false)}>
              {t('dup.confirm.no')}
            </button>
          </div>
        ) : (
          <button type="button" onClick={() => setConfirming(true)} data-testid="dup-merge">
            {counted(t, 'dup.merge', ids.length)}
          </button>
        )
      ) : null}
    </div>
  );
}
