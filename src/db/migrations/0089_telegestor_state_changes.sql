-- A pole's lamp over time, for the operators' pole page: each applied telemetry report
-- that changes its device's state (online, relay) adds one row, with the report's own
-- time. Only changes are kept, not every report: a city of a million devices reporting
-- every few minutes writes a row when a lamp goes out or comes back, not at every beat.
-- Written by the same statement that applies the reports (applyDeviceStates).
CREATE TABLE telegestor_state_change (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id     uuid NOT NULL REFERENCES tenant (id),
  telegestor_id uuid NOT NULL REFERENCES telegestor (id) ON DELETE CASCADE,
  online        boolean NOT NULL,
  relay_on      boolean,
  reported_at   timestamptz NOT NULL
);
CREATE INDEX telegestor_state_change_device_idx ON telegestor_state_change (telegestor_id, reported_at DESC);

-- The pole page lists the orders on a pole: found by pole, not by scanning the city's.
CREATE INDEX service_order_pole_idx ON service_order (pole_id) WHERE pole_id IS NOT NULL;
