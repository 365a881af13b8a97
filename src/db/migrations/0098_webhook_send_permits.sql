-- Webhook attempts on the wire per partner, counted across every serving instance
-- (LUMEN_WEBHOOK_MAX_IN_FLIGHT_PER_PARTNER was a per-instance limit: N instances could
-- send N times it to one receiver at once). A partner has that many permits, one row
-- each, made when first wanted; an instance holds a permit for each attempt it may have
-- on the wire to the partner, renews what it holds, and gives back what it no longer
-- needs. A permit whose holder stopped renewing (a crash, a lost connection) is free
-- again when held_until passes.
CREATE TABLE webhook_send_permit (
  external_system_id uuid NOT NULL REFERENCES external_system (id) ON DELETE CASCADE,
  slot smallint NOT NULL CHECK (slot >= 1),
  holder uuid,
  held_until timestamptz,
  PRIMARY KEY (external_system_id, slot),
  CHECK ((holder IS NULL) = (held_until IS NULL))
);
CREATE INDEX webhook_send_permit_holder_idx ON webhook_send_permit (holder) WHERE holder IS NOT NULL;
