-- The webhook claim walks each partner's due deliveries on their own, and never walks a
-- partner it may not take from.
--
-- The claim of 0099 walked webhook_delivery_ready_idx, every partner's due deliveries in
-- one order, and dropped the partners held at their lease limit row by row, after the
-- ordering probe of each row. A partner at its limit with a backlog (the usual state of a
-- fan-out: its in-flight attempts and leases are full while thousands wait) made every
-- claim pass over its whole backlog to return nothing: in a fan-out of 10,000 events to
-- one partner, half of the claims came back empty after 10-30 ms each, 1.5 s of the
-- database's 3.6 s. It also let one partner's backlog fill a claim's LIMIT before the
-- per-partner cap was applied, so a claim could return a partner's cap and nothing of the
-- partners behind it.
--
-- Now the index is per partner, (external_system_id, next_attempt_at) over the same open,
-- unblocked rows. The claim finds the partners that have such rows with one probe each
-- (a loose scan of that index), skips those the caller holds at the limit without
-- reading their rows, takes up to each other partner's remaining slots from the head of
-- its own range, oldest due first, and keeps the oldest `p_limit` of those. Ordering per
-- service order, SKIP LOCKED and everything the claim returns are as before.
CREATE INDEX webhook_delivery_ready_partner_idx ON webhook_delivery (external_system_id, next_attempt_at)
  WHERE status IN ('pending', 'failed') AND NOT blocked;
-- Its only reader was the claim. The minute sweep (overdueDeliveries) reads the new index
-- instead: it runs once a minute over the open rows.
DROP INDEX webhook_delivery_ready_idx;

CREATE OR REPLACE FUNCTION lumen_claim_webhook_deliveries(
  p_limit int, p_lease_ms int, p_per_partner int, p_held_ids uuid[], p_held_counts int[], p_test_ping text)
RETURNS TABLE (
  id uuid, external_system_id uuid, ordering_key uuid, attempts int, event_id uuid, event_type text, body text,
  partner_code text, enabled boolean, transport text, webhook_url text, webhook_secret_enc text,
  webhook_signature text, webhook_previous_secret_enc text)
LANGUAGE plpgsql VOLATILE
-- As 0099 and 0103: no bitmap scan (it would read every due row of a partner to keep a
-- few), no sequential scan, and a plan made for each call's table.
SET enable_bitmapscan = off
SET enable_seqscan = off
SET plan_cache_mode = force_custom_plan
AS $$
#variable_conflict use_column
BEGIN
  -- A lease lost in a crash of PostgreSQL only lets another attempt start: no WAL flush wait.
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN QUERY
    WITH RECURSIVE partners AS (
      -- Every partner with an open, unblocked delivery: one index probe each.
      (SELECT w.external_system_id FROM webhook_delivery w
        WHERE w.status IN ('pending', 'failed') AND NOT w.blocked
        ORDER BY w.external_system_id LIMIT 1)
      UNION ALL
      SELECT (SELECT w.external_system_id FROM webhook_delivery w
               WHERE w.status IN ('pending', 'failed') AND NOT w.blocked AND w.external_system_id > s.external_system_id
               ORDER BY w.external_system_id LIMIT 1)
      FROM partners s WHERE s.external_system_id IS NOT NULL),
    slots AS MATERIALIZED (
      -- What each partner may still be given: its cap less what the caller holds, never more than the batch.
      SELECT s.external_system_id, least(p_limit, p_per_partner - coalesce(h.n, 0)) AS n
      FROM partners s LEFT JOIN unnest(p_held_ids, p_held_counts) AS h(external_system_id, n) ON h.external_system_id = s.external_system_id
      WHERE s.external_system_id IS NOT NULL AND p_per_partner - coalesce(h.n, 0) > 0),
    candidates AS MATERIALIZED (
      SELECT q.id, q.next_attempt_at, q.event_id, q.test_event_id
      FROM slots s CROSS JOIN LATERAL (
        SELECT c.id, c.next_attempt_at, c.event_id, c.test_event_id FROM webhook_delivery c
        WHERE c.external_system_id = s.external_system_id
          AND c.status IN ('pending', 'failed') AND NOT c.blocked AND c.next_attempt_at <= now()
          AND (c.lease_until IS NULL OR c.lease_until < now())
          -- One probe of the open-key index per row walked (OFFSET 0 keeps it a probe: as an
          -- anti-join the planner may match on the partner alone and read the partner's whole
          -- backlog for each row, as it did here in a fan-out).
          AND NOT EXISTS (SELECT 1 FROM webhook_delivery p
                          WHERE p.external_system_id = c.external_system_id AND p.ordering_key = c.ordering_key
                            AND p.position < c.position AND p.status IN ('pending', 'failed')
                          OFFSET 0)
        ORDER BY c.next_attempt_at
        LIMIT s.n
        FOR UPDATE OF c SKIP LOCKED) q),
    picked AS MATERIALIZED (
      -- The oldest due of what the partners may be given. Candidates left out stay unleased;
      -- their row locks end with the claim's transaction, which is this call.
      SELECT k.id, k.event_id, k.test_event_id FROM candidates k ORDER BY k.next_attempt_at LIMIT p_limit)
    UPDATE webhook_delivery d SET lease_until = now() + p_lease_ms * interval '1 millisecond'
    FROM picked LEFT JOIN event e ON e.id = picked.event_id LEFT JOIN test_event t ON t.id = picked.test_event_id,
      external_system x
    WHERE d.id = picked.id AND (e.id IS NOT NULL OR t.id IS NOT NULL) AND x.id = d.external_system_id
    RETURNING d.id, d.external_system_id, d.ordering_key, d.attempts,
      coalesce(e.id, t.id), coalesce(e.event_type, p_test_ping), coalesce(e.body, e.payload::text, t.body),
      x.code, x.enabled, x.transport, x.webhook_url, x.webhook_secret_enc, x.webhook_signature,
      CASE WHEN x.webhook_previous_secret_until > now() THEN x.webhook_previous_secret_enc END;
END
$$;
