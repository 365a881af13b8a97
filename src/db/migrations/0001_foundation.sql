-- Tenants, external systems (partners), their API keys, and admin tokens.

CREATE TABLE tenant (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  ibge_code     text CHECK (ibge_code ~ '^[0-9]{7}$'),
  intake_policy text NOT NULL DEFAULT 'automatic' CHECK (intake_policy IN ('automatic', 'manual')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE external_system (
  id                       uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id                uuid NOT NULL REFERENCES tenant (id),
  code                     text NOT NULL UNIQUE CHECK (code ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'),
  scopes                   text[] NOT NULL DEFAULT '{}'
                           CHECK (scopes <@ ARRAY['canCreateServiceOrders', 'canCreateAlerts', 'canReadCityData']::text[]),
  transport                text NOT NULL DEFAULT 'webhook' CHECK (transport IN ('webhook', 'polling')),
  webhook_url              text,
  -- secrets are stored encrypted with LUMEN_SECRET_KEY (AES-256-GCM, see src/lib/secret-box.ts)
  webhook_secret_enc       text,
  polling_url              text,
  polling_key_enc          text,
  polling_interval_seconds integer NOT NULL DEFAULT 180 CHECK (polling_interval_seconds BETWEEN 1 AND 180),
  enabled                  boolean NOT NULL DEFAULT true,
  -- event types this partner subscribes to; null = all (N6)
  event_types              text[],
  -- requests per minute for this partner's key; null = the service default (N10)
  rate_limit_per_minute    integer CHECK (rate_limit_per_minute > 0),
  -- optional minimum seconds between GET /events calls that returned hasMore=false
  events_min_interval_seconds integer CHECK (events_min_interval_seconds BETWEEN 1 AND 180),
  created_at               timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX external_system_tenant_idx ON external_system (tenant_id);

-- Only the SHA-256 of a key is kept. key_id is the readable part after the
-- lmn_live_/lmn_test_ marker; it finds the row, then the hash is compared in
-- constant time.
CREATE TABLE api_key (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  external_system_id uuid NOT NULL REFERENCES external_system (id),
  key_id             text NOT NULL UNIQUE,
  key_prefix         text NOT NULL,
  key_hash           bytea NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now(),
  revoked_at         timestamptz,
  expires_at         timestamptz
);
CREATE INDEX api_key_external_system_idx ON api_key (external_system_id) WHERE revoked_at IS NULL;

CREATE TABLE admin_token (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  key_id     text NOT NULL UNIQUE,
  key_prefix text NOT NULL,
  key_hash   bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
