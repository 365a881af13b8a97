-- Events polling in one round trip: GET /api/external/events ran, after the key check,
-- a read for undoable actions due, BEGIN, an INSERT of the cursor row, SELECT … FOR
-- UPDATE of it, the read of what is positioned, often the positioning statement and an
-- UPDATE of the cursor, and COMMIT: six to eight round trips, each a wait for the
-- network and a turn of the pool, while the partner's cursor row stayed locked across
-- all of them. lumen_poll_events does the same work in one call; its statements and
-- their order are those of the transaction it replaces (src/services/events/polling.ts
-- and docs/sql/events-polling.md describe the call, and the gap-free argument stays the
-- one of migration 0011).
--
-- PL/pgSQL, as 0100 explains: a LANGUAGE sql function is planned again on every call.
-- The function is VOLATILE, so in READ COMMITTED each of its statements takes a snapshot
-- of its own, as each statement of the transaction did; the positioning statement reads
-- its candidates and pg_current_snapshot() under one snapshot, which is what the mark it
-- keeps relies on. The candidates are planned for the actual values on every call
-- (EXECUTE … USING): see the comments of the positioning statement below.

-- The positioning mark (mark_seq, mark_snapshot: event_cursor.positioned_seq and
-- positioned_snapshot) after a positioning that chose `batch_taken` of at most
-- `batch_count` events, the greatest write_seq among them `batch_max_seq` (null for
-- none), under the statement's snapshot `batch_snapshot`. Keeps the invariant of 0011:
--
--   every committed event without a position has write_seq > positioned_seq,
--   or a writer that positioned_snapshot does not see
--
-- - seq becomes the greatest write_seq positioned;
-- - the snapshot becomes the statement's: every committed event it sees was a candidate
--   and got a position, and one it does not see has a writer it does not see. Except
--   when the call filled its batch with late events alone: some may be left, so the
--   snapshot stays. A batch that takes any event after the old seq took every late
--   candidate, all of them being earlier in write order.
-- - both stay null until something is positioned.
-- test/events/position-mark.test.ts pins these cases. PL/pgSQL for the reason of 0100:
-- called from lumen_poll_events, a LANGUAGE sql function would be planned on each call.
CREATE FUNCTION lumen_position_mark(
  mark_seq bigint, mark_snapshot pg_snapshot, batch_count integer, batch_taken integer, batch_max_seq bigint,
  batch_snapshot pg_snapshot, OUT next_seq bigint, OUT next_snapshot pg_snapshot)
LANGUAGE plpgsql IMMUTABLE AS $fn$
BEGIN
  next_seq := greatest(mark_seq, batch_max_seq);
  next_snapshot := CASE
    WHEN next_seq IS NULL THEN NULL
    WHEN batch_taken = batch_count AND mark_seq IS NOT NULL AND batch_max_seq IS NOT NULL AND batch_max_seq <= mark_seq THEN mark_snapshot
    ELSE batch_snapshot
  END;
END
$fn$;

