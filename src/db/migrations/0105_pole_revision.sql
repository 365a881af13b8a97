-- A revision per city of its poles, bumped by every statement that writes what the
-- grouped inbox reads of them.
--
-- The grouped inbox's groups depend on the city's poles (each alert's nearest active
-- pole, a dark pole's place and circuit) as well as on its Pending alerts, its dark-pole
-- records and its grouping settings. A process keeps a city's groups with a fingerprint
-- of all of them (alert-group.repository.ts, groupedInboxInputs) and computes them again
-- only when the fingerprint changes. The alerts and dark-pole records are fingerprinted
-- from their rows; a city's poles are too many to read on every request, so their writes
-- count themselves here: one row update per statement and city (statement triggers with
-- transition tables, as 0084 and 0093: an import of 100,000 poles bumps its city once).
-- An update bumps only when a pole's place, activity, circuit or city changed.
CREATE TABLE pole_revision (
  tenant_id uuid PRIMARY KEY REFERENCES tenant (id) ON DELETE CASCADE,
  revision  bigint NOT NULL
);

CREATE FUNCTION lumen_pole_revision_bump() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  cities uuid[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg(DISTINCT n.tenant_id) INTO cities FROM new_rows n;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT array_agg(DISTINCT o.tenant_id) INTO cities FROM old_rows o;
  ELSE
    SELECT array_agg(DISTINCT c.tenant_id) INTO cities
      FROM old_rows o JOIN new_rows n ON n.id = o.id, LATERAL (VALUES (o.tenant_id), (n.tenant_id)) c(tenant_id)
     WHERE (o.tenant_id, o.latitude, o.longitude, o.active, o.circuit) IS DISTINCT FROM (n.tenant_id, n.latitude, n.longitude, n.active, n.circuit);
  END IF;
  IF cities IS NOT NULL THEN
    -- A city being deleted (its poles go with it) has nothing left to fingerprint.
    INSERT INTO pole_revision AS r (tenant_id, revision)
    SELECT t.id, 1 FROM tenant t WHERE t.id = ANY (cities) ORDER BY t.id
    ON CONFLICT (tenant_id) DO UPDATE SET revision = r.revision + 1;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER pole_revision_insert AFTER INSERT ON pole REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_pole_revision_bump();
CREATE TRIGGER pole_revision_update AFTER UPDATE ON pole REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_pole_revision_bump();
CREATE TRIGGER pole_revision_delete AFTER DELETE ON pole REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lumen_pole_revision_bump();
