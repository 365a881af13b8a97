-- Partner authentication is answered from an in-process cache on every instance
-- (src/http/partner-key-cache.ts). Whatever changes what a key may do notifies every
-- instance, from any writer (admin API, CLI, self-service, SQL by hand), when it
-- commits: a key updated or deleted (rotation, revocation, a shortened overlap), a
-- partner's enabled flag, scopes, rate limit, code or tenant, a tenant's IBGE code.
-- The payload is the partner's id ('*': every partner). A new key needs no notice:
-- keys not in a cache are read from the database.
CREATE FUNCTION lumen_partner_auth_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'api_key' THEN
    PERFORM pg_notify('lumen_partner_auth', OLD.external_system_id::text);
  ELSIF TG_TABLE_NAME = 'external_system' THEN
    PERFORM pg_notify('lumen_partner_auth', OLD.id::text);
  ELSE
    PERFORM pg_notify('lumen_partner_auth', '*');
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER api_key_auth_notify AFTER UPDATE OR DELETE ON api_key
  FOR EACH ROW EXECUTE FUNCTION lumen_partner_auth_notify();

CREATE TRIGGER external_system_auth_notify AFTER UPDATE ON external_system
  FOR EACH ROW WHEN (OLD.enabled IS DISTINCT FROM NEW.enabled OR OLD.scopes IS DISTINCT FROM NEW.scopes
    OR OLD.rate_limit_per_minute IS DISTINCT FROM NEW.rate_limit_per_minute OR OLD.code IS DISTINCT FROM NEW.code
    OR OLD.tenant_id IS DISTINCT FROM NEW.tenant_id)
  EXECUTE FUNCTION lumen_partner_auth_notify();

CREATE TRIGGER external_system_auth_notify_delete AFTER DELETE ON external_system
  FOR EACH ROW EXECUTE FUNCTION lumen_partner_auth_notify();

CREATE TRIGGER tenant_auth_notify AFTER UPDATE OF ibge_code ON tenant
  FOR EACH ROW WHEN (OLD.ibge_code IS DISTINCT FROM NEW.ibge_code)
  EXECUTE FUNCTION lumen_partner_auth_notify();
