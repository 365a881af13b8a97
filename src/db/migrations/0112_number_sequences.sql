-- A city's numbers (N2: alert numbers, and OS-<year>-<sequence> per year) from a
-- PostgreSQL sequence per city, counter and year, instead of a row of tenant_counter.
--
-- Why: every intake of a city updated the same two counter rows, and the next intake
-- of that city waited for the row lock. On one bench machine the anchor's writes with
-- the numbers drawn at random ran 1,074-1,138 tx/s against 818-845 tx/s with the
-- counter rows; on another, counter rows and these sequences measured the same
-- (bench/FINDINGS.md, "Intake with the numbers from sequences"). nextval()
-- takes no row lock and is never rolled back, so the contract's guarantee holds as
-- before: unique and increasing per city, gaps allowed. Sequences are created with
-- CACHE 1 (each nextval reads the shared sequence, so numbers increase in the order
-- they are taken, across connections).
--
-- Sequences live in schema tenant_number, named a_<city>_0 (alerts) and
-- o_<city>_<year> (service orders), <city> the tenant id without dashes. A city's
-- sequence is created by its first number (lumen_take_number); one taken concurrently
-- by another connection waits for that creation and then uses the same sequence.

CREATE SCHEMA tenant_number;

CREATE FUNCTION lumen_number_sequence(p_tenant uuid, p_name text, p_year integer) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF p_name = 'alert' AND p_year = 0 THEN
    RETURN 'a_' || replace(p_tenant::text, '-', '') || '_0';
  ELSIF p_name = 'service_order' AND p_year BETWEEN 1 AND 9999 THEN
    RETURN 'o_' || replace(p_tenant::text, '-', '') || '_' || p_year;
  END IF;
  RAISE EXCEPTION 'no number sequence for (%, %)', p_name, p_year USING ERRCODE = 'invalid_parameter_value';
END
$$;

-- The sequence of a city's counter, created when missing. Two connections that create
-- the same one at once: the second's CREATE waits for the first's transaction; when
-- it commits the second fails with a unique violation, caught here, and reads the
-- committed sequence (a new statement, so a new snapshot, in READ COMMITTED); when it
-- rolls back the second creates it itself.
CREATE FUNCTION lumen_number_sequence_oid(p_tenant uuid, p_name text, p_year integer) RETURNS regclass
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  rel text := lumen_number_sequence(p_tenant, p_name, p_year);
  seq regclass := to_regclass('tenant_number.' || rel);
BEGIN
  IF seq IS NOT NULL THEN
    RETURN seq;
  END IF;
  BEGIN
    EXECUTE format('CREATE SEQUENCE tenant_number.%I AS bigint MINVALUE 1 START 1 CACHE 1', rel);
  EXCEPTION WHEN unique_violation OR duplicate_table THEN
    NULL;
  END;
  SELECT c.oid INTO seq FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname = 'tenant_number' AND c.relname = rel AND c.relkind = 'S';
  IF seq IS NULL THEN
    RAISE EXCEPTION 'number sequence tenant_number.% was not created', rel;
  END IF;
  RETURN seq;
END
$$;

-- The next number of a city's counter: alert (year 0) or service_order (its year).
CREATE FUNCTION lumen_take_number(p_tenant uuid, p_name text, p_year integer) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RETURN nextval(lumen_number_sequence_oid(p_tenant, p_name, p_year));
END
$$;

-- The last number a city's counter handed out, 0 when none (its sequence not created
-- or not used yet). For operations, seeds and tests; nothing on a request path reads it.
CREATE FUNCTION lumen_last_number(p_tenant uuid, p_name text, p_year integer) RETURNS bigint
LANGUAGE plpgsql STABLE AS $$
DECLARE
  rel regclass := to_regclass('tenant_number.' || lumen_number_sequence(p_tenant, p_name, p_year));
  result bigint;
BEGIN
  IF rel IS NULL THEN
    RETURN 0;
  END IF;
  EXECUTE format('SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM %s', rel) INTO result;
  RETURN result;
END
$$;

-- Makes the next number of a city's counter at least p_at_least + 1 (numbers loaded
-- in bulk, seeds); never lowers it.
CREATE FUNCTION lumen_raise_number(p_tenant uuid, p_name text, p_year integer, p_at_least bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  rel regclass := lumen_number_sequence_oid(p_tenant, p_name, p_year);
BEGIN
  IF p_at_least > lumen_last_number(p_tenant, p_name, p_year) THEN
    PERFORM setval(rel, p_at_least, true);
  END IF;
  RETURN lumen_last_number(p_tenant, p_name, p_year);
END
$$;

-- The counters so far become sequences that go on from their values.
DO $$
DECLARE
  c record;
BEGIN
  FOR c IN SELECT tenant_id, name, year, value FROM tenant_counter WHERE value > 0 LOOP
    PERFORM lumen_raise_number(c.tenant_id, c.name, c.year, c.value);
  END LOOP;
END
$$;

DROP TABLE tenant_counter;
