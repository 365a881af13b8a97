-- The visibility horizon for every writer, from PostgreSQL's own MVCC state.
--
-- Readers of the city lists expose only rows stamped below a horizon H such that no
-- transaction still running (or not begun) can write a stamp below H; a cursor taken
-- from what was exposed then never skips a late commit (N5). The horizon of 0002 found
-- the running writers in pg_stat_activity, and only those whose connection is named
-- lumen*: a psql session (or any other client) that changed a pole and held its
-- transaction open was not seen, and a standby's pg_stat_activity shows none of the
-- primary's sessions.
--
-- Now:
--
-- * A change stamp is taken when the writing transaction writes, not when it began:
--   lumen_write_stamp() first makes sure the transaction has its id (xid8), then
--   reads the clock, so every stamp of a transaction is later than the moment its id
--   was assigned. The stamp is kept for the rest of the transaction (a transaction-
--   local setting), so all rows of one transaction still share one stamp.
-- * lumen_xid_clock holds ticks: a clock reading taken BEFORE the tick's own
--   transaction id was assigned (src/db/horizon-clock.ts writes one every 100 ms).
--   Transaction ids are assigned in increasing order, so any transaction with an id
--   above a tick's got it after the tick's clock reading, and stamps after that.
-- * The horizon, from the snapshot S of the statement that reads it: the earliest
--   bound of the transactions S shows running (below), and on a primary the start
--   of the reading statement itself (of its transaction, outside READ COMMITTED),
--   which came before the snapshot: any writer not running then gets its id after
--   it. A transaction that S does not show running is finished before S.
--
-- Readers call it in its own statement BEFORE the statement that reads the rows, as
-- before; what src/services/city-data/total.ts proves from it still holds: a row
-- version committed after that statement was written by a transaction that had no id
-- or an id >= xmin when the horizon was read, so every stamp it writes is >= H.
-- Valid for any writer, and on a standby (its snapshot lists the primary's running
-- transactions; the ticks and stamps are the primary's clock, replicated).

CREATE TABLE lumen_xid_clock (
  xid xid8 PRIMARY KEY,
  -- read before xid was assigned
  at  timestamptz NOT NULL
);
-- This migration's own tick: its transaction gets its id here, after the clock read.
INSERT INTO lumen_xid_clock (xid, at)
SELECT pg_current_xact_id(), c FROM (SELECT clock_timestamp() AS c OFFSET 0) s;

-- The transaction's change stamp: taken once, after its id, in ISO form so that no
-- DateStyle or TimeZone setting changes it when read back.
CREATE FUNCTION lumen_write_stamp() RETURNS timestamptz
LANGUAGE sql VOLATILE AS $$
  SELECT coalesce(
    nullif(current_setting('lumen.write_stamp', true), ''),
    CASE WHEN pg_current_xact_id() IS NOT NULL
      THEN set_config('lumen.write_stamp', to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), true) END
  )::timestamptz
$$;

CREATE OR REPLACE FUNCTION lumen_stamp_updated_at() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.updated_at := lumen_write_stamp();
  RETURN NEW;
END $$;

-- 0013 skipped the stamp trigger when updated_at already was now() (the column
-- default); now() is the transaction's start, which may be before its id, so every
-- write is stamped.
DROP TRIGGER pole_stamp ON pole;
CREATE TRIGGER pole_stamp BEFORE INSERT OR UPDATE ON pole FOR EACH ROW EXECUTE FUNCTION lumen_stamp_updated_at();
DROP TRIGGER telegestor_stamp ON telegestor;
CREATE TRIGGER telegestor_stamp BEFORE INSERT OR UPDATE ON telegestor FOR EACH ROW EXECUTE FUNCTION lumen_stamp_updated_at();

-- 0004's touches: rows this transaction already stamped are skipped.
CREATE OR REPLACE FUNCTION lumen_touch_poles_of_devices() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  stamp timestamptz := lumen_write_stamp();
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE pole SET updated_at = stamp
     WHERE id IN (SELECT pole_id FROM new_rows WHERE pole_id IS NOT NULL) AND updated_at <> stamp;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE pole SET updated_at = stamp
     WHERE id IN (SELECT pole_id FROM old_rows WHERE pole_id IS NOT NULL) AND updated_at <> stamp;
  ELSE
    UPDATE pole SET updated_at = stamp
     WHERE id IN (
       SELECT unnest(ARRAY[n.pole_id, o.pole_id])
         FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE (n.identifier, n.pole_id, n.online, n.relay_on, n.last_communication_at)
              IS DISTINCT FROM (o.identifier, o.pole_id, o.online, o.relay_on, o.last_communication_at)
     ) AND updated_at <> stamp;
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION lumen_touch_orders_of_renamed_teams() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  stamp timestamptz := lumen_write_stamp();
BEGIN
  UPDATE service_order SET updated_at = stamp
   WHERE team_id IN (SELECT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE n.name IS DISTINCT FROM o.name)
     AND updated_at <> stamp;
  RETURN NULL;
END $$;

-- The bound of each running transaction Y of the snapshot, tightest first:
--
-- * Y has finished by now (pg_xact_status, read live after the snapshot): none. The
--   statement that reads the rows comes later and sees it.
-- * Y belongs to another database (pg_stat_activity or pg_prepared_xacts name it;
--   transaction ids are the cluster's): none, it cannot write these rows.
-- * pg_stat_activity shows the session running Y in this database: its xact_start
--   (the transaction began before it got its id, and stamps after that).
-- * otherwise (a prepared transaction, a session this role may not see without
--   pg_read_all_stats, a standby, which sees none of the primary's sessions): the
--   clock of the newest tick below Y.
--
-- pg_stat_activity only tightens a bound the snapshot and the ticks already give;
-- whatever it does not show is bounded by the ticks: later, never wrong.
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
     WHERE NOT EXISTS (SELECT 1 FROM elsewhere e WHERE e.x = r.x::text::bigint % 4294967296)
       AND pg_xact_status(r.x) = 'in progress'
  ),
  bounds AS (SELECT min(started) AS started, min(x) FILTER (WHERE started IS NULL) AS unknown FROM running)
  SELECT least(
    -- writers not running yet get their ids after this (on a primary)
    CASE WHEN NOT s.standby THEN CASE WHEN current_setting('transaction_isolation') = 'read committed' THEN statement_timestamp() ELSE now() END END,
    b.started,
    CASE WHEN s.standby OR b.unknown IS NOT NULL THEN coalesce((
      SELECT c.at FROM lumen_xid_clock c WHERE c.xid < coalesce(b.unknown, pg_snapshot_xmax(s.snap)) ORDER BY c.xid DESC LIMIT 1
    ), '-infinity') END
  )
  FROM s, bounds b
$$;
