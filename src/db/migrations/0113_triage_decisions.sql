-- A triage decision (an alert_status_history row from Pending) carries its alert's city
-- and when the alert last became Pending, set as the row is written.
--
-- Why: the dashboard's time to triage (report.repository.ts, triageFigures) read the
-- decisions of the period from alert_status_history_decision_idx, which is by time
-- alone (the history has no city): every city's decisions, each joined to its alert to
-- keep the city's, and each probed in its alert's history for the moment it last
-- became Pending. A deployment's every city made one city's dashboard slower, and on the
-- bench's city of 50,000 decisions it was the dashboard's longest statement
-- (bench/FINDINGS.md, "The dashboard's statements"). The new index gives one city's
-- decisions of a period with what the figure needs of them.
--
-- Both columns are NULL on every other history row. The trigger reads the alert's
-- earlier history at insert time: rows written before it, in this transaction too (a
-- return to Pending and the decision after it), as the read-time probe did (p.id < h.id).

ALTER TABLE alert_status_history
  ADD COLUMN tenant_id uuid,
  ADD COLUMN pending_since timestamptz;

CREATE FUNCTION lumen_alert_decision() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  SELECT a.tenant_id,
         coalesce((SELECT max(p.at) FROM alert_status_history p WHERE p.alert_id = NEW.alert_id AND p.to_status = 'Pending'), a.created_at)
    INTO NEW.tenant_id, NEW.pending_since
    FROM alert a
   WHERE a.id = NEW.alert_id;
  RETURN NEW;
END
$$;

CREATE TRIGGER alert_status_history_decision BEFORE INSERT ON alert_status_history
  FOR EACH ROW WHEN (NEW.from_status = 'Pending') EXECUTE FUNCTION lumen_alert_decision();

-- The decisions written so far, as the read-time probe computed them.
UPDATE alert_status_history h
   SET tenant_id = a.tenant_id,
       pending_since = coalesce((SELECT max(p.at) FROM alert_status_history p WHERE p.alert_id = h.alert_id AND p.to_status = 'Pending' AND p.id < h.id), a.created_at)
  FROM alert a
 WHERE a.id = h.alert_id AND h.from_status = 'Pending';

ALTER TABLE alert_status_history ADD CONSTRAINT alert_status_history_decision_context
  CHECK (from_status IS DISTINCT FROM 'Pending' OR (tenant_id IS NOT NULL AND pending_since IS NOT NULL));

CREATE INDEX alert_status_history_city_decision_idx ON alert_status_history (tenant_id, at)
  INCLUDE (alert_id, to_status, pending_since) WHERE from_status = 'Pending';
DROP INDEX alert_status_history_decision_idx;
