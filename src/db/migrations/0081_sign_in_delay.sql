-- Sign-in throttling by delay rather than lockout (src/services/operators/sessions.ts):
-- the wait after a key's failures doubles with each one past the limit, counted from the
-- last failure, so the time of the last one is kept.
ALTER TABLE sign_in_failure ADD COLUMN last_failure_at timestamptz NOT NULL DEFAULT now();
