-- Events: the exact envelope bytes, the polling positions, and webhook deliveries.

-- The envelope exactly as both transports deliver it: the webhook body, and the
-- bytes its signature covers. payload (jsonb) keeps the same document for queries,
-- but jsonb does not keep key order or spacing, so it cannot be signed.
ALTER TABLE event ADD COLUMN body text;
UPDATE event SET body = payload::text WHERE body IS NULL;

-- Polling position of the event in its partner's stream (GET /api/external/events).
-- Null until a poll first exposes it. Positions are assigned by the poll itself, one
-- partner at a time (its event_cursor row is locked), to events that are committed at
-- that moment, each strictly greater than every earlier position of the partner, with
-- millisecond precision. An event whose transaction commits late simply gets a later
-- position, so a cursor equal to the last position returned never skips anything.
ALTER TABLE event ADD COLUMN published_at timestamptz
  CHECK (published_at = date_trunc('milliseconds', published_at));
CREATE UNIQUE INDEX event_published_idx ON event (external_system_id, published_at) WHERE published_at IS NOT NULL;
-- Write order (events of one transaction share created_at): positions follow it.
ALTER TABLE event ADD COLUMN write_seq bigint GENERATED ALWAYS AS IDENTITY;
CREATE INDEX event_unpublished_idx ON event (external_system_id, write_seq) WHERE published_at IS NULL;

-- One row per partner that has polled: what it confirmed and when it last called.
CREATE TABLE event_cursor (
  external_system_id uuid PRIMARY KEY REFERENCES external_system (id),
  -- every event positioned at or before this is confirmed and never returned again
  confirmed_at       timestamptz,
  -- the greatest position assigned so far (the next is at least 1 ms later)
  last_published_at  timestamptz,
  last_poll_at       timestamptz,
  -- whether the last answered call returned hasMore (the minimum interval applies only after false)
  last_has_more      boolean NOT NULL DEFAULT false,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now()
);

-- One delivery of one event to one partner's webhook: the first one, written with
-- the event, and any redelivery an operator asks for (same event, new delivery).
-- Deliveries with the same ordering key (the partner and the service order, or the
-- alert when there is none) go out one at a time in position order: a delivery is
-- attempted only when no earlier one of its key is still pending or failed.
CREATE TABLE webhook_delivery (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  position           bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  event_id           uuid NOT NULL REFERENCES event (id) ON DELETE CASCADE,
  external_system_id uuid NOT NULL REFERENCES external_system (id),
  ordering_key       uuid NOT NULL,
  -- pending: not attempted yet; failed: the last attempt failed, another is scheduled;
  -- succeeded: a 2xx was received; dead: every attempt failed (or delivery became impossible)
  status             text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'failed', 'succeeded', 'dead')),
  attempts           integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at    timestamptz NOT NULL DEFAULT now(),
  -- held by the worker making an attempt; a crashed attempt is picked up again after it
  lease_until        timestamptz,
  last_attempt_at    timestamptz,
  last_status_code   integer,
  last_error         text,
  redelivery_of      uuid REFERENCES webhook_delivery (id) ON DELETE SET NULL,
  -- who asked for it: 'event' (written with the event) or the operator of a redelivery
  requested_by       text NOT NULL DEFAULT 'event',
  created_at         timestamptz NOT NULL DEFAULT now(),
  finished_at        timestamptz,
  CHECK ((status IN ('succeeded', 'dead')) = (finished_at IS NOT NULL))
);
CREATE INDEX webhook_delivery_open_key_idx ON webhook_delivery (external_system_id, ordering_key, position) WHERE status IN ('pending', 'failed');
CREATE INDEX webhook_delivery_due_idx ON webhook_delivery (next_attempt_at) WHERE status IN ('pending', 'failed');
CREATE INDEX webhook_delivery_partner_idx ON webhook_delivery (external_system_id, created_at, id);
CREATE INDEX webhook_delivery_event_idx ON webhook_delivery (event_id);

-- Every attempt of a delivery: when, how long, what the partner answered or what failed.
CREATE TABLE webhook_attempt (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id     uuid NOT NULL REFERENCES webhook_delivery (id) ON DELETE CASCADE,
  attempt         integer NOT NULL CHECK (attempt >= 1),
  started_at      timestamptz NOT NULL,
  latency_ms      integer NOT NULL CHECK (latency_ms >= 0),
  succeeded       boolean NOT NULL,
  status_code     integer,
  error           text,
  -- when the next attempt is due after this failure; null after a success or the last attempt
  next_attempt_at timestamptz,
  UNIQUE (delivery_id, attempt)
);
