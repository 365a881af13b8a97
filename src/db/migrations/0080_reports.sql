-- The dashboard's figures over a period (src/db/repositories/reports/report.repository.ts)
-- read only what the period touches: the orders completed in it (time to repair, SLA),
-- the open orders by age (backlog), and the triage decisions taken in it.
CREATE INDEX service_order_completed_idx ON service_order (tenant_id, closed_at) WHERE status = 'COMPLETED';
CREATE INDEX service_order_open_opened_idx ON service_order (tenant_id, opened_at) WHERE status IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS');
CREATE INDEX alert_status_history_decision_idx ON alert_status_history (at) WHERE from_status = 'Pending';
