/**
 * A partner's reason codes: each code the partner sent, how many alerts carry it (how
 * many wait), the internal reason it maps to; map or unmap it, and apply a mapping to
 * the Pending alerts that arrived before it (reclassifies them). Rows keep their place
 * (by the partner's code) when a save changes a code's mapping; "apply" is the row's
 * main action only while some Pending alert would change.
 */
import { useState } from 'preact/hooks';
import { call, useApi } from '../api.js';
import { useAction } from '../feedback.js';
import { useI18n } from '../i18n.js';
import { LoadError, Loading, Table } from '../ui.js';
import { ReasonPicker } from '../reason-picker.js';

export function ReasonMapping({ code, tenantId }: { code: string; tenantId: string }) {
  const { t } = useI18n();
  const codes = useApi('listPartnerReasonCodes', { path: { code } });
  return (
    <section class="panel">
      <h2>{t('mapping.title')}</h2>
      {codes.error ? <LoadError error={codes.error} /> : null}
      {!codes.data && !codes.error ? <Loading /> : null}
      {codes.data && codes.data.items.length === 0 ? <p class="muted">{t('mapping.empty')}</p> : null}
      {codes.data && codes.data.items.length > 0 ? (
        <Table testid="reason-mapping" headers={[t('col.partnerReason'), t('mapping.alerts'), t('mapping.reason'), { hidden: t('mapping.apply') }]}>
          {[...codes.data.items].sort((a, b) => (a.partnerCode < b.partnerCode ? -1 : a.partnerCode > b.partnerCode ? 1 : 0)).map((c) => (
            <MappingRow key={c.partnerCode} partner={code} tenantId={tenantId} item={c} onChanged={() => void codes.mutate()} />
          ))}
        </Table>
      ) : null}
    </section>
  );
}

function MappingRow({
  partner,
  tenantId,
  item,
  onChanged,
}: {
  partner: string;
  tenantId: string;
  item: { partnerCode: string; reasonCode: string | null; description?: string | null; alerts: number; pendingAlerts: number; alertsToApply: number };
  onChanged: () => void;
}) {
  const { t } = useI18n();
  const [choice, setChoice] = useState(item.reasonCode ?? '');
  // What the partner means by the code, kept with its mapping.
  const [description, setDescription] = useState(item.description ?? '');
  const changed = choice !== (item.reasonCode ?? '') || (choice !== '' && description.trim() !== (item.description ?? ''));
  const save = useAction(
    async (): Promise<void> => {
      if (choice) await call('mapPartnerReasonCode', { path: { code: partner, partnerCode: item.partnerCode }, body: { reasonCode: choice, description: description.trim() || null } });
      else await call('unmapPartnerReasonCode', { path: { code: partner, partnerCode: item.partnerCode } });
    },
    () => {
      onChanged();
      return t('mapping.saved', { code: item.partnerCode });
    },
  );
  const apply = useAction(
    () => call('applyPartnerReasonMapping', { path: { code: partner, partnerCode: item.partnerCode } }),
    (r) => {
      onChanged();
      return r.reclassified === 1 ? t('mapping.applied.one') : t('mapping.applied', { count: r.reclassified });
    },
  );
  return (
    <tr data-code={item.partnerCode}>
      <td>
        <code>{item.partnerCode}</code> {item.reasonCode === null ? <span class="badge badge-warn">{t('mapping.unmapped')}</span> : null}
        <label class="mapping-description">
          <span class="sr-only">{t('mapping.description', { code: item.partnerCode })}</span>
          <input
            value={description}
            maxLength={500}
            placeholder={t('mapping.description.placeholder')}
            onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
            data-testid="mapping-description"
          />
        </label>
      </td>
      <td>
        {item.alerts} ({t('mapping.pending', { n: item.pendingAlerts })})
      </td>
      <td>
        <div class="row">
          <ReasonPicker tenantId={tenantId} value={choice} onChange={setChoice} emptyLabel={t('mapping.unmapped')} label={t('mapping.reason')} hideLabel testid="mapping-select" />
          <button type="button" class="secondary small" disabled={save.busy || !changed} onClick={() => void save.run()} data-testid="mapping-save">
            {t('common.save')}
          </button>
        </div>
      </td>
      <td>
        {item.reasonCode && item.pendingAlerts > 0 ? (
          <button
            type="button"
            class={item.alertsToApply > 0 ? 'small' : 'secondary small'}
            disabled={apply.busy || item.alertsToApply === 0}
            title={item.alertsToApply === 1 ? t('mapping.apply.one') : item.alertsToApply > 0 ? t('mapping.apply.count', { n: item.alertsToApply }) : t('mapping.apply.nothing')}
            onClick={() => void apply.run()}
            data-testid="mapping-apply"
          >
            {t('mapping.apply')}
          </button>
        ) : null}
      </td>
    </tr>
  );
}
