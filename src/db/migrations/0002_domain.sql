-- The shared domain: reasons, teams, poles and telegestors, alerts, service orders,
-- their status history, per-tenant counters and the event outbox.
--
-- Change stamps (pole.updated_at, service_order.updated_at, event.created_at) are
-- always the writing transaction's now(), set by the database (triggers and
-- defaults), never by the application clock. The visibility horizon below relies
-- on it: a row stamped T can only still be invisible while a transaction that
-- started at or before T is running.

-- Oldest start time of any other Lumen transaction in progress on this database
-- (every Lumen connection names itself lumen*), or now() when there is none. Rows
-- stamped before it are all committed or rolled back: readers expose only those, so
-- a cursor taken from what was exposed never skips a late commit. Call it in its own
-- statement BEFORE the statement that reads the rows (that statement's snapshot is
-- then taken after the horizon was measured).
CREATE FUNCTION lumen_visibility_horizon() RETURNS timestamptz
LANGUAGE sql STABLE AS $$
  SELECT least(
    now(),
    coalesce((
      SELECT min(xact_start) FROM pg_stat_activity
      WHERE datname = current_database()
        AND pid <> pg_backend_pid()
        AND xact_start IS NOT NULL
        AND application_name LIKE 'lumen%'
    ), now())
  )
$$;

CREATE FUNCTION lumen_stamp_updated_at() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.updated_at := now();
  RETURN NEW;
END $$;

CREATE TABLE reason (
  tenant_id  uuid NOT NULL REFERENCES tenant (id),
  code       text NOT NULL CHECK (code ~ '^[A-Za-z0-9_.-]{1,64}$'),
  name_pt    text NOT NULL CHECK (length(name_pt) BETWEEN 1 AND 200),
  name_en    text NOT NULL CHECK (length(name_en) BETWEEN 1 AND 200),
  priority   text NOT NULL CHECK (priority IN ('Low', 'Medium', 'High', 'Critical')),
  sla_hours  integer NOT NULL CHECK (sla_hours BETWEEN 1 AND 8760),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, code)
);

-- Every tenant has the default reason of unmapped requests.
CREATE FUNCTION lumen_seed_default_reason() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO reason (tenant_id, code, name_pt, name_en, priority, sla_hours)
  VALUES (NEW.id, 'EXTERNAL_OTHER', 'Outros (sistema externo)', 'Other (external system)', 'Medium', 24)
  ON CONFLICT DO NOTHING;
  RETURN NEW;
END $$;
CREATE TRIGGER tenant_default_reason AFTER INSERT ON tenant FOR EACH ROW EXECUTE FUNCTION lumen_seed_default_reason();
INSERT INTO reason (tenant_id, code, name_pt, name_en, priority, sla_hours)
SELECT id, 'EXTERNAL_OTHER', 'Outros (sistema externo)', 'Other (external system)', 'Medium', 24 FROM tenant
ON CONFLICT DO NOTHING;

-- Partner reason code -> internal reason, per partner (kept by the city operation).
CREATE TABLE reason_mapping (
  external_system_id uuid NOT NULL REFERENCES external_system (id),
  partner_code       text NOT NULL CHECK (length(partner_code) BETWEEN 1 AND 100),
  tenant_id          uuid NOT NULL,
  reason_code        text NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (external_system_id, partner_code),
  FOREIGN KEY (tenant_id, reason_code) REFERENCES reason (tenant_id, code)
);

CREATE TABLE team (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id  uuid NOT NULL REFERENCES tenant (id),
  name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, name)
);

CREATE TABLE pole (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id    uuid NOT NULL REFERENCES tenant (id),
  code         text NOT NULL CHECK (length(code) BETWEEN 1 AND 100),
  address      text NOT NULL DEFAULT '',
  neighborhood text NOT NULL DEFAULT '',
  latitude     double precision NOT NULL CHECK (latitude BETWEEN -90 AND 90),
  longitude    double precision NOT NULL CHECK (longitude BETWEEN -180 AND 180),
  active       boolean NOT NULL DEFAULT true,
  created_at   timestamptz NOT NULL DEFAULT now(),
  -- latest of the pole's own change and its telegestor's report or state change (N5)
  updated_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, code)
);
CREATE INDEX pole_sync_idx ON pole (tenant_id, updated_at, id);
CREATE TRIGGER pole_stamp BEFORE INSERT OR UPDATE ON pole FOR EACH ROW EXECUTE FUNCTION lumen_stamp_updated_at();

CREATE TABLE telegestor (
  id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id             uuid NOT NULL REFERENCES tenant (id),
  identifier            text NOT NULL CHECK (length(identifier) BETWEEN 1 AND 100),
  pole_id               uuid UNIQUE REFERENCES pole (id),
  -- all three null until the device first reports
  online                boolean,
  relay_on              boolean,
  last_communication_at timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, identifier)
);
CREATE TRIGGER telegestor_stamp BEFORE INSERT OR UPDATE ON telegestor FOR EACH ROW EXECUTE FUNCTION lumen_stamp_updated_at();

-- Per-tenant counters: service-order numbers per year (name 'service_order'),
-- alert numbers (name 'alert', year 0). Incremented with UPDATE ... RETURNING, so
-- concurrent writers serialise on the counter row and numbers never repeat.
CREATE TABLE tenant_counter (
  tenant_id uuid NOT NULL REFERENCES tenant (id),
  name      text NOT NULL,
  year      integer NOT NULL,
  value     bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, name, year)
);

