-- Inbox and orders search (issue 23 §1): what a row shows, accent- and
-- case-insensitive, indexed. unaccent and pg_trgm are trusted contrib extensions
-- (PostgreSQL 13+): the database owner creates them, no superuser needed. Both are
-- created in public and every call to them is schema-qualified: since PostgreSQL 17
-- index builds run with a search_path of pg_catalog only.
CREATE EXTENSION IF NOT EXISTS unaccent WITH SCHEMA public;
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

-- Search form of a text: accents removed, lower case, every run of anything but a
-- letter or digit one space ("Rua São João, 280" -> "rua sao joao 280",
-- "(41) 99999-1234" -> "41 99999 1234"). The query is normalised by the same
-- function, so both sides agree. unaccent() with a named dictionary does not
-- depend on the session: IMMUTABLE holds, as generated columns require.
CREATE FUNCTION lumen_search_norm(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURNS NULL ON NULL INPUT AS $$
  SELECT btrim(regexp_replace(lower(public.unaccent('public.unaccent'::regdictionary, value)), '[^[:alnum:]]+', ' ', 'g'))
$$;

-- What the inbox row and the alert page show: display number, protocol, the
-- address as displayed ("street, number"), neighbourhood and reference, the
-- citizen's name and phone (also as bare digits, so "41999991234" finds
-- "(41) 99999-1234"), the description. Stored and generated: every write of those
-- fields keeps it current, whatever code path makes it.
ALTER TABLE alert ADD COLUMN search_text text GENERATED ALWAYS AS (
  public.lumen_search_norm(
    '#' || alert_number::text || ' ' || protocol_number || ' '
    || address_street || coalesce(', ' || address_number, '') || ' '
    || coalesce(address_neighborhood, '') || ' ' || coalesce(address_reference, '') || ' '
    || requester_name || ' ' || coalesce(requester_phone, '') || ' '
    || coalesce(regexp_replace(requester_phone, '[^0-9]', '', 'g'), '') || ' '
    || description)
) STORED;
CREATE INDEX alert_search_idx ON alert USING gin (search_text public.gin_trgm_ops);

-- The orders list shows number, address, neighbourhood (and the pole, matched by code).
ALTER TABLE service_order ADD COLUMN search_text text GENERATED ALWAYS AS (
  public.lumen_search_norm(number || ' ' || address || ' ' || coalesce(neighborhood, ''))
) STORED;
CREATE INDEX service_order_search_idx ON service_order USING gin (search_text public.gin_trgm_ops);

-- A pole's code, typed in any case: the searches find the orders on it (and the
-- alerts linked to those orders) through this index.
CREATE INDEX pole_code_upper_idx ON pole (upper(code));
