-- Polling mode inbound (interface 4.5, CONTRACT-NOTES N7): Lumen pulls new requests
-- from the endpoint of each polling-mode partner.
--
-- partner_poll_state keeps, per partner, the cursor Lumen sends back as `since` and
-- what operators need to judge the link (last success, last error, lag). The cursor
-- is written only after every item of a batch was stored, so a crash between two
-- statements re-reads a batch (harmless: intake is idempotent by protocolNumber) and
-- never skips one.

CREATE TABLE partner_poll_state (
  external_system_id   uuid PRIMARY KEY REFERENCES external_system (id),
  -- `since` of the next call; null until a batch gave one (the first call has no since)
  cursor               timestamptz,
  cursor_updated_at    timestamptz,
  -- start of the last poll, whatever its outcome
  last_attempt_at      timestamptz,
  last_success_at      timestamptz,
  -- end of the last poll whose final answer had hasMore false: Lumen held everything
  -- the partner had then. now() minus this is the lag operators see.
  last_caught_up_at    timestamptz,
  last_error_at        timestamptz,
  -- http-status, timeout, network, tls, blocked-address, too-large, invalid-json,
  -- invalid-envelope, redirect, configuration, intake, cursor-stalled
  last_error_kind      text,
  last_error           text,
  consecutive_failures integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
  -- when the next poll is due (interval after a success, backoff after a failure)
  next_poll_at         timestamptz,
  -- an operator asked for a poll now (`lumen partner poll-now`) at this time
  poll_requested_at    timestamptz,
  -- the last batch read and how its items ended
  last_batch_at        timestamptz,
  last_batch_items     integer,
  last_batch_accepted  integer,
  last_batch_rejected  integer,
  -- totals since the partner was first polled
  items_accepted       bigint NOT NULL DEFAULT 0,
  items_rejected       bigint NOT NULL DEFAULT 0,
  polls_succeeded      bigint NOT NULL DEFAULT 0,
  polls_failed         bigint NOT NULL DEFAULT 0,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now()
);

-- Items a partner's endpoint returned that intake refused (they break the
-- IntakeRequest schema). Kept for operators with the raw item and every reason; the
-- batch goes on without them. The same item read again (a re-read batch, a partner
-- that keeps sending it) is one row whose last_seen_at and times_seen move.
CREATE TABLE rejected_inbound_item (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  external_system_id uuid NOT NULL REFERENCES external_system (id),
  tenant_id          uuid NOT NULL REFERENCES tenant (id),
  -- the item's protocolNumber when it has a usable one (a string)
  protocol_number    text,
  item               jsonb NOT NULL,
  -- SHA-256 of the item's canonical JSON (keys sorted): identifies "the same item"
  item_hash          bytea NOT NULL,
  -- [{pointer, message}] as intake reported them, plus the problem code
  problem_code       text NOT NULL,
  reasons            jsonb NOT NULL,
  -- the `since` of the call that returned it (null on a first call)
  since              timestamptz,
  first_seen_at      timestamptz NOT NULL DEFAULT now(),
  last_seen_at       timestamptz NOT NULL DEFAULT now(),
  times_seen         integer NOT NULL DEFAULT 1 CHECK (times_seen >= 1),
  -- set when a later valid item with the same protocolNumber was accepted
  resolved_at        timestamptz,
  UNIQUE (external_system_id, item_hash)
);
CREATE INDEX rejected_inbound_item_partner_idx ON rejected_inbound_item (external_system_id, first_seen_at DESC, id DESC);
CREATE INDEX rejected_inbound_item_open_protocol_idx ON rejected_inbound_item (external_system_id, protocol_number) WHERE resolved_at IS NULL;
