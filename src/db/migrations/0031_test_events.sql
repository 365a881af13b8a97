-- Test events: a `Test.Ping` an operator sends to a partner's webhook on request, to
-- check its receiver (URL, TLS, signature). Kept apart from `event`, the outbox that
-- events polling reads by position (0011): a test event has no alert, is never
-- positioned and never appears in GET /api/external/events. Its delivery goes through
-- webhook_delivery like any other (claimed, signed, retried, dead, logged).
CREATE TABLE test_event (
  id                 uuid PRIMARY KEY,
  tenant_id          uuid NOT NULL REFERENCES tenant (id),
  external_system_id uuid NOT NULL REFERENCES external_system (id),
  -- the envelope as delivered, byte for byte (the signature covers it)
  body               text NOT NULL,
  -- the operator who asked for it (audit label)
  requested_by       text NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX test_event_created_idx ON test_event (created_at);
CREATE INDEX test_event_partner_idx ON test_event (external_system_id, created_at);

-- A delivery carries exactly one of an event and a test event. Its ordering key is
-- then the test event's own id: it waits behind nothing and holds nothing back.
ALTER TABLE webhook_delivery
  ALTER COLUMN event_id DROP NOT NULL,
  ADD COLUMN test_event_id uuid REFERENCES test_event (id) ON DELETE CASCADE;
-- NOT VALID: every row written before holds it (event_id was NOT NULL and test_event_id
-- is new, so null), which spares a scan of the whole queue under the exclusive lock;
-- every row written from now on is checked.
ALTER TABLE webhook_delivery
  ADD CONSTRAINT webhook_delivery_one_event_ck CHECK ((event_id IS NULL) <> (test_event_id IS NULL)) NOT VALID;
CREATE INDEX webhook_delivery_test_event_idx ON webhook_delivery (test_event_id) WHERE test_event_id IS NOT NULL;
