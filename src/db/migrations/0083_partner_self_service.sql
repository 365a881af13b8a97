-- Partners help themselves (partner API, /api/external/integration): a fourth scope,
-- canManageIntegration, lets a partner's key read its own settings and delivery log,
-- redeliver, send itself a test event and rotate its own webhook secret.
ALTER TABLE external_system DROP CONSTRAINT external_system_scopes_check;
ALTER TABLE external_system ADD CONSTRAINT external_system_scopes_check
  CHECK (scopes <@ ARRAY['canCreateServiceOrders', 'canCreateAlerts', 'canReadCityData', 'canManageIntegration']::text[]);
