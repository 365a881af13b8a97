/**
 * The city's rules for grouping Pending alerts (duplicates and suspected supply
 * faults): read by everyone on the city, changed by a city-admin
 * (PUT /api/admin/tenants/{tenantId}/alert-grouping, audited).
 */
import { useEffect, useState } from 'preact/hooks';
import { call, useApi, type types } from '../api.js';
import { useAction } from '../feedback.js';
import { useI18n, type MessageKey } from '../i18n.js';
import { useSession } from '../session.js';
import { LoadError, Loading } from '../ui.js';

type Key = keyof Required<types.AlertGrouping>;
const FIELDS: readonly [Key, MessageKey, number, number][] = [
  ['duplicateRadiusMeters', 'dup.settings.duplicateRadius', 1, 1000],
  ['duplicateWindowHours', 'dup.settings.duplicateWindow', 1, 720],
  ['supplyFaultRadiusMeters', 'dup.settings.supplyRadius', 1, 5000],
  ['supplyFaultWindowMinutes', 'dup.settings.supplyWindow', 1, 1440],
];

export function AlertGroupingSettings() {
  const { t } = useI18n();
  const { tenantId, can } = useSession();
  const settings = useApi('getTenantAlertGrouping', { path: { tenantId } });
  const [values, setValues] = useState<Record<Key, string>>({ duplicateRadiusMeters: '', duplicateWindowHours: '', supplyFaultRadiusMeters: '', supplyFaultWindowMinutes: '' });
  useEffect(() => {
    const d = settings.data;
    if (d) setValues(Object.fromEntries(FIELDS.map(([k]) => [k, String(d[k] ?? '')])) as Record<Key, string>);
  }, [settings.data]);
  const save = useAction(
    () => call('setTenantAlertGrouping', { path: { tenantId }, body: Object.fromEntries(FIELDS.map(([k]) => [k, Number(values[k])])) as types.AlertGrouping }),
    (next) => {
      void settings.mutate(next, { revalidate: false });
      return t('dup.settings.saved');
    },
  );
  const admin = can('administer', tenantId);
  return (
    <section class="panel" data-testid="alert-grouping">
      <h2>{t('dup.settings.title')}</h2>
      <p class="muted small">{t('dup.settings.help')}</p>
      {settings.error ? <LoadError error={settings.error} retry={() => void settings.mutate()} /> : null}
      {!settings.data && !settings.error ? <Loading /> : null}
      {settings.data ? (
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            void save.run();
          }}
        >
          {FIELDS.map(([k, label, min, max]) => (
            <label key={k}>
              <span>{t(label)}</span>
              <input
                type="number"
                inputMode="numeric"
                min={min}
                max={max}
                step={1}
                required
                disabled={!admin}
                value={values[k]}
                onInput={(e) => setValues({ ...values, [k]: (e.target as HTMLInputElement).value })}
                data-testid={`grouping-${k}`}
              />
            </label>
          ))}
          {admin ? (
            <button type="submit" disabled={save.busy} data-testid="grouping-save">
              {t('dup.settings.save')}
            </button>
          ) : null}
        </form>
      ) : null}
    </section>
  );
}
