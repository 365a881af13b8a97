-- Telemetry turned into work: a lamp reported off for longer than the tenant allows
-- becomes an alert (reason TELEMETRY_LAMP_OUT) through the intake path, at most one
-- open per pole.

-- Per tenant: how long a lamp may be out before an alert is raised (null: never, the
-- default), and the local night window in which a relay reported off means a dark street.
ALTER TABLE tenant
  ADD COLUMN lamp_out_after_minutes integer CHECK (lamp_out_after_minutes BETWEEN 1 AND 10080),
  ADD COLUMN night_starts time NOT NULL DEFAULT '18:00',
  ADD COLUMN night_ends time NOT NULL DEFAULT '06:00',
  ADD COLUMN timezone text NOT NULL DEFAULT 'America/Sao_Paulo';

-- Since when (by the reports' own clock) a device has reported itself offline, or its
-- relay off; null while it does not. Kept by the same statement that applies reports,
-- so an older report never moves them (reports apply newest-only).
ALTER TABLE telegestor
  ADD COLUMN offline_since timestamptz,
  ADD COLUMN relay_off_since timestamptz;

-- The last alert raised for a pole's lamp and the outage it was raised for
-- (`out_since`). While that alert is open no other is raised for the pole; once it is
-- closed, a new outage (another `out_since`: the device came back, or another night
-- began) raises a new one, but the same outage does not raise it again.
-- `recovered_noted_at`: a good report arrived while the alert was still Pending and a
-- note says so (once).
CREATE TABLE telemetry_lamp_out (
  pole_id            uuid PRIMARY KEY REFERENCES pole (id) ON DELETE CASCADE,
  tenant_id          uuid NOT NULL REFERENCES tenant (id),
  alert_id           uuid NOT NULL REFERENCES alert (id),
  out_since          timestamptz NOT NULL,
  opened_at          timestamptz NOT NULL DEFAULT now(),
  recovered_noted_at timestamptz
);
CREATE INDEX telemetry_lamp_out_tenant_idx ON telemetry_lamp_out (tenant_id);
