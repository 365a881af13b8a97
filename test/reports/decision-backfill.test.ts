/**
 * Migration 0113 on a database of the version before: every triage decision already
 * written gets its alert's city and the moment its alert last became Pending before it,
 * as the dashboard's read-time probe computed them; other history rows get neither.
 */
import { describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrator.js';
import { withDatabaseBefore } from '../support/database.js';

describe('migration 0113 (triage decisions)', () => {
  it('fills in the city and the last return to Pending of the decisions written before it', async () => {
    await withDatabaseBefore(113, async (old) => {
      const city = (await old.query<{ id: string }>(`INSERT INTO tenant (name) VALUES ('Porto Velho') RETURNING id`)).rows[0]!.id;
      const partner = (await old.query<{ id: string }>(`INSERT INTO external_system (tenant_id, code) VALUES ($1, 'APP-PORTO-VELHO-156') RETURNING id`, [city])).rows[0]!.id;
      const alert = (
        await old.query<{ id: string }>(
          `INSERT INTO alert (tenant_id, external_system_id, protocol_number, alert_number, status, requested_at, requester_name, reason_code, priority, sla_due_at, address_street, description, created_at)
           VALUES ($1, $2, 'PV-1', 1, 'Cancelled', now(), 'Francisca das Chagas Nascimento', 'EXTERNAL_OTHER', 'Medium', now() + interval '1 day', 'Avenida Sete de Setembro', 'Poste apagado', '2026-03-01T10:00:00Z')
           RETURNING id`,
          [city, partner],
        )
      ).rows[0]!.id;
      // Arrival, linked after 2 h, back to triage when the order was cancelled, discarded 5 h later.
      await old.query(
        `INSERT INTO alert_status_history (alert_id, from_status, to_status, actor, at) VALUES
           ($1, NULL, 'Pending', 'intake', '2026-03-01T10:00:00Z'),
           ($1, 'Pending', 'Linked', 'op', '2026-03-01T12:00:00Z'),
           ($1, 'Linked', 'Pending', 'op', '2026-03-02T09:00:00Z'),
           ($1, 'Pending', 'Cancelled', 'op', '2026-03-02T14:00:00Z')`,
        [alert],
      );

      const { applied } = await migrate(old);
      expect(applied).toContain('0113_triage_decisions');
      const { rows } = await old.query<{ from_status: string | null; to_status: string; tenant_id: string | null; pending_since: Date | null }>(
        `SELECT from_status, to_status, tenant_id, pending_since FROM alert_status_history WHERE alert_id = $1 ORDER BY id`,
        [alert],
      );
      expect(rows.map((r) => [r.from_status, r.to_status, r.tenant_id, r.pending_since?.toISOString() ?? null])).toEqual([
        [null, 'Pending', null, null],
        ['Pending', 'Linked', city, '2026-03-01T10:00:00.000Z'],
        ['Linked', 'Pending', null, null],
        ['Pending', 'Cancelled', city, '2026-03-02T09:00:00.000Z'],
      ]);
      // A decision written from now on gets them from the trigger; without them it is refused.
      await old.query(`ALTER TABLE alert_status_history DISABLE TRIGGER alert_status_history_decision`);
      const decision = old.query(`INSERT INTO alert_status_history (alert_id, from_status, to_status, actor) VALUES ($1, 'Pending', 'Linked', 'op')`, [alert]);
      await expect(decision).rejects.toThrow(/alert_status_history_decision_context/);
    });
  });
});
