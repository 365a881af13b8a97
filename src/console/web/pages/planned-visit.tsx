/** The triager's form for an order's planned visit: a day and a time window, in the browser's time zone. */
import { useState } from 'preact/hooks';
import { call, type types } from '../api.js';
import { useAction } from '../feedback.js';
import { useI18n } from '../i18n.js';
import { useSession } from '../session.js';

const pad = (n: number) => String(n).padStart(2, '0');
const localDay = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
const localTime = (d: Date) => `${pad(d.getHours())}:${pad(d.getMinutes())}`;

export function PlannedVisitForm({ order: o, onChanged }: { order: types.AdminServiceOrder; onChanged: (o: types.AdminServiceOrder) => void }) {
  const { t } = useI18n();
  const { can } = useSession();
  const start = o.plannedVisit ? new Date(o.plannedVisit.startsAt) : new Date(Date.now() + 24 * 3600_000);
  const end = o.plannedVisit ? new Date(o.plannedVisit.endsAt) : null;
  const [day, setDay] = useState(localDay(start));
  const [from, setFrom] = useState(o.plannedVisit ? localTime(start) : '08:00');
  const [to, setTo] = useState(end ? localTime(end) : '12:00');
  const startsAt = new Date(`${day}T${from}`);
  const endsAt = new Date(`${day}T${to}`);
  const valid = !Number.isNaN(startsAt.getTime()) && !Number.isNaN(endsAt.getTime());
  const ordered = valid && endsAt.getTime() > startsAt.getTime();
  const save = useAction(
    () => call('setPlannedVisit', { path: { serviceOrderId: o.id }, body: { startsAt: startsAt.toISOString(), endsAt: endsAt.toISOString() } }),
    (next) => {
      onChanged(next);
      return t('crew.visit.saved');
    },
  );
  const clear = useAction(
    () => call('clearPlannedVisit', { path: { serviceOrderId: o.id } }),
    (next) => {
      onChanged(next);
      return t('crew.visit.cleared');
    },
  );
  if (!can('triage', o.tenantId) || !['OPEN', 'ASSIGNED', 'IN_PROGRESS'].includes(o.status)) return null;
  return (
    <form
      class="row"
      onSubmit={(e) => {
        e.preventDefault();
        if (ordered) void save.run();
      }}
      data-testid="visit-form"
    >
      <label>
        <span>{t('crew.visit.date')}</span>
        <input type="date" required value={day} onInput={(e) => setDay((e.target as HTMLInputElement).value)} data-testid="visit-day" />
      </label>
      <label>
        <span>{t('crew.visit.from')}</span>
        <input type="time" required value={from} onInput={(e) => setFrom((e.target as HTMLInputElement).value)} data-testid="visit-from" />
      </label>
      <label>
        <span>{t('crew.visit.to')}</span>
        <input type="time" required value={to} onInput={(e) => setTo((e.target as HTMLInputElement).value)} data-testid="visit-to" />
      </label>
      <button type="submit" disabled={save.busy || !ordered} data-testid="visit-save">
        {t('crew.visit.save')}
      </button>
      {o.plannedVisit ? (
        <button type="button" class="secondary" disabled={clear.busy} onClick={() => void clear.run()} data-testid="visit-clear">
          {t('crew.visit.clear')}
        </button>
      ) : null}
      {valid && !ordered ? (
        <p class="form-error" role="alert">
          {t('crew.visit.endBeforeStart')}
        </p>
      ) : null}
    </form>
  );
}
