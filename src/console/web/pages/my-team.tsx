/**
 * "Minha equipe hoje": the open orders of the operator's teams in the selected city, the
 * most urgent first (the server's order: Critical first, then by deadline), with the
 * planned visit and, when the phone allows its location, the distance to each.
 */
import { useState } from 'preact/hooks';
import { useApi, type types } from '../api.js';
import { distanceMetres, PlannedVisitText } from '../crew.js';
import { useI18n } from '../i18n.js';
import { Link } from '../router.js';
import { useSession } from '../session.js';
import { LoadError, Loading, Page, StatusBadge } from '../ui.js';

type Position = { lat: number; lon: number };

export function MyTeamPage() {
  const { t } = useI18n();
  const { tenantId } = useSession();
  const day = useApi('listMyTeamOrders', { query: { tenantId } }, { refreshInterval: 60_000 });
  const [here, setHere] = useState<Position | null>(null);
  const [locationOff, setLocationOff] = useState(false);
  const locate = () => {
    if (!('geolocation' in navigator)) return setLocationOff(true);
    navigator.geolocation.getCurrentPosition(
      (p) => {
        setLocationOff(false);
        setHere({ lat: p.coords.latitude, lon: p.coords.longitude });
      },
      () => setLocationOff(true),
      { enableHighAccuracy: true, timeout: 15_000, maximumAge: 60_000 },
    );
  };
  if (day.error) return <LoadError error={day.error} retry={() => void day.mutate()} />;
  if (!day.data) return <Loading />;
  const { teams, items } = day.data;
  return (
    <Page title={t('crew.title')}>
      {teams.length === 0 ? (
        <p class="muted" data-testid="my-team-none">
          {t('crew.noTeam')}
        </p>
      ) : (
        <>
          <p class="muted" data-testid="my-team-teams">
            {t('crew.teams', { teams: teams.map((x) => x.name).join(', ') })}
          </p>
          <div class="row">
            <button type="button" class="secondary" onClick={locate} data-testid="locate">
              {t('crew.locate')}
            </button>
            <span class="muted small">{locationOff ? t('crew.locationOff') : t('crew.locateHint')}</span>
          </div>
          {items.length === 0 ? <p class="muted">{t('crew.empty')}</p> : <p>{items.length === 1 ? t('crew.count.one') : t('crew.count', { count: items.length })}</p>}
          <ul class="my-team-list" data-testid="my-team">
            {items.map((o) => (
              <MyTeamOrder key={o.id} order={o} here={here} />
            ))}
          </ul>
        </>
      )}
    </Page>
  );
}

function MyTeamOrder({ order: o, here }: { order: types.AdminServiceOrder; here: Position | null }) {
  const { t, dateTime, lang } = useI18n();
  const km = new Intl.NumberFormat(lang, { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  const far = here && o.latitude !== null && o.longitude !== null ? distanceMetres(here, { lat: o.latitude, lon: o.longitude }) : null;
  return (
    <li data-testid="my-team-order">
      <div class="head">
        <Link to={`/orders/${o.id}`} class="inbox-link">
          <span class="num">{o.number}</span> — {o.address}
          {o.neighborhood ? `, ${o.neighborhood}` : ''}
        </Link>
        <span>
          <StatusBadge status={o.status} /> <span class="tag">{t(`priority.${o.priority}`)}</span>
        </span>
      </div>
      <div class="meta">
        <span class={o.overdue ? 'sla overdue' : 'sla'}>{o.overdue ? t('crew.pastDue', { when: dateTime(o.slaDueAt) }) : t('crew.due', { when: dateTime(o.slaDueAt) })}</span>
        {o.team ? <span>{o.team.name}</span> : null}
        {far !== null ? <span data-testid="distance">{far < 1000 ? t('crew.m', { m: Math.round(far / 10) * 10 }) : t('crew.km', { km: km.format(far / 1000) })}</span> : null}
      </div>
      {o.plannedVisit ? <PlannedVisitText visit={o.plannedVisit} testid="my-team-visit" labelled /> : null}
    </li>
  );
}
