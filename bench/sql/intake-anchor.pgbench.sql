-- Anchor of the intake row: the rows Lumen's POST /api/external/service-orders
-- writes in automatic mode with an Idempotency-Key, in the statements Lumen writes
-- them with. Same tables, same triggers and indexes, the same per-city number
-- sequences every client takes from; no HTTP, no validation, no reads.
--   1. The alert number and the order number, both from the city's sequences
--      (lumen_take_number, migration 0112) in one statement committed on its own with
--      synchronous_commit off for that transaction
--      (src/db/repositories/counter.repository.ts).
--   2. One statement, its own transaction: the numbered order and its status history,
--      the alert and its status history, the idempotency row with the stored response
--      (src/db/repositories/intake/request.repository.ts).
-- Variables (-D): tenant, partner (uuids), year.
WITH taken AS MATERIALIZED (
  SELECT n.name, lumen_take_number(:tenant, n.name, n.year) AS value, set_config('synchronous_commit', 'off', true) AS commit_mode
    FROM (VALUES (1, 'alert', 0), (2, 'service_order', :year)) AS n(ord, name, year)
   ORDER BY n.ord
)
SELECT max(value) FILTER (WHERE name = 'alert') AS alert_number, max(value) FILTER (WHERE name = 'service_order') AS order_seq FROM taken \gset
WITH ids AS MATERIALIZED (
  SELECT gen_random_uuid() AS order_id, gen_random_uuid() AS alert_id, 'PGB-' || gen_random_uuid() AS protocol_number
), new_order AS (
  INSERT INTO service_order (id, tenant_id, number, status, priority, reason_code, address, neighborhood, latitude, longitude, sla_due_at)
  SELECT order_id, :tenant, 'OS-' || :year::text || '-' || lpad(:order_seq::text, greatest(5, length(:order_seq::text)), '0'), 'OPEN', 'Medium', 'EXTERNAL_OTHER',
         'Rua Augusta, 1500', 'Consolação', -23.5558, -46.6623, now() + make_interval(hours => 24)
    FROM ids
), new_order_history AS (
  INSERT INTO service_order_status_history (service_order_id, from_status, to_status, actor, note)
  SELECT order_id, NULL, 'OPEN', 'partner-bench', 'created at intake of ' || protocol_number FROM ids
), new_alert AS (
  INSERT INTO alert (id, tenant_id, external_system_id, protocol_number, alert_number, status, requested_at, requester_name,
                     requester_phone, lamp_type, partner_reason_code, reason_code, priority, sla_due_at, address_street,
                     address_number, address_neighborhood, address_reference, latitude, longitude, location_source,
                     description, additional_notes, service_order_id)
  SELECT alert_id, :tenant, :partner, protocol_number, :alert_number, 'Linked', now() - interval '5 minutes', 'Maria da Silva',
         '+5511987654321', 'LED', NULL, 'EXTERNAL_OTHER', 'Medium', now() + make_interval(hours => 24), 'Rua Augusta',
         '1500', 'Consolação', 'Em frente à padaria', -23.5558, -46.6623, 'payload',
         'Lâmpada apagada há três noites', 'Poste com fiação exposta', order_id
    FROM ids
), new_alert_history AS (
  INSERT INTO alert_status_history (alert_id, from_status, to_status, actor) SELECT alert_id, NULL, 'Linked', 'partner-bench' FROM ids
), body AS (
  SELECT json_build_object(
           'id', order_id::text, 'internalProtocol', 'OS-' || :year::text || '-' || lpad(:order_seq::text, greatest(5, length(:order_seq::text)), '0'),
           'protocolNumber', protocol_number, 'assetType', 'POLE', 'status', 'OPEN', 'priority', 'Medium', 'createdAt', now(),
           'alert', json_build_object('id', alert_id::text, 'alertNumber', :alert_number::bigint, 'alertReasonCode', 'EXTERNAL_OTHER',
             'alertReasonName', 'Outros (sistema externo)', 'requesterName', 'Maria da Silva', 'requesterPhone', '+5511987654321',
             'description', 'Lâmpada apagada há três noites', 'additionalNotes', 'Poste com fiação exposta', 'lampType', 'LED',
             'externalRequestedAt', now() - interval '5 minutes', 'latitude', -23.5558, 'longitude', -46.6623,
             'status', 'Linked', 'attachments', json_build_array()))::text AS r, alert_id
    FROM ids
)
INSERT INTO idempotency_key (external_system_id, key, request_hash, alert_id, response_status, response_body)
SELECT :partner, gen_random_uuid(), sha256(convert_to(r, 'UTF8')), alert_id, 201, r FROM body;
