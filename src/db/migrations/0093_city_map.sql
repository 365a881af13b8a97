-- The city map: every active pole of a city drawn at every zoom, as clusters counted
-- server-side. Plain SQL, no PostGIS (the embedded PostgreSQL has none): a pole's cell
-- is its web-mercator tile coordinate at a grid level (2^level cells around the world),
-- and a rollup of the poles per cell is kept current by the pole and telegestor writes.
--
--   lumen_map_x / lumen_map_y  the cell of a longitude / latitude at a level. A cell of
--                  level L split in four gives the cells of level L+1, so a coarser grid
--                  is the finer one shifted right (x >> k): one stored level answers
--                  every zoom at or above its cell size.
--   pole_map_cell  per tenant, level (14 and 18) and cell: the active poles by their
--                  telegestor's state (online, off, unknown = no device or never
--                  reported), with the sums of their coordinates (a cell's centroid).
--                  Level 14 cells are about 2 km a side in Brazil, level 18 about 140 m:
--                  a whole city reads a few hundred rows, a street-level view a few
--                  hundred more; never the poles themselves.
--
-- Open alerts and orders are not in the rollup: they are few (thousands, not millions)
-- and filtered by priority, reason, team and deadline, so the map query counts them
-- live from the orders and telemetry alerts and moves their poles between states.
CREATE FUNCTION lumen_map_x(longitude double precision, level integer) RETURNS integer
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN least(floor((longitude + 180.0) / 360.0 * (1::bigint << level)), (1::bigint << level) - 1)::integer;

-- Latitudes are clamped to web mercator's ±85.0511°.
CREATE FUNCTION lumen_map_y(latitude double precision, level integer) RETURNS integer
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN least(greatest(floor((1.0 - ln(tan(radians(least(greatest(latitude, -85.0511), 85.0511)))
                                        + 1.0 / cos(radians(least(greatest(latitude, -85.0511), 85.0511)))) / pi()) / 2.0
                              * (1::bigint << level)), 0), (1::bigint << level) - 1)::integer;

CREATE TABLE pole_map_cell (
  tenant_id  uuid NOT NULL REFERENCES tenant (id),
  level      smallint NOT NULL CHECK (level IN (14, 18)),
  x          integer NOT NULL,
  y          integer NOT NULL,
  online     integer NOT NULL DEFAULT 0,
  off        integer NOT NULL DEFAULT 0,
  unknown    integer NOT NULL DEFAULT 0,
  online_lat double precision NOT NULL DEFAULT 0,
  online_lon double precision NOT NULL DEFAULT 0,
  off_lat    double precision NOT NULL DEFAULT 0,
  off_lon    double precision NOT NULL DEFAULT 0,
  unknown_lat double precision NOT NULL DEFAULT 0,
  unknown_lon double precision NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, level, x, y)
);

