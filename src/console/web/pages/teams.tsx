/** The internal reasons and the field teams of the current city; a city-admin adds them. */
import { useState } from 'preact/hooks';
import { call, useApi, type types } from '../api.js';
import { useAction } from '../feedback.js';
import { useI18n } from '../i18n.js';
import { useSession } from '../session.js';
import { Choice, LoadError, Loading, Page, Table } from '../ui.js';
import { MaterialsSection } from './completion.js';
import { AlertGroupingSettings } from './alert-grouping-settings.js';

export function TeamsPage() {
  const { t, dateTime } = useI18n();
  const { tenantId, can } = useSession();
  const teams = useApi('listTeams', { query: { tenantId } });
  const [name, setName] = useState('');
  const create = useAction(
    () => call('createTeam', { body: { tenantId, name: name.trim() } }),
    () => {
      setName('');
      void teams.mutate();
      return t('teams.created');
    },
  );
  return (
    <Page title={t('teams.title')}>
      <section class="panel">
        <h2>{t('teams.teams')}</h2>
        {teams.error ? <LoadError error={teams.error} /> : null}
        {!teams.data && !teams.error ? <Loading /> : null}
        {teams.data && teams.data.items.length === 0 ? <p class="muted">{t('teams.empty')}</p> : null}
        {teams.data && teams.data.items.length > 0 ? (
          <Table testid="teams" headers={[t('col.name'), t('col.created')]}>
                {teams.data.items.map((team) => (
                  <tr key={team.id}>
                    <td>{team.name}</td>
                    <td>{dateTime(team.createdAt)}</td>
                  </tr>
                ))}
          </Table>
        ) : null}
        {can('administer') ? (
          <form
            class="row"
            onSubmit={(e) => {
              e.preventDefault();
              void create.run();
            }}
          >
            <label>
              <span>{t('teams.new')}</span>
              <input value={name} required maxLength={200} onInput={(e) => setName((e.target as HTMLInputElement).value)} data-testid="team-name" />
            </label>
            <button type="submit" disabled={create.busy || !name.trim()}>
              {t('common.save')}
            </button>
          </form>
        ) : null}
      </section>
      {teams.data && teams.data.items.length > 0 ? (
        <section class="panel" data-testid="team-members">
          <h2>{t('crew.members')}</h2>
          {teams.data.items.map((team) => (
            <TeamMembers key={team.id} team={team} />
          ))}
        </section>
      ) : null}
      <Reasons />
      <MaterialsSection />
      <AlertGroupingSettings />
    </Page>
  );
}

/** A team's crew: its members, and for a city-admin adding one by e-mail and removing one. */
function TeamMembers({ team }: { team: types.AdminTeam }) {
  const { t } = useI18n();
  const { can } = useSession();
  const members = useApi('listTeamMembers', { path: { teamId: team.id } });
  const [email, setEmail] = useState('');
  const add = useAction(
    () => call('addTeamMember', { path: { teamId: team.id, operatorId: email.trim() } }),
    () => {
      setEmail('');
      void members.mutate();
      return t('crew.members.added');
    },
  );
  const remove = useAction(
    (operatorId: string) => call('removeTeamMember', { path: { teamId: team.id, operatorId } }),
    () => {
      void members.mutate();
      return t('crew.members.removed');
    },
  );
  const admin = can('administer', team.tenantId);
  return (
    <div class="team-members" data-testid="team-members-of">
      <h3>{team.name}</h3>
      {members.error ? <LoadError error={members.error} /> : null}
      {members.data && members.data.items.length === 0 ? <p class="muted">{t('crew.members.none')}</p> : null}
      <ul class="members">
        {(members.data?.items ?? []).map((m) => (
          <li key={m.operatorId}>
            <span>
              {m.name} <span class="muted small">{m.email}</span>
            </span>
            {admin ? (
              <button type="button" class="secondary" disabled={remove.busy} aria-label={t('crew.members.removeLabel', { name: m.name, team: team.name })} onClick={() => void remove.run(m.operatorId)}>
                {t('crew.members.remove')}
              </button>
            ) : null}
          </li>
        ))}
      </ul>
      {admin ? (
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            if (email.trim()) void add.run();
          }}
        >
          <label>
            <span>{t('crew.members.add')}</span>
            <input type="email" value={email} required maxLength={254} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} data-testid="member-email" />
          </label>
          <button type="submit" disabled={add.busy || !email.trim()}>
            {t('crew.members.addButton')}
          </button>
        </form>
      ) : null}
    </div>
  );
}

const PRIORITIES = ['Low', 'Medium', 'High', 'Critical'] as const;

function Reasons() {
  const { t, lang } = useI18n();
  const { tenantId, can } = useSession();
  const reasons = useApi('listReasons', { path: { tenantId } });
  const [code, setCode] = useState('');
  const [namePt, setNamePt] = useState('');
  const [nameEn, setNameEn] = useState('');
  const [priority, setPriority] = useState<(typeof PRIORITIES)[number]>('Medium');
  const [slaHours, setSlaHours] = useState('24');
  const create = useAction(
    () => call('createReason', { path: { tenantId }, body: { code: code.trim(), namePt: namePt.trim(), nameEn: nameEn.trim(), priority, slaHours: Number(slaHours) } }),
    () => {
      setCode('');
      setNamePt('');
      setNameEn('');
      void reasons.mutate();
      return t('reasons.created');
    },
  );
  return (
    <section class="panel">
      <h2>{t('teams.reasons')}</h2>
      {reasons.error ? <LoadError error={reasons.error} /> : null}
      {!reasons.data && !reasons.error ? <Loading /> : null}
      {reasons.data ? (
        <Table testid="reasons" headers={[t('reasons.code'), t('col.name'), t('col.priority'), t('reasons.sla')]}>
          {reasons.data.items.map((r) => (
            <tr key={r.code}>
              <td>
                <code>{r.code}</code>
              </td>
              <td>{lang === 'en' ? r.nameEn : r.namePt}</td>
              <td>{t(`priority.${r.priority}`)}</td>
              <td>{r.slaHours} h</td>
            </tr>
          ))}
        </Table>
      ) : null}
      {can('administer') ? (
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            void create.run();
          }}
        >
          <label>
            <span>{t('reasons.code')}</span>
            <input value={code} required pattern="[A-Za-z0-9_.\-]{1,64}" onInput={(e) => setCode((e.target as HTMLInputElement).value)} data-testid="reason-code" />
          </label>
          <label>
            <span>{t('reasons.namePt')}</span>
            <input value={namePt} required onInput={(e) => setNamePt((e.target as HTMLInputElement).value)} data-testid="reason-name-pt" />
          </label>
          <label>
            <span>{t('reasons.nameEn')}</span>
            <input value={nameEn} required onInput={(e) => setNameEn((e.target as HTMLInputElement).value)} data-testid="reason-name-en" />
          </label>
          <label>
            <span>{t('col.priority')}</span>
            <Choice value={priority} onChange={setPriority} options={PRIORITIES.map((p) => ({ value: p, label: t(`priority.${p}`) }))} />
          </label>
          <label>
            <span>{t('reasons.sla')}</span>
            <input type="number" min={1} value={slaHours} required onInput={(e) => setSlaHours((e.target as HTMLInputElement).value)} />
          </label>
          <button type="submit" disabled={create.busy}>
            {t('reasons.new')}
          </button>
        </form>
      ) : null}
    </section>
  );
}
