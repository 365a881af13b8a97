-- city_data_count in 16 slots per tenant and list. With one row, every transaction
-- that inserted a service order (every automatic intake) held that row's lock from
-- its INSERT to its commit, so a tenant's intakes queued on it one after another.
-- Now each backend writes the slot pg_backend_pid() % 16, so concurrent writers
-- (on different connections) mostly update different rows, and readers sum the
-- slots in one statement (rowCount in src/db/repositories/city-page.repository.ts).
--
-- Inserts and deletes both upsert their backend's slot, so a deletion may land on a
-- slot other than the one that counted the row: a slot's row_count may go negative,
-- only the sum is the tenant's count. deleted_count still only grows, per slot and
-- so in sum.

ALTER TABLE city_data_count ADD COLUMN slot smallint NOT NULL DEFAULT 0;
ALTER TABLE city_data_count ALTER COLUMN slot DROP DEFAULT;
ALTER TABLE city_data_count DROP CONSTRAINT city_data_count_pkey;
ALTER TABLE city_data_count ADD PRIMARY KEY (tenant_id, resource, slot);
ALTER TABLE city_data_count DROP CONSTRAINT city_data_count_row_count_check;

CREATE OR REPLACE FUNCTION lumen_count_rows_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO city_data_count AS c (tenant_id, resource, slot, row_count)
  SELECT tenant_id, TG_TABLE_NAME, pg_backend_pid() % 16, count(*) FROM new_rows GROUP BY tenant_id ORDER BY tenant_id
  ON CONFLICT (tenant_id, resource, slot) DO UPDATE SET row_count = c.row_count + excluded.row_count;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION lumen_count_rows_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO city_data_count AS c (tenant_id, resource, slot, row_count, deleted_count)
  SELECT tenant_id, TG_TABLE_NAME, pg_backend_pid() % 16, -count(*), count(*) FROM old_rows GROUP BY tenant_id ORDER BY tenant_id
  ON CONFLICT (tenant_id, resource, slot) DO UPDATE
    SET row_count = c.row_count + excluded.row_count, deleted_count = c.deleted_count + excluded.deleted_count;
  RETURN NULL;
END $$;
