/**
 * Triage at volume: the bar over the inbox that acts once on every marked alert
 * (POST /api/admin/alerts/bulk, all or nothing). A discard asks for its note and a
 * confirmation; a refused batch changes nothing and the refused rows are marked in the
 * list with the reason in words.
 */
import { useState } from 'preact/hooks';
import { ApiError, call, useApi, type types } from '../api.js';
import { useFeedback } from '../feedback.js';
import { TeamSelect } from '../ui.js';
import { useI18n, type MessageKey, type Translate } from '../i18n.js';
import { ReasonPicker } from '../reason-picker.js';

type Action = types.BulkTriageRequest['action'];
const ACTIONS: readonly Action[] = ['create-order', 'assign-team', 'link', 'reclassify', 'discard'];

/** "1 alert" / "3 alerts": the catalogue holds both forms of each counted message. */
export function counted(t: Translate, base: string, count: number, params: Record<string, string | number> = {}): string {
  return t(`${base}.${count === 1 ? 'one' : 'other'}` as MessageKey, { count, ...params });
}

/** A refused alert's reason, in words. */
export function refusalText(t: Translate, item: types.BulkTriageItem): string {
  if (item.reason === 'not-pending' && item.state) return t('bulk.refused.notPending', { state: t(`status.${item.state}` as MessageKey).toLowerCase() });
  return t('bulk.refused.notFound');
}

/**
 * The problems this bar can meet, in the catalogue's words: a team, reason or order the
 * city does not have (the API points at the field, in English) and a closed order (the
 * API names its status code). Anything else keeps the API's own title and detail, which
 * are already in the operator's language.
 */
function inWords(t: Translate, err: unknown): unknown {
  if (!(err instanceof ApiError)) return err;
  if (err.code === 'invalid-transition') return new ApiError(err.status, t('bulk.problem.title'), t('bulk.problem.orderClosed'), err.code);
  if (err.code !== 'validation-failed') return err;
  const fields: Record<string, MessageKey> = { '/serviceOrderId': 'bulk.problem.serviceOrderId', '/teamId': 'bulk.problem.teamId', '/reasonCode': 'bulk.problem.reasonCode', '/note': 'bulk.needs.note' };
  const known = err.errors.map((e) => fields[e.pointer]).filter((k): k is MessageKey => k !== undefined);
  if (known.length === 0 || known.length !== err.errors.length) return err;
  return new ApiError(err.status, t('bulk.problem.title'), [...new Set(known)].map((k) => t(k)).join(' '), err.code);
}

