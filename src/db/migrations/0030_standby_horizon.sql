-- The visibility horizon on a standby (partner reads on a replica, LUMEN_READ_DATABASE_URL).
--
-- 0016 bounded a standby's horizon by the newest tick below its snapshot's xmax,
-- expecting the snapshot to list the primary's running transactions. It does not: a
-- snapshot taken during recovery keeps them all in its sub-transaction array, and
-- pg_current_snapshot() gives only the top-level list, which is then empty (tried on
-- a streaming replica: the primary shows '725:727:725', the standby '725:727:' while
-- 725 is open). Bounded by xmax, a transaction still open on the primary (or
-- committed there but not replayed yet) with an id below xmax would stamp rows below
-- the horizon the standby hands out, and a partner's cursor would pass them.
--
-- The standby's xmin is exact: it is the oldest transaction id the standby has not
-- seen finish (every id up to the newest one it has seen in the WAL is known to it as
-- assigned until its commit or abort is replayed). Every transaction with an id at or
-- above it gets its stamps after the newest tick below it was read, and every one
-- below it is replayed: the horizon of a standby is the clock of that tick. It lags
-- the primary's by the replay lag plus the age of the oldest transaction running
-- there, and never passes a change the standby has not replayed.
CREATE OR REPLACE FUNCTION lumen_visibility_horizon() RETURNS timestamptz
LANGUAGE sql STABLE AS $$
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
$$;
