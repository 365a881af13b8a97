-- Every city has an extent, so that no map opens on a constant and a location far from
-- the city is caught before it is saved (issue: the city's extent).
--   extent_*       configured by an operator (a city with no poles yet, or one whose
--                  poles cover only part of it); wins when set, all four or none.
--   pole_extent_*  the bounding box of the city's active poles, kept current by the
--                  triggers below on every pole write (the import, the demo, any other).
--   location_check_meters  a location set by an operator farther than this from every
--                  pole (or outside the extent) needs an explicit confirmation.
ALTER TABLE tenant
  ADD COLUMN extent_south double precision,
  ADD COLUMN extent_west double precision,
  ADD COLUMN extent_north double precision,
  ADD COLUMN extent_east double precision,
  ADD COLUMN pole_extent_south double precision,
  ADD COLUMN pole_extent_west double precision,
  ADD COLUMN pole_extent_north double precision,
  ADD COLUMN pole_extent_east double precision,
  ADD COLUMN location_check_meters integer NOT NULL DEFAULT 200 CHECK (location_check_meters BETWEEN 10 AND 100000),
  ADD CONSTRAINT tenant_extent_ck CHECK (
    (extent_south IS NULL AND extent_west IS NULL AND extent_north IS NULL AND extent_east IS NULL)
    OR (extent_south BETWEEN -90 AND 90 AND extent_north BETWEEN -90 AND 90 AND extent_south < extent_north
        AND extent_west BETWEEN -180 AND 180 AND extent_east BETWEEN -180 AND 180 AND extent_west < extent_east));

UPDATE tenant t
   SET (pole_extent_south, pole_extent_west, pole_extent_north, pole_extent_east) =
       (SELECT min(p.latitude), min(p.longitude), max(p.latitude), max(p.longitude) FROM pole p WHERE p.tenant_id = t.id AND p.active);

-- Kept current per statement, in O(rows written): new positions only widen the box; a
-- box is computed again from the poles only when a row that left (deleted, moved or
-- made inactive) lay on its edge. The tenant row is written only when its box changes.
CREATE FUNCTION lumen_pole_extent_keep() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  shrunk uuid[];
BEGIN
  IF TG_OP = 'DELETE' THEN
    SELECT array_agg(DISTINCT o.tenant_id) INTO shrunk
      FROM old_rows o JOIN tenant x ON x.id = o.tenant_id
     WHERE o.active AND (o.latitude <= x.pole_extent_south OR o.latitude >= x.pole_extent_north
                         OR o.longitude <= x.pole_extent_west OR o.longitude >= x.pole_extent_east);
  ELSIF TG_OP = 'UPDATE' THEN
    SELECT array_agg(DISTINCT o.tenant_id) INTO shrunk
      FROM old_rows o JOIN new_rows n ON n.id = o.id JOIN tenant x ON x.id = o.tenant_id
     WHERE o.active
       AND (o.latitude, o.longitude, o.active) IS DISTINCT FROM (n.latitude, n.longitude, n.active)
       AND (o.latitude <= x.pole_extent_south OR o.latitude >= x.pole_extent_north
            OR o.longitude <= x.pole_extent_west OR o.longitude >= x.pole_extent_east);
  END IF;
  IF shrunk IS NOT NULL THEN
    UPDATE tenant x
       SET (pole_extent_south, pole_extent_west, pole_extent_north, pole_extent_east) = (b.s, b.w, b.n, b.e)
      FROM (SELECT t.id, (SELECT min(latitude) FROM pole WHERE tenant_id = t.id AND active) AS s,
                         (SELECT min(longitude) FROM pole WHERE tenant_id = t.id AND active) AS w,
                         (SELECT max(latitude) FROM pole WHERE tenant_id = t.id AND active) AS n,
                         (SELECT max(longitude) FROM pole WHERE tenant_id = t.id AND active) AS e
              FROM unnest(shrunk) AS t(id)) b
     WHERE x.id = b.id
       AND (x.pole_extent_south, x.pole_extent_west, x.pole_extent_north, x.pole_extent_east) IS DISTINCT FROM (b.s, b.w, b.n, b.e);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE tenant x
       SET pole_extent_south = least(x.pole_extent_south, g.s), pole_extent_west = least(x.pole_extent_west, g.w),
           pole_extent_north = greatest(x.pole_extent_north, g.n), pole_extent_east = greatest(x.pole_extent_east, g.e)
      FROM (SELECT tenant_id, min(latitude) AS s, min(longitude) AS w, max(latitude) AS n, max(longitude) AS e
              FROM new_rows WHERE active GROUP BY tenant_id) g
     WHERE x.id = g.tenant_id
       AND (x.pole_extent_south IS NULL OR g.s < x.pole_extent_south OR g.w < x.pole_extent_west
            OR g.n > x.pole_extent_north OR g.e > x.pole_extent_east);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER pole_extent_insert AFTER INSERT ON pole REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_pole_extent_keep();
CREATE TRIGGER pole_extent_update AFTER UPDATE ON pole REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_pole_extent_keep();
CREATE TRIGGER pole_extent_delete AFTER DELETE ON pole REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_pole_extent_keep();
