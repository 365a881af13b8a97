-- The console's inbox lists a city's Pending alerts Critical first, then by deadline and
-- number (src/db/repositories/operations/triage.repository.ts, ALERT_PRIORITY_RANK). With
-- no index in that order, every page read and sorted all of the city's Pending alerts
-- (10,000 in the bench's city) to return 100, and its time followed how much of the
-- table the shared buffers happened to hold. This index holds the Pending alerts in the
-- page's order, so a page reads its own rows and stops. The expression is the one the
-- statement sorts by, written the same way.
CREATE INDEX alert_inbox_priority_idx ON alert (
  tenant_id,
  (CASE priority WHEN 'Critical' THEN 0 WHEN 'High' THEN 1 WHEN 'Medium' THEN 2 ELSE 3 END),
  sla_due_at,
  alert_number
) WHERE status = 'Pending';
