-- Per-key request counters for rate limiting (N10), shared by every instance.
-- UNLOGGED: a counter lost in a crash only forgives one minute of requests, and
-- skipping the WAL keeps the per-request write cheap.
CREATE UNLOGGED TABLE rate_limit_window (
  subject      text NOT NULL,
  window_start bigint NOT NULL,
  count        integer NOT NULL,
  PRIMARY KEY (subject, window_start)
);
