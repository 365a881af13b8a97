-- City data (interface 2.2-2.4, 4.3, N5): exact totals without counting, the
-- "a device change is a pole change" rule, page-walk checkpoints and telemetry keys.

-- Exact per-tenant row counts of the two list endpoints, kept by statement-level
-- triggers (one counter update per statement and tenant, so a bulk import of a
-- million poles costs one update, not a million). deleted_count only grows: a
-- cached `total` for an updatedSince filter stays exact while it is unchanged
-- (see src/services/city-data-total.ts).
CREATE TABLE city_data_count (
  tenant_id     uuid NOT NULL REFERENCES tenant (id),
  resource      text NOT NULL CHECK (resource IN ('pole', 'service_order')),
  row_count     bigint NOT NULL DEFAULT 0 CHECK (row_count >= 0),
  deleted_count bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, resource)
);

CREATE FUNCTION lumen_count_rows_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO city_data_count AS c (tenant_id, resource, row_count)
  SELECT tenant_id, TG_TABLE_NAME, count(*) FROM new_rows GROUP BY tenant_id ORDER BY tenant_id
  ON CONFLICT (tenant_id, resource) DO UPDATE SET row_count = c.row_count + excluded.row_count;
  RETURN NULL;
END $$;

CREATE FUNCTION lumen_count_rows_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE city_data_count c
     SET row_count = c.row_count - d.n, deleted_count = c.deleted_count + d.n
    FROM (SELECT tenant_id, count(*) AS n FROM old_rows GROUP BY tenant_id) d
   WHERE c.tenant_id = d.tenant_id AND c.resource = TG_TABLE_NAME;
  RETURN NULL;
END $$;

CREATE TRIGGER pole_count_insert AFTER INSERT ON pole REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_count_rows_inserted();
CREATE TRIGGER pole_count_delete AFTER DELETE ON pole REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_count_rows_deleted();
CREATE TRIGGER service_order_count_insert AFTER INSERT ON service_order REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_count_rows_inserted();
CREATE TRIGGER service_order_count_delete AFTER DELETE ON service_order REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_count_rows_deleted();

INSERT INTO city_data_count (tenant_id, resource, row_count)
SELECT tenant_id, 'pole', count(*) FROM pole GROUP BY tenant_id;
INSERT INTO city_data_count (tenant_id, resource, row_count)
SELECT tenant_id, 'service_order', count(*) FROM service_order GROUP BY tenant_id;

-- N5: a pole's updatedAt is the latest of its own change and its telegestor's report
-- or state change. Whoever writes a telegestor (telemetry, import, operators), the
-- poles it leaves and joins are stamped in the same transaction. Poles this
-- transaction already stamped are skipped (updated_at = now() already).
CREATE FUNCTION lumen_touch_poles_of_devices() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE pole SET updated_at = now()
     WHERE id IN (SELECT pole_id FROM new_rows WHERE pole_id IS NOT NULL) AND updated_at <> now();
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE pole SET updated_at = now()
     WHERE id IN (SELECT pole_id FROM old_rows WHERE pole_id IS NOT NULL) AND updated_at <> now();
  ELSE
    UPDATE pole SET updated_at = now()
     WHERE id IN (
       SELECT unnest(ARRAY[n.pole_id, o.pole_id])
         FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE (n.identifier, n.pole_id, n.online, n.relay_on, n.last_communication_at)
              IS DISTINCT FROM (o.identifier, o.pole_id, o.online, o.relay_on, o.last_communication_at)
     ) AND updated_at <> now();
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER telegestor_touch_pole_insert AFTER INSERT ON telegestor REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_touch_poles_of_devices();
CREATE TRIGGER telegestor_touch_pole_update AFTER UPDATE ON telegestor REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_touch_poles_of_devices();
CREATE TRIGGER telegestor_touch_pole_delete AFTER DELETE ON telegestor REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_touch_poles_of_devices();

-- A service order item shows its team's name: renaming a team changes the items of
-- its orders, so they are stamped too (otherwise a partner would never see the new name).
CREATE FUNCTION lumen_touch_orders_of_renamed_teams() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE service_order SET updated_at = now()
   WHERE team_id IN (SELECT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE n.name IS DISTINCT FROM o.name)
     AND updated_at <> now();
  RETURN NULL;
END $$;
CREATE TRIGGER team_rename_touch_orders AFTER UPDATE ON team REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_touch_orders_of_renamed_teams();

-- Page walks (4.3 `page`): per ExternalSystem, list and (updatedSince, pageSize),
-- where each served page ended. Page N+1 continues by keyset after page N's last
-- item, so an item that changes during the walk cannot shift the next page; OFFSET
-- is only the fallback for a page requested out of order. Page 1 starts a new walk.
-- Walks unused for a day are deleted when the same partner starts another one.
CREATE TABLE city_read_walk (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  external_system_id uuid NOT NULL REFERENCES external_system (id) ON DELETE CASCADE,
  resource           text NOT NULL CHECK (resource IN ('pole', 'service_order')),
  -- '-infinity' when the walk has no updatedSince
  updated_since      timestamptz NOT NULL,
  page_size          integer NOT NULL CHECK (page_size BETWEEN 1 AND 1000),
  -- cached total: matching rows counted at total_horizon, and the tenant's row and
  -- deletion counters of that same snapshot
  total_count        bigint,
  total_rows         bigint,
  total_deleted      bigint,
  total_horizon      timestamptz,
  started_at         timestamptz NOT NULL DEFAULT now(),
  used_at            timestamptz NOT NULL DEFAULT now(),
  UNIQUE (external_system_id, resource, updated_since, page_size)
);

CREATE TABLE city_read_checkpoint (
  walk_id         uuid NOT NULL REFERENCES city_read_walk (id) ON DELETE CASCADE,
  page            integer NOT NULL CHECK (page >= 1),
  -- the last item served as this page; null: the page was empty at the walk's start
  last_updated_at timestamptz,
  last_id         uuid,
  PRIMARY KEY (walk_id, page),
  CHECK ((last_updated_at IS NULL) = (last_id IS NULL))
);

-- Keys of telemetry systems (POST /api/telemetry/reports), one tenant each. Only the
-- SHA-256 of a key is kept; key_id is the readable part after lmn_tel_.
CREATE TABLE telemetry_key (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id  uuid NOT NULL REFERENCES tenant (id),
  name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  key_id     text NOT NULL UNIQUE,
  key_prefix text NOT NULL,
  key_hash   bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX telemetry_key_tenant_idx ON telemetry_key (tenant_id) WHERE revoked_at IS NULL;
