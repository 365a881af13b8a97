-- Webhook deliveries are their own queue: each serving process claims due deliveries
-- in batches straight from webhook_delivery (woken by NOTIFY on the channel
-- lumen_webhook_due, by its own timers and by a short poll), with no job per delivery.

-- True while the delivery waits behind an earlier delivery of the same ordering key
-- that failed and waits for its retry (possibly hours): the claim's index leaves such
-- deliveries out, so a queue behind a failing order costs the claim nothing. Set when
-- the delivery is written behind one, and by the record of a failed attempt for those
-- behind it; cleared by the record that ends the delivery ahead (and by a recheck of the
-- keys involved, and by the minute sweep, for a delivery written while that record ran).
-- Only a hint for speed: the claim still checks that no earlier delivery of the key is
-- open, so a wrong value can delay a delivery, never reorder one.
ALTER TABLE webhook_delivery ADD COLUMN blocked boolean NOT NULL DEFAULT false;
UPDATE webhook_delivery d SET blocked = true
WHERE d.status IN ('pending', 'failed')
  AND EXISTS (SELECT 1 FROM webhook_delivery p
              WHERE p.external_system_id = d.external_system_id AND p.ordering_key = d.ordering_key
                AND p.position < d.position AND p.status = 'failed');

-- Room in every page for the claim's lease update, which changes no indexed column: the
-- new row version then stays on its page (a HOT update) and no index gets an entry for
-- it. Pages written from now on; the existing ones keep theirs until rewritten.
ALTER TABLE webhook_delivery SET (fillfactor = 70);

-- What the claim walks: open deliveries that may go out, by due time.
CREATE INDEX webhook_delivery_ready_idx ON webhook_delivery (next_attempt_at) WHERE status IN ('pending', 'failed') AND NOT blocked;
DROP INDEX webhook_delivery_due_idx;
