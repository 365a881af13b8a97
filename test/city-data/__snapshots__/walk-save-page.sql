WITH w AS (INSERT INTO city_read_walk (external_system_id, tenant_id, resource, updated_since, page_size)
      VALUES ($1, $2, $3, $4::timestamptz, $5)
      ON CONFLICT (external_system_id, resource, updated_since, page_size)
      DO UPDATE SET used_at = now() RETURNING id),
later AS (DELETE FROM city_read_checkpoint c USING w WHERE c.walk_id = w.id AND c.page > $6),
cp AS (INSERT INTO city_read_checkpoint (walk_id, page, last_updated_at, last_id, rank, rank_horizon, rank_below, read_horizon)
      SELECT w.id, $7, $8::timestamptz, $9::uuid, $10::bigint, $11::timestamptz, $12::bigint, $13::timestamptz FROM w
      ON CONFLICT (walk_id, page) DO UPDATE SET last_updated_at = excluded.last_updated_at, last_id = excluded.last_id,
        rank = excluded.rank, rank_horizon = excluded.rank_horizon, rank_below = excluded.rank_below, read_horizon = excluded.read_horizon)
SELECT set_config('synchronous_commit', 'off', true) AS async_commit
-- parameters: ["E","T","pole","-infinity",1000,7,7,"2026-03-14T12:01:00.123456Z","I",7000,"2026-03-14T12:02:00.000000Z",9000,"2026-03-14T12:02:00.000000Z"]
