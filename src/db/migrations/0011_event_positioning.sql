-- Events polling: positions in a table of their own, given without walking what is
-- already positioned.
--
-- A position was a column of event (published_at), so giving one rewrote the whole
-- event row (body and payload, about 2 kB, and an entry in each of its indexes): 4-16 ms
-- and 430 kB of WAL per 200 events, and a dead row version per event for vacuum. A
-- position is now a narrow row of event_position.
--
-- Positioning walked the partner's events without a position from the first in write
-- order, through index entries of events positioned since the last vacuum. It now
-- starts after the greatest write_seq positioned so far (event_cursor.positioned_seq).
-- That alone would skip an event whose transaction took its write_seq early but
-- committed after later events were positioned, so the cursor also keeps the snapshot
-- of a positioning that took every event it could see (positioned_snapshot). An event
-- it could not see was written by a transaction still open then (listed in the
-- snapshot) or begun after it (an id at or above its xmax), so an event that commits
-- late is found by its writer's id (event_writer_idx). Gap-freedom rests on
--
--   every committed event without a position has write_seq > positioned_seq,
--   or a writer that positioned_snapshot does not see
--
-- which src/db/repositories/event-position.repository.ts keeps on every call.

-- No event may be written or positioned while positions move (an instance still
-- running the previous version would position into the column dropped below).
LOCK TABLE event, event_cursor IN ACCESS EXCLUSIVE MODE;

-- The event's position in its partner's polling stream: strictly increasing per
-- partner, millisecond precision (see 0006). The event is named by its write_seq (as
-- unique as its id): positions are given in write order, so both indexes take their
-- entries at the end instead of on a random page each, which after a checkpoint would
-- each cost a full-page image in the WAL. No foreign key: its check would lock every
-- event row positioned (a WAL record each); the trigger below removes a position with
-- its event.
CREATE TABLE event_position (
  external_system_id uuid NOT NULL,
  published_at       timestamptz NOT NULL CHECK (published_at = date_trunc('milliseconds', published_at)),
  write_seq          bigint NOT NULL,
  PRIMARY KEY (external_system_id, published_at),
  UNIQUE (external_system_id, write_seq)
);
INSERT INTO event_position (external_system_id, published_at, write_seq)
SELECT external_system_id, published_at, write_seq FROM event WHERE published_at IS NOT NULL;

CREATE FUNCTION lumen_event_position_forget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM event_position p USING gone g WHERE p.external_system_id = g.external_system_id AND p.write_seq = g.write_seq;
  RETURN NULL;
END $$;
CREATE TRIGGER event_position_forget AFTER DELETE ON event
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION lumen_event_position_forget();

-- Top-level transaction id of the event's writer. Rows written before this migration
-- get 0, except those that must be found by it (below).
ALTER TABLE event ADD COLUMN write_xid xid8 NOT NULL DEFAULT '0';
ALTER TABLE event ALTER COLUMN write_xid SET DEFAULT pg_current_xact_id();

ALTER TABLE event_cursor
  -- greatest write_seq given a position so far; null until the first one
  ADD COLUMN positioned_seq bigint,
  -- see above. Transaction ids belong to this cluster: after a logical restore into
  -- another one, a snapshot beyond every id it knows is read as "sees nothing" (every
  -- event is looked at once)
  ADD COLUMN positioned_snapshot pg_snapshot,
  -- greatest position ever returned; `since` never confirms past it, so a position
  -- given but not returned yet stays unconfirmed whatever `since` says
  ADD COLUMN last_returned_at timestamptz,
  ADD CHECK ((positioned_seq IS NULL) = (positioned_snapshot IS NULL));

-- Partners that have polled: start after what they had positioned. Every event is
-- committed now (the lock waited for its writer), so the only ones to find by id are
-- those without a position at or before that point (late commits not positioned yet):
-- they get this migration's id, and the snapshot set below does not see it.
CREATE TEMPORARY TABLE positioned_upto ON COMMIT DROP AS
SELECT external_system_id, max(write_seq) AS seq FROM event WHERE published_at IS NOT NULL GROUP BY external_system_id;
UPDATE event e SET write_xid = pg_current_xact_id()
FROM positioned_upto u
WHERE e.external_system_id = u.external_system_id AND e.published_at IS NULL AND e.write_seq <= u.seq;
-- What was returned to them was not kept; until now `since` could confirm up to the
-- greatest position given, so that stays their limit until a later one is returned.
UPDATE event_cursor c
SET positioned_seq = u.seq,
    positioned_snapshot = (pg_current_xact_id()::text || ':' || pg_current_xact_id()::text || ':')::pg_snapshot,
    last_returned_at = c.last_published_at
FROM positioned_upto u
WHERE u.external_system_id = c.external_system_id;

DROP INDEX event_published_idx;
DROP INDEX event_unpublished_idx;
ALTER TABLE event DROP COLUMN published_at;
-- Positioning: the partner's events after positioned_seq, and those whose writer the
-- snapshot did not see; reading: the event of a position.
CREATE INDEX event_write_idx ON event (external_system_id, write_seq);
CREATE INDEX event_writer_idx ON event (external_system_id, write_xid);
-- Statistics for the new table and columns, so the first polls are planned on them.
ANALYZE event, event_position;