-- The statement that applies signed changes: `delta` is a query of (tenant_id, latitude,
-- longitude, state, sign) over the trigger's transition tables, which only the trigger
-- function itself can read (so it runs the statement with EXECUTE). Cells are written in key order, so two
-- writers touching the same cells queue rather than deadlock. A cell left empty stays
-- (all zero) and is skipped by the map query; a pole that comes back reuses it.
CREATE FUNCTION lumen_pole_map_sql(delta text) RETURNS text LANGUAGE sql IMMUTABLE
  RETURN format($q$
    WITH d (tenant_id, latitude, longitude, state, sign) AS (%s), c AS (
      SELECT d.tenant_id, lv.level, lumen_map_x(d.longitude, lv.level) AS x, lumen_map_y(d.latitude, lv.level) AS y,
             coalesce(sum(d.sign) FILTER (WHERE d.state = 'online'), 0)::int AS online,
             coalesce(sum(d.sign) FILTER (WHERE d.state = 'off'), 0)::int AS off,
             coalesce(sum(d.sign) FILTER (WHERE d.state = 'unknown'), 0)::int AS unknown,
             coalesce(sum(d.sign * d.latitude) FILTER (WHERE d.state = 'online'), 0) AS online_lat,
             coalesce(sum(d.sign * d.longitude) FILTER (WHERE d.state = 'online'), 0) AS online_lon,
             coalesce(sum(d.sign * d.latitude) FILTER (WHERE d.state = 'off'), 0) AS off_lat,
             coalesce(sum(d.sign * d.longitude) FILTER (WHERE d.state = 'off'), 0) AS off_lon,
             coalesce(sum(d.sign * d.latitude) FILTER (WHERE d.state = 'unknown'), 0) AS unknown_lat,
             coalesce(sum(d.sign * d.longitude) FILTER (WHERE d.state = 'unknown'), 0) AS unknown_lon
        FROM d CROSS JOIN (VALUES (14), (18)) AS lv(level)
       GROUP BY 1, 2, 3, 4
    )
    INSERT INTO pole_map_cell AS m (tenant_id, level, x, y, online, off, unknown, online_lat, online_lon, off_lat, off_lon, unknown_lat, unknown_lon)
    SELECT * FROM c ORDER BY tenant_id, level, x, y
      ON CONFLICT (tenant_id, level, x, y) DO UPDATE
         SET online = m.online + excluded.online, off = m.off + excluded.off, unknown = m.unknown + excluded.unknown,
             online_lat = m.online_lat + excluded.online_lat, online_lon = m.online_lon + excluded.online_lon,
             off_lat = m.off_lat + excluded.off_lat, off_lon = m.off_lon + excluded.off_lon,
             unknown_lat = m.unknown_lat + excluded.unknown_lat, unknown_lon = m.unknown_lon + excluded.unknown_lon$q$, delta);

-- A device's state as the map colours it.
CREATE FUNCTION lumen_map_state(online boolean) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE WHEN online THEN 'online' WHEN NOT online THEN 'off' ELSE 'unknown' END;

-- Poles: an inserted, deleted, moved, activated or deactivated pole, with its device's
-- state as it is now.
CREATE FUNCTION lumen_pole_map_keep_pole() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    EXECUTE lumen_pole_map_sql($d$
      SELECT n.tenant_id, n.latitude, n.longitude, lumen_map_state(g.online) AS state, 1 AS sign
        FROM new_rows n LEFT JOIN telegestor g ON g.pole_id = n.id WHERE n.active$d$);
  ELSIF TG_OP = 'DELETE' THEN
    EXECUTE lumen_pole_map_sql($d$
      SELECT o.tenant_id, o.latitude, o.longitude, lumen_map_state(g.online) AS state, -1 AS sign
        FROM old_rows o LEFT JOIN telegestor g ON g.pole_id = o.id WHERE o.active$d$);
  ELSE
    EXECUTE lumen_pole_map_sql($d$
      WITH moved AS (
        SELECT o.tenant_id AS o_tenant, o.latitude AS o_lat, o.longitude AS o_lon, o.active AS o_active,
               n.tenant_id AS n_tenant, n.latitude AS n_lat, n.longitude AS n_lon, n.active AS n_active, n.id
          FROM old_rows o JOIN new_rows n ON n.id = o.id
         WHERE (o.latitude, o.longitude, o.active, o.tenant_id) IS DISTINCT FROM (n.latitude, n.longitude, n.active, n.tenant_id)
      )
      SELECT m.o_tenant, m.o_lat, m.o_lon, lumen_map_state(g.online), -1 FROM moved m LEFT JOIN telegestor g ON g.pole_id = m.id WHERE m.o_active
      UNION ALL
      SELECT m.n_tenant, m.n_lat, m.n_lon, lumen_map_state(g.online), 1 FROM moved m LEFT JOIN telegestor g ON g.pole_id = m.id WHERE m.n_active$d$);
  END IF;
  RETURN NULL;
END $$;

