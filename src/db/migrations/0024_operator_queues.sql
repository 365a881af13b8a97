-- The operator's working day: queues an operator clears by hand, and the lookups of
-- the map and of duplicate suggestions.

-- Rejected inbound items and failed attachment URLs an operator dismissed (looked at,
-- nothing to do): they leave the attention counts and the default lists, and stay for
-- the record. Retrying an attachment URL that then succeeds deletes its failure row.
ALTER TABLE rejected_inbound_item ADD COLUMN dismissed_at timestamptz;
ALTER TABLE rejected_inbound_item ADD COLUMN dismissed_by text CHECK (length(dismissed_by) BETWEEN 1 AND 200);
ALTER TABLE attachment_failure ADD COLUMN dismissed_at timestamptz;
ALTER TABLE attachment_failure ADD COLUMN dismissed_by text CHECK (length(dismissed_by) BETWEEN 1 AND 200);

-- Poles near a point or inside a map's box: a latitude band of one tenant, then the
-- longitude range within it (a city of 1,000,000 poles reads only the band).
CREATE INDEX pole_tenant_position_idx ON pole (tenant_id, latitude, longitude) WHERE active;

-- Open orders near an alert (duplicate suggestions): the same band, open orders only.
CREATE INDEX service_order_open_position_idx ON service_order (tenant_id, latitude, longitude)
  WHERE status IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS') AND latitude IS NOT NULL;

-- Dead deliveries per partner: the attention count and "redeliver every dead one".
CREATE INDEX webhook_delivery_dead_idx ON webhook_delivery (external_system_id, position) WHERE status = 'dead';
