-- What a pole or telegestor row costs to write, for `lumen pole import` (a million
-- rows in one transaction) and every other writer: time-ordered ids, a street key
-- computed in one pass, and change stamps that call no function on a plain insert.
-- See the "Pole import" section of bench/FINDINGS.md for the measurements.

-- UUIDv7 (RFC 9562): 48 bits of Unix time in milliseconds, then the random bits of a
-- v4 with the version nibble turned from 4 into 7 (bits 52 and 53). Rows inserted
-- together get neighbouring ids, so primary-key inserts (and the telegestor's
-- foreign-key probes into pole) land on the last pages of the index instead of random
-- ones, which matters once the indexes outgrow shared_buffers. An id now tells when
-- its row was created, to the millisecond; pole and device ids were never secrets.
-- PostgreSQL 18 has a built-in uuidv7() of the same kind; this one runs on every
-- version Lumen supports. Existing rows keep their random (v4) ids.
CREATE FUNCTION lumen_uuid_v7() RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
           PLACING substring(int8send(floor(date_part('epoch', clock_timestamp()) * 1000)::bigint) FROM 3)
           FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid
$$;
ALTER TABLE pole ALTER COLUMN id SET DEFAULT lumen_uuid_v7();
ALTER TABLE telegestor ALTER COLUMN id SET DEFAULT lumen_uuid_v7();

-- lumen_text_key (0003) with the same results at less cost: translate() compares
-- every character with each of the 52 accented ones, so a text without any
-- non-ASCII character (none of them can occur) skips it; and the second
-- regexp_replace ('\s+' -> ' ') is dropped because the first one already leaves
-- only [a-z0-9] and single spaces. Not strict, so that the planner still inlines it
-- (a CASE is not a strict construct); a null still gives null.
CREATE OR REPLACE FUNCTION lumen_text_key(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT btrim(regexp_replace(lower(CASE WHEN value ~ '[^\x01-\x7f]' THEN translate(value,
    'ÁÀÂÃÄÅáàâãäåÉÈÊËéèêëÍÌÎÏíìîïÓÒÔÕÖóòôõöÚÙÛÜúùûüÇçÑñºª',
    'AAAAAAaaaaaaEEEEeeeeIIIIiiiiOOOOOoooooUUUUuuuuCcNnoa') ELSE value END),
    '[^a-z0-9]+', ' ', 'g'))
$$;

-- lumen_street_key (0003) with the same results at less cost: the key is computed
-- once, and the street type is written out by looking at its first word instead of
-- trying eight anchored regular expressions in turn (at most one of them could match:
-- none of the written-out words starts another pattern). PL/pgSQL so that the key,
-- used three times, is computed once (an inlined SQL function would repeat it).
-- pole_street_key_idx keeps its entries: every address gets the key it had.
-- test/intake/street-key.test.ts compares both definitions on odd addresses.
CREATE OR REPLACE FUNCTION lumen_street_key(address text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE RETURNS NULL ON NULL INPUT AS $$
DECLARE
  k text := public.lumen_text_key(regexp_replace(split_part(address, ',', 1), '\s+(n[oº°.]*\s*)?[0-9]+[a-zA-Z]?\s*$', ''));
  first_end integer := position(' ' IN k);
BEGIN
  IF first_end = 0 THEN
    RETURN k;
  END IF;
  RETURN CASE left(k, first_end - 1)
    WHEN 'r' THEN 'rua'
    WHEN 'av' THEN 'avenida'
    WHEN 'tv' THEN 'travessa' WHEN 'trav' THEN 'travessa'
    WHEN 'al' THEN 'alameda'
    WHEN 'pca' THEN 'praca' WHEN 'pc' THEN 'praca' WHEN 'pr' THEN 'praca'
    WHEN 'estr' THEN 'estrada' WHEN 'est' THEN 'estrada'
    WHEN 'rod' THEN 'rodovia'
    WHEN 'lgo' THEN 'largo' WHEN 'lg' THEN 'largo'
    ELSE left(k, first_end - 1)
  END || substr(k, first_end);
END $$;

-- The change stamps (0002) set updated_at := now(); when it already is now() (every
-- plain insert, by the column default) that changes nothing, so the trigger's WHEN
-- skips the PL/pgSQL call, about 1.7 µs of each imported pole and device. Every
-- other write is stamped as before.
DROP TRIGGER pole_stamp ON pole;
CREATE TRIGGER pole_stamp BEFORE INSERT OR UPDATE ON pole FOR EACH ROW
  WHEN (NEW.updated_at IS DISTINCT FROM now()) EXECUTE FUNCTION lumen_stamp_updated_at();
DROP TRIGGER telegestor_stamp ON telegestor;
CREATE TRIGGER telegestor_stamp BEFORE INSERT OR UPDATE ON telegestor FOR EACH ROW
  WHEN (NEW.updated_at IS DISTINCT FROM now()) EXECUTE FUNCTION lumen_stamp_updated_at();

-- `lumen pole import` ends with ANALYZE only (statistics for the new rows' plans);
-- setting the visibility map of the pages it wrote, which the index-only reads of
-- the lists use, is left to autovacuum, which inserts alone start. By default that
-- takes inserts of a fifth of the table, which one city's import may never reach on
-- a large multi-tenant table; from 2% on, an import of a few hundred thousand poles
-- is vacuumed in the background soon after it commits.
ALTER TABLE pole SET (autovacuum_vacuum_insert_scale_factor = 0.02);
ALTER TABLE telegestor SET (autovacuum_vacuum_insert_scale_factor = 0.02);
