-- The claim of due webhook deliveries (claimDueDeliveries in
-- src/db/repositories/webhook-delivery.repository.ts) as a function, for one planner
-- setting the statement cannot carry: no bitmap scans. A burst of new deliveries lies
-- beyond the statistics of next_attempt_at, so the planner expected a few dozen due rows
-- and read all of them (a bitmap scan, the ordering probe for each, then a sort) to keep
-- the oldest 128: 16 ms per claim with 10,000 due, which was most of a fan-out's time.
-- Walking webhook_delivery_ready_idx in order stops after the batch: 2.5 ms. PL/pgSQL
-- keeps the plan for the connection, so the claim is neither parsed nor planned again.
CREATE FUNCTION lumen_claim_webhook_deliveries(
  p_limit int, p_lease_ms int, p_per_partner int, p_held_ids uuid[], p_held_counts int[], p_test_ping text)
RETURNS TABLE (
  id uuid, external_system_id uuid, ordering_key uuid, attempts int, event_id uuid, event_type text, body text,
  partner_code text, enabled boolean, transport text, webhook_url text, webhook_secret_enc text,
  webhook_signature text, webhook_previous_secret_enc text)
LANGUAGE plpgsql VOLATILE
SET enable_bitmapscan = off
AS $$
#variable_conflict use_column
BEGIN
  -- A lease lost in a crash of PostgreSQL only lets another attempt start: no WAL flush wait.
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN QUERY
    WITH held AS MATERIALIZED (
      SELECT h.external_system_id, h.n FROM unnest(p_held_ids, p_held_counts) AS h(external_system_id, n)),
    candidates AS MATERIALIZED (
      SELECT c.id, c.external_system_id, c.next_attempt_at, c.event_id, c.test_event_id FROM webhook_delivery c
      WHERE c.status IN ('pending', 'failed') AND NOT c.blocked AND c.next_attempt_at <= now()
        AND (c.lease_until IS NULL OR c.lease_until < now())
        AND NOT EXISTS (SELECT 1 FROM webhook_delivery p
                        WHERE p.external_system_id = c.external_system_id AND p.ordering_key = c.ordering_key
                          AND p.position < c.position AND p.status IN ('pending', 'failed'))
        AND NOT EXISTS (SELECT 1 FROM held f WHERE f.external_system_id = c.external_system_id AND f.n >= p_per_partner)
      ORDER BY c.next_attempt_at
      LIMIT p_limit
      FOR UPDATE OF c SKIP LOCKED),
    picked AS MATERIALIZED (
      SELECT r.id, r.event_id, r.test_event_id FROM (
        SELECT k.id, k.next_attempt_at, k.event_id, k.test_event_id,
               row_number() OVER (PARTITION BY k.external_system_id ORDER BY k.next_attempt_at) + coalesce(f.n, 0) AS slot
        FROM candidates k LEFT JOIN held f ON f.external_system_id = k.external_system_id) r
      WHERE r.slot <= p_per_partner)
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
