-- Webhook fairness: the claim counts the attempts each partner has in flight (leased
-- deliveries) and leaves a partner at its limit out, so that one receiver that never
-- answers cannot hold every attempt slot. Leases are cleared when an attempt is
-- recorded, so this index holds little more than the attempts in flight.
CREATE INDEX webhook_delivery_leased_idx ON webhook_delivery (external_system_id) WHERE lease_until IS NOT NULL;
