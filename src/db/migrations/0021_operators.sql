-- Operators: the people who run Lumen, their roles per tenant, their console sessions,
-- and admin tokens that belong to an operator or carry grants of their own.
--
-- Roles per tenant are ordered viewer < triager < city-admin; a platform admin holds
-- every role on every tenant (src/services/operators/access.ts).

CREATE TABLE operator (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- kept lower-case: one account per address, whatever the case typed at sign-in
  email          text NOT NULL UNIQUE CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254 AND email ~ '^[^@\s]+@[^@\s]+$'),
  name           text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  -- scrypt$<log2 N>$<r>$<p>$<salt b64>$<hash b64>; null: the operator cannot sign in yet
  password_hash  text,
  platform_admin boolean NOT NULL DEFAULT false,
  -- a disabled operator's sessions and tokens stop at once (read on every request)
  disabled_at    timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE operator_grant (
  operator_id uuid NOT NULL REFERENCES operator (id) ON DELETE CASCADE,
  tenant_id   uuid NOT NULL REFERENCES tenant (id),
  role        text NOT NULL CHECK (role IN ('viewer', 'triager', 'city-admin')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (operator_id, tenant_id)
);
CREATE INDEX operator_grant_tenant_idx ON operator_grant (tenant_id);

-- A token's reach (scope):
--   platform  every tenant, every role, tenant creation and operators (a service token;
--             or an operator token of a platform admin, while they stay one)
--   owner     exactly its operator's access, as it is at each request
--   grants    its own admin_token_grant rows; for an operator's token each is cut to
--             the operator's own role on that tenant at each request (never more)
-- Tokens made before operators existed were platform-wide service tokens, and stay so.
ALTER TABLE admin_token
  ADD COLUMN operator_id uuid REFERENCES operator (id),
  ADD COLUMN scope text NOT NULL DEFAULT 'platform' CHECK (scope IN ('platform', 'owner', 'grants')),
  ADD COLUMN expires_at timestamptz,
  ADD CONSTRAINT admin_token_owner_scope CHECK (scope <> 'owner' OR operator_id IS NOT NULL);
ALTER TABLE admin_token ALTER COLUMN scope DROP DEFAULT;
CREATE INDEX admin_token_operator_idx ON admin_token (operator_id) WHERE operator_id IS NOT NULL;

CREATE TABLE admin_token_grant (
  admin_token_id uuid NOT NULL REFERENCES admin_token (id) ON DELETE CASCADE,
  tenant_id      uuid NOT NULL REFERENCES tenant (id),
  role           text NOT NULL CHECK (role IN ('viewer', 'triager', 'city-admin')),
  PRIMARY KEY (admin_token_id, tenant_id)
);
CREATE INDEX admin_token_grant_tenant_idx ON admin_token_grant (tenant_id);

-- Console sessions. Only the SHA-256 of the session id (the cookie's value) is kept; a
-- new id on every sign-in. Idle and absolute limits are checked on every request.
CREATE TABLE operator_session (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  id_hash      bytea NOT NULL UNIQUE,
  operator_id  uuid NOT NULL REFERENCES operator (id) ON DELETE CASCADE,
  csrf_token   text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  -- created_at + the absolute limit (7 days)
  expires_at   timestamptz NOT NULL,
  ended_at     timestamptz,
  client_address text
);
CREATE INDEX operator_session_operator_idx ON operator_session (operator_id) WHERE ended_at IS NULL;

-- Failed sign-ins per account (by e-mail as typed, known or not: the answer must not
-- tell them apart) and per client address, shared by every instance.
CREATE TABLE sign_in_failure (
  key          text PRIMARY KEY,
  window_start timestamptz NOT NULL,
  failures     integer NOT NULL
);
CREATE INDEX sign_in_failure_window_idx ON sign_in_failure (window_start);

-- Who did it: the operator behind a session, an operator's token or `lumen --as`.
ALTER TABLE audit_log ADD COLUMN operator_id uuid REFERENCES operator (id);
CREATE INDEX audit_log_operator_idx ON audit_log (operator_id, id) WHERE operator_id IS NOT NULL;
ALTER TABLE audit_log DROP CONSTRAINT audit_log_entity_type_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_entity_type_check
  CHECK (entity_type IN ('tenant', 'team', 'alert', 'service_order', 'partner', 'admin_token', 'operator'));
