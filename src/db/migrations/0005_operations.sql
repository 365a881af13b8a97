-- Operations: the audit log of every operator action (admin API and CLI).
--
-- One row per action, written in the same transaction as the change it records,
-- with the state of the changed entity before and after (secrets are never stored:
-- only whether they are set).

CREATE TABLE audit_log (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at             timestamptz NOT NULL DEFAULT now(),
  -- null for actions outside any tenant (admin tokens)
  tenant_id      uuid REFERENCES tenant (id),
  -- admin-token:<name> or cli:<system user>
  actor          text NOT NULL CHECK (length(actor) BETWEEN 1 AND 200),
  admin_token_id uuid REFERENCES admin_token (id),
  action         text NOT NULL CHECK (action ~ '^[a-z][a-z0-9.-]{0,63}$'),
  entity_type    text NOT NULL CHECK (entity_type IN ('tenant', 'team', 'alert', 'service_order', 'partner', 'admin_token')),
  entity_id      text NOT NULL,
  before         jsonb,
  after          jsonb,
  note           text,
  request_id     text
);
CREATE INDEX audit_log_at_idx ON audit_log (at, id);
CREATE INDEX audit_log_tenant_idx ON audit_log (tenant_id, at, id);
CREATE INDEX audit_log_entity_idx ON audit_log (entity_type, entity_id, id);