-- One events poll of partner `p_partner` (GET /api/external/events), with its cursor row
-- locked for the call. Answers, in this order:
--
-- 1. when `p_release_check` and an undoable action's window has passed: one row with
--    `due` true, and nothing else done (no lock taken, nothing read or written). The
--    caller releases the due actions (held events go to the outbox first,
--    src/services/events/hold.ts) and calls again without the check;
-- 2. when the partner's minimum interval refuses the call: one row with `retry_after`
--    (seconds) and `min_interval`; nothing confirmed or written;
-- 3. otherwise a first row with `next_since` and `has_more`, then the page's events in
--    order (`event_body` null for an event gone while its position stayed, and for every
--    event when `p_bodies` is false: the caller then reads the envelopes elsewhere).
CREATE FUNCTION lumen_poll_events(p_partner uuid, p_since timestamptz, p_limit integer, p_bodies boolean, p_release_check boolean)
RETURNS TABLE (due boolean, retry_after integer, min_interval integer, next_since timestamptz, has_more boolean,
               event_body text, event_published_at timestamptz, event_write_seq bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_cursor record;
  v_confirmed timestamptz;
  v_wait_ms numeric;
  -- what is positioned and unconfirmed (limit + 1 at most), then what was positioned
  v_read_body text[];
  v_read_time timestamptz[];
  v_read_seq bigint[];
  v_placed_body text[];
  v_placed_time timestamptz[];
  v_placed_seq bigint[];
  v_read_n integer;
  v_taken integer := 0;
  v_max_seq bigint;
  v_snapshot pg_snapshot;
  v_body_expr text;
  v_candidates text;
  v_mark_seq bigint;
  v_mark_snapshot pg_snapshot;
  v_last_published timestamptz;
  v_page_n integer;
  v_last_returned timestamptz;
  v_more boolean;
BEGIN
  -- Held events whose undo window has passed go to the outbox first, so a partner
  -- polling never waits for the pump's next round to see them; almost always none is
  -- due (one lookup in undoable_action_due_idx).
  IF p_release_check AND EXISTS (SELECT 1 FROM undoable_action a WHERE a.settled IS NULL AND a.release_at <= now()) THEN
    due := true;
    RETURN NEXT;
    RETURN;
  END IF;

  -- The cursor row, created on the first call, locked until the call ends.
  SELECT c.confirmed_at, c.last_published_at, c.last_returned_at, c.positioned_seq, c.positioned_snapshot,
         c.last_poll_at, c.last_has_more, x.events_min_interval_seconds AS min_interval_seconds
    INTO v_cursor
    FROM event_cursor c JOIN external_system x ON x.id = c.external_system_id
   WHERE c.external_system_id = p_partner
     FOR UPDATE OF c;
  IF NOT FOUND THEN
    INSERT INTO event_cursor (external_system_id) VALUES (p_partner) ON CONFLICT (external_system_id) DO NOTHING;
    SELECT c.confirmed_at, c.last_published_at, c.last_returned_at, c.positioned_seq, c.positioned_snapshot,
           c.last_poll_at, c.last_has_more, x.events_min_interval_seconds AS min_interval_seconds
      INTO STRICT v_cursor
      FROM event_cursor c JOIN external_system x ON x.id = c.external_system_id
     WHERE c.external_system_id = p_partner
       FOR UPDATE OF c;
  END IF;

  -- The partner's optional minimum interval applies only after a call that answered
  -- hasMore false; a partner draining a backlog is never held back. Counted in whole
  -- milliseconds, as the service counted it before.
  IF coalesce(v_cursor.min_interval_seconds, 0) <> 0 AND v_cursor.last_poll_at IS NOT NULL AND v_cursor.last_has_more IS NOT TRUE THEN
    v_wait_ms := v_cursor.min_interval_seconds * 1000
      - (extract(epoch FROM date_trunc('milliseconds', now())) - extract(epoch FROM date_trunc('milliseconds', v_cursor.last_poll_at))) * 1000;
    IF v_wait_ms > 0 THEN
      retry_after := greatest(1, ceil(v_wait_ms / 1000));
      min_interval := v_cursor.min_interval_seconds;
      RETURN NEXT;
      RETURN;
    END IF;
  END IF;

  -- Confirmation moves forward only, and never past the greatest position returned.
  v_confirmed := v_cursor.confirmed_at;
  IF p_since IS NOT NULL AND v_cursor.last_returned_at IS NOT NULL THEN
    IF v_confirmed IS NULL OR least(p_since, v_cursor.last_returned_at) > v_confirmed THEN
      v_confirmed := least(p_since, v_cursor.last_returned_at);
    END IF;
  END IF;

  -- What is positioned and unconfirmed, limit + 1 positions. They are cut before the
  -- join, so only the events served are read; a position whose event is gone still
  -- counts (no later position is served in its place). payload (jsonb) is converted only
  -- for an event without body.
  SELECT coalesce(array_agg(r.body ORDER BY r.published_at), '{}'),
         coalesce(array_agg(r.published_at ORDER BY r.published_at), '{}'),
         coalesce(array_agg(r.write_seq ORDER BY r.published_at), '{}')
    INTO v_read_body, v_read_time, v_read_seq
    FROM (SELECT CASE WHEN p_bodies THEN coalesce(e.body, e.payload::text) END AS body, p.published_at, p.write_seq
            FROM (SELECT ep.external_system_id, ep.write_seq, ep.published_at FROM event_position ep
                   WHERE ep.external_system_id = p_partner AND ep.published_at > coalesce(v_confirmed, '-infinity')
                   ORDER BY ep.published_at LIMIT p_limit + 1) p
            LEFT JOIN event e ON e.external_system_id = p.external_system_id AND e.write_seq = p.write_seq) r;
  v_read_n := coalesce(array_length(v_read_seq, 1), 0);

  v_mark_seq := v_cursor.positioned_seq;
  v_mark_snapshot := v_cursor.positioned_snapshot;
  v_last_published := v_cursor.last_published_at;
  v_placed_body := '{}';
  v_placed_time := '{}';
  v_placed_seq := '{}';

  IF v_read_n <= p_limit THEN
    -- Positions for what that leaves short of limit + 1: the partner's committed events
    -- without a position, in write order, the first at max(now, last + 1 ms), each next
    -- one 1 ms later. Events of transactions still open are invisible to this statement
    -- and are positioned by a later call.
    --
    -- The candidates are the events after the mark's seq in write order (none of them
    -- has a position) and those at or before it without a position whose writer the
    -- mark's snapshot did not see (transactions that committed late), so a call never
    -- walks the positioned part of a backlog.
    --
    -- Writers the snapshot did not see: at or above its xmax (one index range) or on its
    -- list of running transactions (one index lookup each). Both come as values ($5, $6),
    -- not as expressions of the stored snapshot, and the statement is planned for them
    -- on every call (EXECUTE … USING, no cached generic plan): estimated blind, events
    -- written before 0011 (all with writer 0) made the list's lookup a sequential scan of
    -- the whole table. A snapshot beyond every id this one knows came from another
    -- cluster (a logical restore): then it is read as seeing nothing.
    -- Both lookups are fenced (OFFSET 0): the write_seq bound must not draw the planner
    -- into walking the partner's history in write order, and the position check must
    -- stay one index lookup per candidate (as an anti-join, with statistics that still
    -- showed the partner with few positions, it was planned as a scan of all of them per
    -- candidate: 88 s for 30,000 candidates, against 0.24 s).
    v_body_expr := CASE WHEN p_bodies THEN 'coalesce(body, payload::text)' ELSE 'NULL::text' END;
    v_candidates := format($q$SELECT write_seq, %s AS body FROM event
      WHERE external_system_id = $1 AND write_seq > $2
      ORDER BY write_seq LIMIT $3$q$, v_body_expr);
    IF v_cursor.positioned_seq IS NOT NULL AND v_cursor.positioned_snapshot IS NOT NULL THEN
      v_candidates := format($q$(%s)
      UNION ALL
      (SELECT write_seq, body FROM (
        SELECT write_seq, %s AS body FROM event
        WHERE external_system_id = $1 AND write_xid >= CASE WHEN $5 > pg_snapshot_xmax(pg_current_snapshot()) THEN '0'::xid8 ELSE $5 END
        UNION ALL
        SELECT write_seq, %s AS body FROM event
        WHERE external_system_id = $1 AND write_xid = ANY ($6) AND NOT $5 > pg_snapshot_xmax(pg_current_snapshot())
        OFFSET 0
      ) late
      WHERE write_seq <= $2
        AND NOT EXISTS (SELECT 1 FROM event_position p WHERE p.external_system_id = $1 AND p.write_seq = late.write_seq OFFSET 0)
      ORDER BY write_seq LIMIT $3)$q$, v_candidates, v_body_expr, v_body_expr);
    END IF;
    EXECUTE format($q$
      WITH todo AS (
        SELECT write_seq, body, row_number() OVER (ORDER BY write_seq) AS rn
        FROM (%s) c
        ORDER BY write_seq
        LIMIT $3
      ), base AS (
        SELECT greatest(
          date_trunc('milliseconds', clock_timestamp()),
          coalesce($4 + interval '1 millisecond', '-infinity'::timestamptz)
        ) AS t
      ), placed AS (
        INSERT INTO event_position (external_system_id, published_at, write_seq)
        SELECT $1, base.t + (todo.rn - 1) * interval '1 millisecond', todo.write_seq
        FROM todo, base
        RETURNING write_seq, published_at
      ), taken AS (
        SELECT count(*)::int AS n, max(write_seq) AS max_seq FROM todo
      )
      SELECT pg_current_snapshot(), taken.n, taken.max_seq,
             coalesce(pl.bodies, '{}'), coalesce(pl.times, '{}'), coalesce(pl.seqs, '{}')
      FROM taken, (
        SELECT array_agg(t.body ORDER BY p.published_at) AS bodies,
               array_agg(p.published_at ORDER BY p.published_at) AS times,
               array_agg(p.write_seq ORDER BY p.published_at) AS seqs
        FROM placed p JOIN todo t ON t.write_seq = p.write_seq
      ) pl$q$, v_candidates)
      INTO v_snapshot, v_taken, v_max_seq, v_placed_body, v_placed_time, v_placed_seq
      USING p_partner, coalesce(v_cursor.positioned_seq, 0), p_limit + 1 - v_read_n, v_cursor.last_published_at,
            pg_snapshot_xmax(v_cursor.positioned_snapshot), ARRAY(SELECT pg_snapshot_xip(v_cursor.positioned_snapshot));
    -- Nothing positioned: the old mark stays (a newer snapshot alone would move the
    -- cursor, and write it, on every idle poll). Keeping it is safe: the next call looks
    -- again from the same mark, at worst over the same in-progress transactions.
    IF v_taken > 0 THEN
      SELECT m.next_seq, m.next_snapshot INTO v_mark_seq, v_mark_snapshot
        FROM lumen_position_mark(v_cursor.positioned_seq, v_cursor.positioned_snapshot, p_limit + 1 - v_read_n, v_taken, v_max_seq, v_snapshot) m;
    END IF;
    IF cardinality(v_placed_seq) > 0 THEN
      v_last_published := v_placed_time[cardinality(v_placed_time)];
    END IF;
  END IF;

  -- hasMore is exactly "a (limit + 1)th event was found"; nextSince is the position of
  -- the last event returned, so confirming it confirms exactly what was returned.
  v_more := v_read_n + v_taken > p_limit;
  v_read_body := v_read_body || v_placed_body;
  v_read_time := v_read_time || v_placed_time;
  v_read_seq := v_read_seq || v_placed_seq;
  v_page_n := least(cardinality(v_read_seq), p_limit);
  v_last_returned := CASE WHEN v_page_n > 0 THEN v_read_time[v_page_n] END;

  -- Written only when the cursor moves, or, for a partner with a minimum interval, to
  -- time the next call (at most once per interval: faster calls were refused above).
  -- An idle partner polling in a loop writes nothing.
  IF v_confirmed IS DISTINCT FROM v_cursor.confirmed_at
     OR v_last_published IS DISTINCT FROM v_cursor.last_published_at
     OR greatest(v_cursor.last_returned_at, v_last_returned) IS DISTINCT FROM v_cursor.last_returned_at
     OR v_mark_seq IS DISTINCT FROM v_cursor.positioned_seq
     OR v_mark_snapshot::text IS DISTINCT FROM v_cursor.positioned_snapshot::text
     OR v_more IS DISTINCT FROM v_cursor.last_has_more
     OR coalesce(v_cursor.min_interval_seconds, 0) <> 0 THEN
    UPDATE event_cursor c
       SET confirmed_at = v_confirmed,
           last_published_at = v_last_published,
           last_returned_at = greatest(v_cursor.last_returned_at, v_last_returned),
           positioned_seq = v_mark_seq,
           positioned_snapshot = v_mark_snapshot,
           last_has_more = v_more,
           last_poll_at = now(),
           updated_at = now()
     WHERE c.external_system_id = p_partner;
  END IF;

  due := false;
  next_since := coalesce(v_last_returned, v_confirmed, 'epoch'::timestamptz);
  has_more := v_more;
  RETURN NEXT;
  RETURN QUERY
    SELECT NULL::boolean, NULL::integer, NULL::integer, NULL::timestamptz, NULL::boolean, u.b, u.t, u.s
      FROM unnest(v_read_body[1:v_page_n], v_read_time[1:v_page_n], v_read_seq[1:v_page_n]) WITH ORDINALITY AS u (b, t, s, i)
     ORDER BY u.i;
END
$fn$;
