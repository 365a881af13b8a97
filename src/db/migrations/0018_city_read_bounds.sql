-- The read path's own tables are bounded. Every distinct (list, updatedSince, pageSize)
-- a partner reads starts a walk, and every distinct updatedSince a cached total, so a
-- partner varying them grew both tables without end (they were pruned only by the
-- same partner's next page 1, a day later). Now a new row evicts the least recently
-- used rows past the bound, whoever inserts it (one statement of the read path, a bulk
-- insert, a future writer): at most 100 walks per partner (with their checkpoints) and
-- 200 cached totals per tenant (totals are shared by the tenant's partners). Rows
-- unused for a day are removed hourly by the city-read-cleanup job. Both are caches:
-- an evicted row costs a slower page, never an item (see read-walk.repository.ts).

CREATE INDEX city_read_walk_partner_used_idx ON city_read_walk (external_system_id, used_at DESC);
CREATE INDEX city_read_walk_used_idx ON city_read_walk (used_at);
CREATE INDEX city_read_total_tenant_used_idx ON city_read_total (tenant_id, used_at DESC);
CREATE INDEX city_read_total_used_idx ON city_read_total (used_at);

-- Statement-level, with the rows the statement inserted: one eviction per partner (or
-- tenant) however many rows one statement adds. The rows kept are the most recently
-- used, newest first; ties (rows of one statement share now()) by id, so the choice is
-- stable. An advisory lock per partner (tenant) makes simultaneous inserts evict one
-- after the other: the second sees the first's row once it is committed, so the bound
-- holds exactly, not just eventually. Only an insert takes it: a read of a known walk
-- or total updates its row and evicts nothing.
CREATE FUNCTION lumen_city_read_walk_bound() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('lumen:city-read-walk:' || p.id::text, 0))
     FROM (SELECT DISTINCT external_system_id AS id FROM inserted ORDER BY 1) p;
  DELETE FROM city_read_walk w
   USING (SELECT r.id FROM (SELECT k.id, row_number() OVER (PARTITION BY k.external_system_id ORDER BY k.used_at DESC, k.id DESC) AS n
                              FROM city_read_walk k
                             WHERE k.external_system_id IN (SELECT external_system_id FROM inserted)) r
           WHERE r.n > 100) gone
   WHERE w.id = gone.id;
  RETURN NULL;
END $$;

CREATE TRIGGER city_read_walk_bound AFTER INSERT ON city_read_walk
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION lumen_city_read_walk_bound();

CREATE FUNCTION lumen_city_read_total_bound() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('lumen:city-read-total:' || p.id::text, 0))
     FROM (SELECT DISTINCT tenant_id AS id FROM inserted ORDER BY 1) p;
  DELETE FROM city_read_total t
   USING (SELECT r.tenant_id, r.resource, r.updated_since
            FROM (SELECT k.tenant_id, k.resource, k.updated_since,
                         row_number() OVER (PARTITION BY k.tenant_id ORDER BY k.used_at DESC, k.resource DESC, k.updated_since DESC) AS n
                    FROM city_read_total k
                   WHERE k.tenant_id IN (SELECT tenant_id FROM inserted)) r
           WHERE r.n > 200) gone
   WHERE t.tenant_id = gone.tenant_id AND t.resource = gone.resource AND t.updated_since = gone.updated_since;
  RETURN NULL;
END $$;

CREATE TRIGGER city_read_total_bound AFTER INSERT ON city_read_total
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION lumen_city_read_total_bound();
