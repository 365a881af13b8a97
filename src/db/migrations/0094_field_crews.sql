-- Field crews (issue 24 §3): which operators belong to which teams of their city, and
-- the visit a triager plans for an order (a date and a time window).
--
-- A member must hold a grant on the team's tenant; the service checks it (a grant can
-- be removed later: the membership then stays but the operator no longer sees the city,
-- so "my team today" shows nothing of it). tenant_id is the team's, kept here so a city's
-- memberships are found and isolated without a join.
CREATE TABLE team_member (
  team_id     uuid NOT NULL REFERENCES team (id) ON DELETE CASCADE,
  operator_id uuid NOT NULL REFERENCES operator (id) ON DELETE CASCADE,
  tenant_id   uuid NOT NULL REFERENCES tenant (id),
  added_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (team_id, operator_id)
);
CREATE INDEX team_member_operator_idx ON team_member (operator_id, tenant_id);

-- The planned visit of an order, in its own table: internal to the city (partners never
-- see it) and not a change of the order (its updatedAt, which partners read and the
-- console's conflict check compares, stays as it is).
CREATE TABLE service_order_visit (
  service_order_id uuid PRIMARY KEY REFERENCES service_order (id) ON DELETE CASCADE,
  tenant_id        uuid NOT NULL REFERENCES tenant (id),
  starts_at        timestamptz NOT NULL,
  ends_at          timestamptz NOT NULL,
  set_at           timestamptz NOT NULL DEFAULT now(),
  CHECK (ends_at > starts_at)
);

-- "My team today" reads the open orders of a few teams.
CREATE INDEX service_order_team_open_idx ON service_order (team_id) WHERE status IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS');