-- Devices: a device linked to a pole, unlinked, or whose online state changed moves
-- its pole between states (a pole without a device is `unknown`).
CREATE FUNCTION lumen_pole_map_keep_device() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    EXECUTE lumen_pole_map_sql($d$
      SELECT p.tenant_id, p.latitude, p.longitude, s.state, s.sign
        FROM new_rows n JOIN pole p ON p.id = n.pole_id AND p.active
       CROSS JOIN LATERAL (VALUES ('unknown', -1), (lumen_map_state(n.online), 1)) AS s(state, sign)
       WHERE n.online IS NOT NULL$d$);
  ELSIF TG_OP = 'DELETE' THEN
    EXECUTE lumen_pole_map_sql($d$
      SELECT p.tenant_id, p.latitude, p.longitude, s.state, s.sign
        FROM old_rows o JOIN pole p ON p.id = o.pole_id AND p.active
       CROSS JOIN LATERAL (VALUES (lumen_map_state(o.online), -1), ('unknown', 1)) AS s(state, sign)
       WHERE o.online IS NOT NULL$d$);
  ELSE
    EXECUTE lumen_pole_map_sql($d$
      WITH changed AS (
        SELECT o.pole_id AS o_pole, o.online AS o_online, n.pole_id AS n_pole, n.online AS n_online
          FROM old_rows o JOIN new_rows n ON n.id = o.id
         WHERE (o.pole_id, o.online) IS DISTINCT FROM (n.pole_id, n.online)
      )
      SELECT p.tenant_id, p.latitude, p.longitude, s.state, s.sign
        FROM changed c JOIN pole p ON p.id = c.o_pole AND p.active
       CROSS JOIN LATERAL (VALUES (lumen_map_state(c.o_online), -1), ('unknown', 1)) AS s(state, sign)
      UNION ALL
      SELECT p.tenant_id, p.latitude, p.longitude, s.state, s.sign
        FROM changed c JOIN pole p ON p.id = c.n_pole AND p.active
       CROSS JOIN LATERAL (VALUES ('unknown', -1), (lumen_map_state(c.n_online), 1)) AS s(state, sign)$d$);
  END IF;
  RETURN NULL;
END $$;

-- Named to fire after the change-stamp triggers of the same statement (triggers fire in
-- name order): those lock the device's pole row first, so a pole moved and its device
-- changed at the same time by two transactions are applied one after the other.
CREATE TRIGGER pole_zz_map_insert AFTER INSERT ON pole REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_pole_map_keep_pole();
CREATE TRIGGER pole_zz_map_update AFTER UPDATE ON pole REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_pole_map_keep_pole();
CREATE TRIGGER pole_zz_map_delete AFTER DELETE ON pole REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_pole_map_keep_pole();
CREATE TRIGGER telegestor_zz_map_insert AFTER INSERT ON telegestor REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_pole_map_keep_device();
CREATE TRIGGER telegestor_zz_map_update AFTER UPDATE ON telegestor REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_pole_map_keep_device();
CREATE TRIGGER telegestor_zz_map_delete AFTER DELETE ON telegestor REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_pole_map_keep_device();

-- A tenant's rollup counted again from its poles (`SELECT lumen_pole_map_rebuild(id)`),
-- should it ever drift: a restore of `pole` alone, a hand edit with triggers disabled.
-- The lock waits for writers that already touched the rollup to commit, and holds back
-- new ones until the rebuild commits (their changes then apply on top of it).
CREATE FUNCTION lumen_pole_map_rebuild(tenant uuid) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  LOCK TABLE pole_map_cell IN SHARE ROW EXCLUSIVE MODE;
  DELETE FROM pole_map_cell WHERE tenant_id = tenant;
  EXECUTE lumen_pole_map_sql(format($d$
    SELECT p.tenant_id, p.latitude, p.longitude, lumen_map_state(g.online) AS state, 1 AS sign
      FROM pole p LEFT JOIN telegestor g ON g.pole_id = p.id WHERE p.active AND p.tenant_id = %L$d$, tenant));
END $$;

-- The poles already there.
SELECT lumen_pole_map_rebuild(id) FROM tenant;

-- The open work the map counts live: a city's open orders on poles, and its telemetry
-- alerts by pole (telemetry_lamp_out_tenant_idx already reads those by tenant).
CREATE INDEX service_order_open_pole_idx ON service_order (tenant_id, pole_id)
  WHERE status IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS') AND pole_id IS NOT NULL;
