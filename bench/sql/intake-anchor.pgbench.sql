-- Anchor of the intake row: the rows Lumen's POST /api/external/service-orders
-- writes in automatic mode with an Idempotency-Key, as one bare SQL transaction.
-- Same tables, same triggers and indexes, the same per-tenant counter rows every
-- client contends on; no HTTP, no validation, no reads.
--   alert number and order number (tenant_counter upserts), the numbered order and
--   its status history, the alert and its status history, the idempotency row with
--   the stored response.
-- Variables (-D): tenant, partner (uuids), year.
BEGIN;
INSERT INTO tenant_counter AS c (tenant_id, name, year, value) VALUES (:tenant, 'alert', 0, 1)
  ON CONFLICT (tenant_id, name, year) DO UPDATE SET value = c.value + 1
  RETURNING value AS alert_number \gset
INSERT INTO tenant_counter AS c (tenant_id, name, year, value) VALUES (:tenant, 'service_order', :year, 1)
  ON CONFLICT (tenant_id, name, year) DO UPDATE SET value = c.value + 1
  RETURNING value AS order_seq \gset
INSERT INTO service_order (tenant_id, number, status, priority, reason_code, address, neighborhood, latitude, longitude, sla_due_at)
  VALUES (:tenant, 'OS-' || :year::text || '-' || lpad(:order_seq::text, 5, '0'), 'OPEN', 'Medium', 'EXTERNAL_OTHER',
          'Rua Augusta, 1500', 'Consolação', -23.5558, -46.6623, now() + make_interval(hours => 24))
  RETURNING id AS order_id, number AS order_number \gset
INSERT INTO service_order_status_history (service_order_id, from_status, to_status, actor, note)
  VALUES (:order_id, NULL, 'OPEN', 'partner-bench', 'created at intake');
INSERT INTO alert (tenant_id, external_system_id, protocol_number, alert_number, status, requested_at, requester_name,
                   requester_phone, lamp_type, partner_reason_code, reason_code, priority, sla_due_at, address_street,
                   address_number, address_neighborhood, address_reference, latitude, longitude, location_source,
                   description, additional_notes, service_order_id)
  VALUES (:tenant, :partner, 'PGB-' || gen_random_uuid(), :alert_number, 'Linked', now() - interval '5 minutes', 'Maria da Silva',
          '+5511987654321', 'LED', NULL, 'EXTERNAL_OTHER', 'Medium', now() + make_interval(hours => 24), 'Rua Augusta',
          '1500', 'Consolação', 'Em frente à padaria', -23.5558, -46.6623, 'payload',
          'Lâmpada apagada há três noites', 'Poste com fiação exposta', :order_id)
  RETURNING id AS alert_id, protocol_number \gset
INSERT INTO alert_status_history (alert_id, from_status, to_status, actor) VALUES (:alert_id, NULL, 'Linked', 'partner-bench');
INSERT INTO idempotency_key (external_system_id, key, request_hash, alert_id, response_status, response_body)
  SELECT :partner, gen_random_uuid(), sha256(convert_to(r, 'UTF8')), :alert_id, 201, r
    FROM (SELECT json_build_object(
            'id', :order_id::text, 'internalProtocol', :order_number::text, 'protocolNumber', :protocol_number::text, 'assetType', 'POLE',
            'status', 'OPEN', 'priority', 'Medium', 'createdAt', now(),
            'alert', json_build_object('id', :alert_id::text, 'alertNumber', :alert_number::bigint, 'alertReasonCode', 'EXTERNAL_OTHER',
              'alertReasonName', 'Outros (sistema externo)', 'requesterName', 'Maria da Silva', 'requesterPhone', '+5511987654321',
              'description', 'Lâmpada apagada há três noites', 'additionalNotes', 'Poste com fiação exposta', 'lampType', 'LED',
              'externalRequestedAt', now() - interval '5 minutes', 'latitude', -23.5558, 'longitude', -46.6623,
              'status', 'Linked', 'attachments', json_build_array()))::text AS r) body;
END;