CREATE TABLE service_order (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id    uuid NOT NULL REFERENCES tenant (id),
  number       text NOT NULL CHECK (number ~ '^OS-[0-9]{4}-[0-9]{5,}$'),
  status       text NOT NULL DEFAULT 'OPEN' CHECK (status IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS', 'COMPLETED', 'CANCELLED')),
  priority     text NOT NULL CHECK (priority IN ('Low', 'Medium', 'High', 'Critical')),
  reason_code  text NOT NULL,
  address      text NOT NULL,
  neighborhood text,
  latitude     double precision CHECK (latitude BETWEEN -90 AND 90),
  longitude    double precision CHECK (longitude BETWEEN -180 AND 180),
  pole_id      uuid REFERENCES pole (id),
  team_id      uuid REFERENCES team (id),
  sla_due_at   timestamptz NOT NULL,
  opened_at    timestamptz NOT NULL DEFAULT now(),
  closed_at    timestamptz,
  -- last sequence used by this order's events (N6 `sequence`)
  event_seq    integer NOT NULL DEFAULT 0,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, number),
  FOREIGN KEY (tenant_id, reason_code) REFERENCES reason (tenant_id, code)
);
CREATE INDEX service_order_sync_idx ON service_order (tenant_id, updated_at, id);
CREATE TRIGGER service_order_stamp BEFORE INSERT OR UPDATE ON service_order FOR EACH ROW EXECUTE FUNCTION lumen_stamp_updated_at();

CREATE TABLE alert (
  id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id            uuid NOT NULL REFERENCES tenant (id),
  external_system_id   uuid NOT NULL REFERENCES external_system (id),
  protocol_number      text NOT NULL,
  alert_number         bigint NOT NULL,
  status               text NOT NULL CHECK (status IN ('Pending', 'Linked', 'Resolved', 'Cancelled')),
  asset_type           text NOT NULL DEFAULT 'POLE' CHECK (asset_type = 'POLE'),
  requested_at         timestamptz NOT NULL,
  requester_name       text NOT NULL,
  requester_phone      text,
  lamp_type            text,
  partner_reason_code  text,
  reason_code          text NOT NULL,
  priority             text NOT NULL CHECK (priority IN ('Low', 'Medium', 'High', 'Critical')),
  sla_due_at           timestamptz NOT NULL,
  address_street       text NOT NULL,
  address_number       text,
  address_neighborhood text,
  address_reference    text,
  latitude             double precision CHECK (latitude BETWEEN -90 AND 90),
  longitude            double precision CHECK (longitude BETWEEN -180 AND 180),
  -- where the coordinates came from: payload, poles, geocoder, operator; null = not geolocated
  location_source      text CHECK (location_source IN ('payload', 'poles', 'geocoder', 'operator')),
  description          text NOT NULL,
  additional_notes     text,
  service_order_id     uuid REFERENCES service_order (id),
  cancel_reason        text,
  -- last sequence used by this alert's events when it has no order (Alert.Cancelled)
  event_seq            integer NOT NULL DEFAULT 0,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  UNIQUE (external_system_id, protocol_number),
  UNIQUE (tenant_id, alert_number),
  FOREIGN KEY (tenant_id, reason_code) REFERENCES reason (tenant_id, code),
  CHECK ((latitude IS NULL) = (longitude IS NULL)),
  CHECK ((status IN ('Linked', 'Resolved')) = (service_order_id IS NOT NULL))
);
CREATE INDEX alert_tenant_status_idx ON alert (tenant_id, status, created_at);
CREATE INDEX alert_service_order_idx ON alert (service_order_id) WHERE service_order_id IS NOT NULL;
CREATE INDEX alert_not_geolocated_idx ON alert (tenant_id, created_at) WHERE latitude IS NULL;
CREATE TRIGGER alert_stamp BEFORE INSERT OR UPDATE ON alert FOR EACH ROW EXECUTE FUNCTION lumen_stamp_updated_at();

CREATE TABLE alert_status_history (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  alert_id    uuid NOT NULL REFERENCES alert (id),
  from_status text,
  to_status   text NOT NULL,
  actor       text NOT NULL,
  note        text,
  at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX alert_status_history_alert_idx ON alert_status_history (alert_id, id);

CREATE TABLE service_order_status_history (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  service_order_id uuid NOT NULL REFERENCES service_order (id),
  from_status      text,
  to_status        text NOT NULL,
  actor            text NOT NULL,
  note             text,
  at               timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX service_order_status_history_order_idx ON service_order_status_history (service_order_id, id);

-- The transactional outbox: one row per event per addressed partner, written in
-- the same transaction as the change. payload is the N6 envelope exactly as both
-- transports deliver it.
CREATE TABLE event (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id          uuid NOT NULL REFERENCES tenant (id),
  external_system_id uuid NOT NULL REFERENCES external_system (id),
  event_type         text NOT NULL,
  alert_id           uuid NOT NULL REFERENCES alert (id),
  service_order_id   uuid REFERENCES service_order (id),
  sequence           integer NOT NULL CHECK (sequence >= 1),
  payload            jsonb NOT NULL,
  occurred_at        timestamptz NOT NULL DEFAULT now(),
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX event_partner_idx ON event (external_system_id, created_at, id);
CREATE INDEX event_created_idx ON event (created_at);
