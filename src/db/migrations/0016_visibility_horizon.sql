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
--   transaction id was assigned (src/db/horizon-clock.ts writes one every 200 ms).
--   Transaction ids are assigned in increasing order, so any transaction with an id
--   above a tick's got it after the tick's clock reading, and stamps after that.
-- * The horizon, from the snapshot S of the statement that reads it: the clock of
--   the newest committed tick whose id is below xmin(S) (every transaction below
--   xmin is finished; every one at or above it, or without an id yet, stamps later).
--   On a primary with no transaction running at all (xmin = xmax) it is the start of
--   the reading statement itself (of its transaction, outside READ COMMITTED), which
--   came before the snapshot, and any later writer gets its id after it.
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

CREATE OR REPLACE FUNCTION lumen_visibility_horizon() RETURNS timestamptz
LANGUAGE sql STABLE AS $$
  SELECT CASE
    WHEN pg_snapshot_xmin(s.snap) = pg_snapshot_xmax(s.snap) AND NOT pg_is_in_recovery()
      THEN CASE WHEN current_setting('transaction_isolation') = 'read committed' THEN statement_timestamp() ELSE now() END
    ELSE coalesce((
      SELECT c.at FROM lumen_xid_clock c WHERE c.xid < pg_snapshot_xmin(s.snap) ORDER BY c.xid DESC LIMIT 1
    ), '-infinity')
  END
  FROM (SELECT pg_current_snapshot() AS snap) s
$$;
