-- Intake: Idempotency-Key records, the alert's attachments, failed attachment URLs
-- kept for manual review, and the address keys the pole geocoder matches on.

-- One row per Idempotency-Key a partner used successfully (N1). The first
-- response is kept byte for byte so a replay answers exactly the same body.
-- Rejected requests (validation, 401, 403, 429) never reach this table.
CREATE TABLE idempotency_key (
  external_system_id uuid NOT NULL REFERENCES external_system (id),
  key                uuid NOT NULL,
  -- SHA-256 of the canonical JSON of the request body: "same body" means same hash
  request_hash       bytea NOT NULL,
  alert_id           uuid NOT NULL REFERENCES alert (id),
  response_status    smallint NOT NULL CHECK (response_status IN (200, 201)),
  response_body      text NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (external_system_id, key)
);
-- The retention job deletes by age.
CREATE INDEX idempotency_key_created_idx ON idempotency_key (created_at);

-- One row per distinct attachment of an alert, in arrival order (seq). An
-- attachment is "the same" on a resend when its source is: the same URL, or the
-- same base64 text (source_hash). Stored content is never kept twice per alert
-- (content_sha256 is unique among the alert's stored attachments).
CREATE TABLE alert_attachment (
  id             uuid PRIMARY KEY,
  seq            bigint GENERATED ALWAYS AS IDENTITY,
  alert_id       uuid NOT NULL REFERENCES alert (id),
  tenant_id      uuid NOT NULL REFERENCES tenant (id),
  source_kind    text NOT NULL CHECK (source_kind IN ('url', 'inline')),
  source_url     text,
  source_hash    bytea NOT NULL,
  filename       text,
  content_type   text NOT NULL CHECK (content_type IN ('image/jpeg', 'image/png', 'image/webp')),
  success        boolean NOT NULL,
  blob_path      text,
  size_bytes     integer CHECK (size_bytes >= 0),
  content_sha256 bytea,
  -- why it failed: a stable code and its parameters, rendered in the reader's language
  error_code     text,
  error_params   jsonb,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (alert_id, source_hash),
  CHECK (success = (blob_path IS NOT NULL)),
  CHECK (success = (size_bytes IS NOT NULL AND content_sha256 IS NOT NULL)),
  CHECK (success <> (error_code IS NOT NULL)),
  CHECK ((source_kind = 'url') = (source_url IS NOT NULL))
);
CREATE INDEX alert_attachment_alert_idx ON alert_attachment (alert_id, seq);
CREATE UNIQUE INDEX alert_attachment_content_idx ON alert_attachment (alert_id, content_sha256) WHERE success;

-- Attachment URLs that could not be downloaded, for manual review
-- (`lumen attachment failures --tenant ID`). Written in the request's transaction,
-- so a rejected request leaves none behind.
CREATE TABLE attachment_failure (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id          uuid NOT NULL REFERENCES tenant (id),
  external_system_id uuid NOT NULL REFERENCES external_system (id),
  alert_id           uuid NOT NULL REFERENCES alert (id),
  attachment_id      uuid NOT NULL REFERENCES alert_attachment (id),
  protocol_number    text NOT NULL,
  url                text NOT NULL,
  filename           text,
  content_type       text NOT NULL,
  error_code         text NOT NULL,
  -- the last technical cause (HTTP status, timeout, refused address, ...)
  detail             text NOT NULL,
  attempts           integer NOT NULL CHECK (attempts >= 0),
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX attachment_failure_tenant_idx ON attachment_failure (tenant_id, created_at DESC, id);

-- Address keys for the pole geocoder (N8): accent- and case-insensitive, street
-- type abbreviations expanded, so "R. Consolação, 120" and "rua consolacao 120"
-- land on the same key. The same functions compute the key of a request's address,
-- so both sides are normalised by one definition. Calls between these functions are
-- schema-qualified: since PostgreSQL 17 index builds run with a search_path of
-- pg_catalog only.
CREATE FUNCTION lumen_text_key(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURNS NULL ON NULL INPUT AS $$
  SELECT btrim(regexp_replace(regexp_replace(lower(translate(value,
    'ÁÀÂÃÄÅáàâãäåÉÈÊËéèêëÍÌÎÏíìîïÓÒÔÕÖóòôõöÚÙÛÜúùûüÇçÑñºª',
    'AAAAAAaaaaaaEEEEeeeeIIIIiiiiOOOOOoooooUUUUuuuuCcNnoa')),
    '[^a-z0-9]+', ' ', 'g'), '\s+', ' ', 'g'))
$$;

-- Street part of an address ("Rua Augusta, 1500" -> "rua augusta"): the text
-- before the first comma, without a trailing house number, with the usual street
-- type abbreviations written out.
CREATE FUNCTION lumen_street_key(address text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURNS NULL ON NULL INPUT AS $$
  SELECT regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
           regexp_replace(regexp_replace(
             public.lumen_text_key(regexp_replace(split_part(address, ',', 1), '\s+(n[oº°.]*\s*)?[0-9]+[a-zA-Z]?\s*$', '')),
           '^r ', 'rua '),
           '^av ', 'avenida '),
           '^(tv|trav) ', 'travessa '),
           '^al ', 'alameda '),
           '^(pca|pc|pr) ', 'praca '),
           '^(estr|est) ', 'estrada '),
           '^rod ', 'rodovia '),
           '^(lgo|lg) ', 'largo ')
$$;

-- House number of an address ("Rua Augusta, 1500" -> 1500, "Av. Paulista, S/N" -> null).
CREATE FUNCTION lumen_house_number(address text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURNS NULL ON NULL INPUT AS $$
  SELECT CASE
    WHEN position(',' IN address) > 0
      THEN substring(split_part(address, ',', 2) FROM '^\s*(?:n[oº°.]*\s*)?([0-9]{1,7})')::integer
    ELSE substring(address FROM '\s([0-9]{1,7})[a-zA-Z]?\s*$')::integer
  END
$$;

CREATE INDEX pole_street_key_idx ON pole (tenant_id, lumen_street_key(address)) WHERE active;
