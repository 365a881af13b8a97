-- Undo within a short window (issue 23 §2). An operator action that can be undone
-- (create order, link, discard, reclassify, single or bulk, and cancelling an order)
-- records what it changed in undoable_action, and the partner events it would send are
-- written to held_event instead of the outbox. When the window passes, the action is
-- released: its held events move to the outbox (event, and a delivery for a webhook
-- partner) in one transaction. An undo within the window restores the previous state
-- and deletes the held events, in one transaction too. Either way an event is written
-- to the outbox once or never: a crash or restart in between loses nothing (the
-- release runs again from what is committed) and duplicates nothing (the held rows are
-- deleted by the transaction that moves them).
CREATE TABLE undoable_action (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id  uuid NOT NULL REFERENCES tenant (id),
  -- create-order, link, discard, reclassify, cancel-order
  kind       text NOT NULL,
  actor      text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  release_at timestamptz NOT NULL,
  -- null while the window is open; 'released' or 'undone' once settled.
  settled    text CHECK (settled IN ('released', 'undone')),
  settled_at timestamptz,
  -- The alerts and orders as they were before the action and as the action left them.
  before     jsonb NOT NULL,
  after      jsonb NOT NULL
);
CREATE INDEX undoable_action_due_idx ON undoable_action (release_at) WHERE settled IS NULL;

CREATE TABLE held_event (
  -- The event's id: the same id once it is released.
  id                 uuid PRIMARY KEY,
  action_id          uuid NOT NULL REFERENCES undoable_action (id) ON DELETE CASCADE,
  write_seq          bigint GENERATED ALWAYS AS IDENTITY,
  tenant_id          uuid NOT NULL REFERENCES tenant (id),
  external_system_id uuid NOT NULL REFERENCES external_system (id),
  event_type         text NOT NULL,
  alert_id           uuid NOT NULL,
  service_order_id   uuid,
  sequence           integer NOT NULL,
  body               text NOT NULL,
  occurred_at        timestamptz NOT NULL
);
CREATE INDEX held_event_action_idx ON held_event (action_id, write_seq);
CREATE INDEX held_event_alert_idx ON held_event (alert_id);
CREATE INDEX held_event_order_idx ON held_event (service_order_id) WHERE service_order_id IS NOT NULL;

-- Refused polled items an operator reviews (issue 23 §2): dismissed with a reason, or
-- corrected and accepted (the fields the operator changed, kept for the record).
ALTER TABLE rejected_inbound_item
  ADD COLUMN dismiss_reason text,
  ADD COLUMN corrections    jsonb,
  ADD COLUMN accepted_by    text;
