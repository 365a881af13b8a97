-- Sandbox tenants (`lumen partner create --sandbox`): a demo city where a partner
-- tries its integration end to end. Their partners' keys are lmn_test_ even in
-- production, and POST /api/external/sandbox/events (openapi/sandbox.yaml) answers
-- only for them.
ALTER TABLE tenant ADD COLUMN sandbox boolean NOT NULL DEFAULT false;
