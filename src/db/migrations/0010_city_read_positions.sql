-- City-data list reads (interface 4.3, N5) without counting, writing or serialising
-- more than a page needs: PostgreSQL writes the items' JSON; page positions whose
-- place in the list is known are shared by every walk of a tenant; cached totals
-- outlive a walk. The argument that keeps totals and positions exact is in
-- src/services/city-data-total.ts.

-- JSON text of a value, byte for byte what JSON.stringify writes for the value
-- node-postgres reads from the column, so a page built here is the page the Node
-- serializer built before. Inlinable SQL functions (no STRICT, no SET clause), so a
-- page of 1000 items costs no function calls.
--
-- float8: PostgreSQL prints the shortest exact digits (extra_float_digits >= 1, the
-- default since PostgreSQL 12, which node-postgres's parseFloat relies on as well),
-- like JavaScript, but switches to exponent form below 1e-4 where JavaScript does
-- so below 1e-6, and writes two-digit exponents (1e-07 against 1e-7). Digits agree
-- below 1e15 (every latitude and longitude: their CHECK constraints keep them within
-- 180); from 1e15 up both forms are exact but may pick different digits.
CREATE FUNCTION lumen_json_number_exp(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE WHEN a.s !~ '^[0-9]+$' THEN 'null' ELSE
    a.sign || CASE
      WHEN a.n >= b.k AND a.n <= 21 THEN a.s || repeat('0', a.n - b.k)
      WHEN a.n > 0 AND a.n <= 21 THEN left(a.s, a.n) || '.' || substr(a.s, a.n + 1)
      WHEN a.n > -6 AND a.n <= 0 THEN '0.' || repeat('0', -a.n) || a.s
      ELSE left(a.s, 1) || CASE WHEN b.k > 1 THEN '.' || substr(a.s, 2) ELSE '' END
           || 'e' || CASE WHEN a.n > 0 THEN '+' ELSE '-' END || abs(a.n - 1)
    END END
  -- s: the significant digits; n: the decimal exponent of the digit after the point
  -- (the value is 0.s * 10^n), as in the specification of Number.prototype.toString
  FROM (SELECT CASE WHEN left(t, 1) = '-' THEN '-' ELSE '' END AS sign,
               replace(split_part(ltrim(t, '-'), 'e', 1), '.', '') AS s,
               coalesce(nullif(split_part(t, 'e', 2), '')::int, 0) + 1
                 + CASE WHEN position('.' in t) > 0 THEN position('.' in ltrim(t, '-')) - 2
                        ELSE length(split_part(ltrim(t, '-'), 'e', 1)) - 1 END AS n) a,
       LATERAL (SELECT length(a.s) AS k) b
$$;

CREATE FUNCTION lumen_json_number(x double precision) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN x IS NULL THEN 'null'
    WHEN x = 0 THEN '0'
    WHEN abs(x) >= 1e-4 AND abs(x) < 1e15 THEN x::text
    ELSE lumen_json_number_exp(x::text)
  END
$$;

-- timestamptz as Date.prototype.toISOString writes it (milliseconds, truncated like
-- node-postgres's parser), quoted; years outside 1..9999 in JavaScript's extended form.
CREATE FUNCTION lumen_json_instant_far(ts timestamptz) RETURNS text
LANGUAGE sql STABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE WHEN NOT isfinite(ts) THEN 'null' ELSE
    '"' || CASE WHEN a.y BETWEEN 0 AND 9999 THEN lpad(a.y::text, 4, '0')
                WHEN a.y < 0 THEN '-' || lpad((-a.y)::text, 6, '0')
                ELSE '+' || lpad(a.y::text, 6, '0') END
        || to_char(ts AT TIME ZONE 'UTC', '-MM-DD"T"HH24:MI:SS.MS"Z"') || '"' END
  -- JavaScript counts 1 BC as year 0
  FROM (SELECT CASE WHEN isfinite(ts) THEN extract(year FROM ts AT TIME ZONE 'UTC')::int
                 + CASE WHEN extract(year FROM ts AT TIME ZONE 'UTC') < 0 THEN 1 ELSE 0 END END AS y) a
$$;

CREATE FUNCTION lumen_json_instant(ts timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN ts IS NULL THEN 'null'
    WHEN ts >= '0001-01-01T00:00:00Z' AND ts < '10000-01-01T00:00:00Z'
      THEN '"' || to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"'
    ELSE lumen_json_instant_far(ts)
  END
$$;

-- Walks know their tenant, so one tenant's walks can share positions. Their cached
-- totals move to city_read_total: a total does not depend on the walk.
ALTER TABLE city_read_walk ADD COLUMN tenant_id uuid REFERENCES tenant (id);
UPDATE city_read_walk w SET tenant_id = es.tenant_id FROM external_system es WHERE es.id = w.external_system_id;
ALTER TABLE city_read_walk ALTER COLUMN tenant_id SET NOT NULL;
ALTER TABLE city_read_walk
  DROP COLUMN total_count, DROP COLUMN total_rows, DROP COLUMN total_deleted, DROP COLUMN total_horizon;
CREATE INDEX city_read_walk_tenant_idx ON city_read_walk (tenant_id, resource, updated_since);

-- A checkpoint may also know its rank: the number of items of the walk's filter up
-- to and including it, exact while the tenant's rows below rank_horizon are the
-- rank_below rows counted then. A page requested out of order (by any walk of the
-- tenant with the same filter, whatever its page size) then starts from the nearest
-- ranked checkpoint before it instead of counting every item from the start.
ALTER TABLE city_read_checkpoint
  ADD COLUMN rank bigint CHECK (rank >= 0),
  ADD COLUMN rank_horizon timestamptz,
  ADD COLUMN rank_below bigint,
  ADD CONSTRAINT city_read_checkpoint_rank_epoch_check
    CHECK ((rank IS NULL) = (rank_horizon IS NULL) AND (rank IS NULL) = (rank_below IS NULL));
CREATE INDEX city_read_checkpoint_rank_idx ON city_read_checkpoint (walk_id, rank) WHERE rank IS NOT NULL;

-- `total` of an updatedSince filter, per tenant, list and updatedSince: the items of
-- the filter stamped below `horizon` (matching_below), exact while the tenant's rows
-- below `horizon` are the `below` rows counted then; items at or above the horizon
-- are counted at each read (few). Unused for a day: deleted by the tenant's next walk.
CREATE TABLE city_read_total (
  tenant_id      uuid NOT NULL REFERENCES tenant (id),
  resource       text NOT NULL CHECK (resource IN ('pole', 'service_order')),
  updated_since  timestamptz NOT NULL,
  matching_below bigint NOT NULL CHECK (matching_below >= 0),
  horizon        timestamptz NOT NULL,
  below          bigint NOT NULL,
  used_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, resource, updated_since)
);
