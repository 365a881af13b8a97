/** The field teams of the current city; a city-admin creates them. */
import { useState } from 'preact/hooks';
import { call, useApi } from '../api.js';
import { useAction } from '../feedback.js';
import { useI18n } from '../i18n.js';
import { useSession } from '../session.js';
import { LoadError, Loading, Page, Table } from '../ui.js';

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
    </Page>
  );
}
