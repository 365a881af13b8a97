import { describe, expect, it } from 'vitest';
import { databaseWithClient } from '../support/database-client.js';

/** What 0013 changed in how pole and telegestor rows are written: ids and stamps. */
let tenantId: string;
const t = databaseWithClient(async (client) => {
  tenantId = (await t.client.query(`INSERT INTO tenant (name) VALUES ('Rows') RETURNING id`)).rows[0].id;
});

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const millisOf = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

describe('pole and telegestor rows (0013)', () => {
  it('get UUIDv7 ids carrying their creation time, in insertion order to the millisecond', async () => {
    const before = Date.now();
    const { rows } = await t.client.query<{ id: string; device: string }>(
      `WITH p AS (
         INSERT INTO pole (tenant_id, code, latitude, longitude) SELECT $1, 'V7-' || g, -23.5, -46.6 FROM generate_series(1, 2000) g RETURNING id, code
       )
       INSERT INTO telegestor (tenant_id, identifier, pole_id) SELECT $1, 'TG-' || code, id FROM p ORDER BY code
       RETURNING pole_id AS id, id AS device`,
      [tenantId],
    );
    const after = Date.now();
    for (const id of rows.flatMap((r) => [r.id, r.device])) {
      expect(id).toMatch(UUID_V7);
      expect(millisOf(id)).toBeGreaterThanOrEqual(before - 1000);
      expect(millisOf(id)).toBeLessThanOrEqual(after + 1000);
    }
    const poles = (await t.client.query<{ id: string }>(`SELECT id FROM pole WHERE tenant_id = $1 AND code LIKE 'V7-%' ORDER BY substr(code, 4)::int`, [tenantId])).rows;
    for (let i = 1; i < poles.length; i++) expect(millisOf(poles[i]!.id)).toBeGreaterThanOrEqual(millisOf(poles[i - 1]!.id));
    expect(new Set(poles.map((p) => p.id)).size).toBe(poles.length);
  });

  it("stamp updated_at with the transaction's write stamp (0016) whatever the writer sets, one stamp per transaction", async () => {
    const { rows } = await t.client.query<{ id: string; fresh: boolean }>(
      `INSERT INTO pole (tenant_id, code, latitude, longitude, updated_at) VALUES ($1, 'STAMP-1', -23.5, -46.6, '2001-01-01')
       RETURNING id, updated_at = lumen_write_stamp() AND updated_at >= now() AS fresh`,
      [tenantId],
    );
    expect(rows[0]!.fresh).toBe(true);
    await t.client.query('BEGIN');
    try {
      // The stamp is taken after the transaction has its id, so after its start.
      const moved = await t.client.query(`UPDATE pole SET address = 'Rua Nova, 1', updated_at = '2001-01-01' WHERE id = $1 RETURNING updated_at AS u, updated_at > now() AS after_start`, [rows[0]!.id]);
      expect(moved.rows[0].after_start).toBe(true);
      const device = await t.client.query(
        `INSERT INTO telegestor (tenant_id, identifier, updated_at) VALUES ($1, 'STAMP-TG', '2001-01-01') RETURNING updated_at AS u`,
        [tenantId],
      );
      expect(device.rows[0].u).toEqual(moved.rows[0].u);
    } finally {
      await t.client.query('COMMIT');
    }
    // A later transaction's update moves the stamp again.
    const later = await t.client.query(`UPDATE pole SET active = false WHERE id = $1 RETURNING updated_at = lumen_write_stamp() AS fresh, updated_at > '2001-01-02' AS moved`, [rows[0]!.id]);
    expect(later.rows[0]).toEqual({ fresh: true, moved: true });
  });
});
