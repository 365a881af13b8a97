-- The visibility horizon (0016, 0030) as PL/pgSQL: same body, same answer.
--
-- As a LANGUAGE sql function that cannot be inlined (it has CTEs), every call planned
-- its body again: about 0.5 ms per call on the bench machine against 0.1 ms for this
-- version, whose statement is planned once per connection and kept (bench/FINDINGS.md,
-- "Issue 26"). Every page of the city lists calls it once. A STABLE PL/pgSQL function
-- runs in the calling statement's snapshot: pg_current_snapshot() and
-- statement_timestamp() inside are the caller's, so a page statement that calls it
-- reads the horizon of its own snapshot, as before.
CREATE OR REPLACE FUNCTION lumen_visibility_horizon() RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $fn$
BEGIN
  RETURN (
WITH s AS (SELECT pg_current_snapshot() AS snap, pg_is_in_recovery() AS standby),
  sessions AS (
    -- xid8 and the 32-bit xid pg_stat_activity shows: running ids are never 2^32 apart
    SELECT backend_xid::text::bigint AS x, datname = current_database() AS here, xact_start
      FROM pg_stat_activity WHERE backend_xid IS NOT NULL
  ),
  elsewhere AS (
    SELECT x FROM sessions WHERE NOT here
    UNION ALL
    SELECT transaction::text::bigint FROM pg_prepared_xacts WHERE database <> current_database()
  ),
  running AS (
    SELECT r.x, (SELECT min(a.xact_start) FROM sessions a WHERE a.here AND a.x = r.x::text::bigint % 4294967296) AS started
      FROM s, pg_snapshot_xip(s.snap) AS r (x)
     WHERE NOT s.standby
       AND NOT EXISTS (SELECT 1 FROM elsewhere e WHERE e.x = r.x::text::bigint % 4294967296)
       AND pg_xact_status(r.x) = 'in progress'
  ),
  bounds AS (SELECT min(started) AS started, min(x) FILTER (WHERE started IS NULL) AS unknown FROM running)
  SELECT least(
    -- writers not running yet get their ids after this (on a primary)
    CASE WHEN NOT s.standby THEN CASE WHEN current_setting('transaction_isolation') = 'read committed' THEN statement_timestamp() ELSE now() END END,
    b.started,
    CASE WHEN s.standby OR b.unknown IS NOT NULL THEN coalesce((
      SELECT c.at FROM lumen_xid_clock c
       WHERE c.xid < CASE WHEN s.standby THEN pg_snapshot_xmin(s.snap) ELSE b.unknown END
       ORDER BY c.xid DESC LIMIT 1
    ), '-infinity') END
  )
  FROM s, bounds b
  );
END
$fn$;