export function BulkBar({ tenantId, ids, onClear, onDone, onRefused }: { tenantId: string; ids: string[]; onClear: () => void; onDone: () => void; onRefused: (items: types.BulkTriageItem[]) => void }) {
  const { t } = useI18n();
  const feedback = useFeedback();
  const [action, setAction] = useState<Action>('create-order');
  const [teamId, setTeamId] = useState('');
  const [reasonCode, setReasonCode] = useState('');
  const [order, setOrder] = useState('');
  const [note, setNote] = useState('');
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const teams = useApi('listTeams', { query: { tenantId } });

  const missing: MessageKey | null =
    action === 'assign-team' && !teamId ? 'bulk.needs.team' : action === 'link' && !order.trim() ? 'bulk.needs.order' : action === 'reclassify' && !reasonCode ? 'bulk.needs.reason' : action === 'discard' && !note.trim() ? 'bulk.needs.note' : null;

  const send = async () => {
    setBusy(true);
    try {
      const body: types.BulkTriageRequest = {
        tenantId,
        alertIds: ids,
        action,
        ...((action === 'create-order' || action === 'assign-team') && teamId ? { teamId } : {}),
        ...((action === 'create-order' || action === 'assign-team' || action === 'reclassify') && reasonCode ? { reasonCode } : {}),
        ...(action === 'link' ? { serviceOrderId: order.trim() } : {}),
        ...(action === 'discard' ? { note: note.trim() } : {}),
      };
      const result = await call('bulkTriageAlerts', { body });
      feedback.ok(counted(t, `bulk.done.${action}`, result.handled, { number: result.serviceOrder?.number ?? '' }));
      setConfirming(false);
      setNote('');
      setOrder('');
      onDone();
    } catch (err) {
      const results = err instanceof ApiError && Array.isArray(err.problem.results) ? (err.problem.results as types.BulkTriageItem[]) : null;
      if (results) {
        const refused = results.filter((r) => r.outcome === 'refused');
        onRefused(refused);
        feedback.error(new ApiError(err instanceof ApiError ? err.status : 409, t('bulk.refused.title'), counted(t, 'bulk.refused', refused.length), 'bulk'));
      } else feedback.error(inWords(t, err));
      setConfirming(false);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="bulk-bar" aria-label={t('bulk.bar')} data-testid="bulk-bar">
      <div class="bulk-head">
        <strong data-testid="bulk-count">{counted(t, 'bulk.selected', ids.length)}</strong>
        <button type="button" class="secondary small" onClick={onClear}>
          {t('bulk.clear')}
        </button>
      </div>
      <div class="bulk-fields">
        <label>
          <span>{t('bulk.action')}</span>
          <select
            value={action}
            onChange={(e) => {
              setAction((e.target as HTMLSelectElement).value as Action);
              setConfirming(false);
            }}
            data-testid="bulk-action"
          >
            {ACTIONS.map((a) => (
              <option key={a} value={a}>
                {t(`bulk.action.${a}` as MessageKey)}
              </option>
            ))}
          </select>
        </label>
        {action === 'create-order' || action === 'assign-team' ? (
          <label>
            <span>{t(action === 'assign-team' ? 'bulk.assignTeam' : 'bulk.team')}</span>
            <TeamSelect teams={teams.data?.items ?? []} value={teamId} onChange={setTeamId} testid="bulk-team" />
          </label>
        ) : null}
        {action === 'create-order' || action === 'assign-team' || action === 'reclassify' ? (
          <ReasonPicker tenantId={tenantId} value={reasonCode} onChange={setReasonCode} emptyLabel={action === 'reclassify' ? t('bulk.reason.choose') : t('bulk.reason.keep')} label={t('bulk.reason')} testid="bulk-reason" />
        ) : null}
        {action === 'link' ? (
          <label>
            <span>{t('bulk.order')}</span>
            <input value={order} placeholder="OS-2026-00042" onInput={(e) => setOrder((e.target as HTMLInputElement).value)} data-testid="bulk-order" />
          </label>
        ) : null}
        {action === 'discard' ? (
          <label class="bulk-note">
            <span>{t('bulk.note')}</span>
            <textarea rows={2} maxLength={500} required value={note} onInput={(e) => setNote((e.target as HTMLTextAreaElement).value)} data-testid="bulk-note" />
          </label>
        ) : null}
      </div>
      {confirming ? (
        <div class="confirm" role="alert" data-testid="bulk-confirm">
          <p>{counted(t, 'bulk.confirm', ids.length)}</p>
          <button type="button" class="danger" disabled={busy} onClick={() => void send()} data-testid="bulk-confirm-yes">
            {t('bulk.confirm.yes')}
          </button>
          <button type="button" class="secondary" disabled={busy} onClick={() => setConfirming(false)}>
            {t('common.cancel')}
          </button>
        </div>
      ) : (
        <div class="bulk-apply">
          <button type="button" class={action === 'discard' ? 'danger' : ''} disabled={busy || missing !== null} onClick={() => (action === 'discard' ? setConfirming(true) : void send())} data-testid="bulk-apply">
            {counted(t, 'bulk.apply', ids.length)}
          </button>
          {missing ? <span class="muted small">{t(missing)}</span> : null}
        </div>
      )}
    </section>
  );
}
