-- The JSON of a Pole item (2.2) kept with the rows, so a page of the pole list
-- concatenates stored text instead of writing every value as JSON again on each read.
--
-- Writing the item at read time cost PostgreSQL about 5 ms of CPU per page of 1000
-- poles against 1.6 ms for the stored text (bench/FINDINGS.md, "Issue 26"); a full sync
-- of a million poles reads every item once per sync and partner, while a pole or its
-- telegestor changes far less often than it is read.
--
-- Two generated columns, each from its own row only: the pole's part up to its
-- "device" member (pole.list_head) and the telegestor's object (telegestor.list_item).
-- A page joins them as before: list_head || coalesce(list_item, 'null') || '}'.
-- Generated columns are computed after the BEFORE triggers, so list_head carries the
-- updated_at the stamp trigger wrote; no trigger and no writer can leave them stale.
-- Byte for byte what the read-time expression wrote (test/city-data/json.test.ts).
--
-- Adding them rewrites both tables once (about 10 s per million poles on the bench
-- machine), under the lock ALTER TABLE takes.

-- JSON text of a string: to_json is STABLE only because it serves every type; for text
-- it depends on nothing but its argument.
CREATE FUNCTION lumen_json_text(t text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT to_json(t)::text $$;

-- lumen_json_instant (0010) for a stored column: its format is fixed and taken in UTC,
-- so it depends on nothing but its argument either.
CREATE FUNCTION lumen_json_instant_fixed(ts timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT lumen_json_instant(ts) $$;

ALTER TABLE pole ADD COLUMN list_head text GENERATED ALWAYS AS (
  '{"id":"' || id::text || '","code":' || lumen_json_text(code) || ',"address":' || lumen_json_text(address)
  || ',"neighborhood":' || lumen_json_text(neighborhood) || ',"latitude":' || lumen_json_number(latitude)
  || ',"longitude":' || lumen_json_number(longitude) || ',"active":' || active::text
  || ',"updatedAt":' || lumen_json_instant_fixed(updated_at) || ',"device":'
) STORED;

ALTER TABLE telegestor ADD COLUMN list_item text GENERATED ALWAYS AS (
  '{"id":"' || id::text || '","identifier":' || lumen_json_text(identifier) || ',"online":' || coalesce(online::text, 'null')
  || ',"relayOn":' || coalesce(relay_on::text, 'null') || ',"lastCommunicationAt":' || lumen_json_instant_fixed(last_communication_at)
  || '}'
) STORED;
