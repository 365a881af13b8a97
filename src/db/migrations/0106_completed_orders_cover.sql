-- The dashboard's time to repair and SLA (src/db/repositories/reports/report.repository.ts,
-- repairStatement) reads every order completed in the period: 300,000 of them in a month
-- of a city of 1,000,000 orders. With the index of 0080 each of them was fetched from the
-- table (33,000 pages for the bench's city); this index carries every column the
-- statement reads, so they come from the index alone. Same keys and condition as before,
-- so the exports and lists that used the old index use this one.
DROP INDEX service_order_completed_idx;
CREATE INDEX service_order_completed_idx ON service_order (tenant_id, closed_at)
  INCLUDE (opened_at, sla_due_at, team_id, reason_code, id) WHERE status = 'COMPLETED';
