-- Completing an order in the street (issue 24 §3): the city's list of materials a crew
-- may use, the photos taken after the repair, and one completion record per order.

-- The city's materials (lamp types and wattages, drivers/reactors, photocells). A
-- material is never deleted once named by a completion: it is retired (active = false)
-- and leaves the crews' list, and past completions keep naming it.
CREATE TABLE completion_material (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id   uuid NOT NULL REFERENCES tenant (id),
  kind        text NOT NULL CHECK (kind IN ('lamp', 'driver', 'reactor', 'photocell', 'other')),
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 120),
  wattage     integer CHECK (wattage IS NULL OR wattage BETWEEN 1 AND 10000),
  active      boolean NOT NULL DEFAULT true,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX completion_material_name_idx ON completion_material (tenant_id, lower(name));

-- One completion per order, named by the id its client made (the console makes it when
-- the crew presses "complete", online or not): the same id sent again is the same
-- completion, so an offline retry never completes twice.
CREATE TABLE service_order_completion (
  service_order_id uuid PRIMARY KEY REFERENCES service_order (id),
  tenant_id        uuid NOT NULL REFERENCES tenant (id),
  completion_id    uuid NOT NULL UNIQUE,
  note             text,
  completed_by     text NOT NULL,
  completed_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE service_order_completion_material (
  service_order_id uuid NOT NULL REFERENCES service_order_completion (service_order_id),
  material_id      uuid NOT NULL REFERENCES completion_material (id),
  quantity         integer NOT NULL CHECK (quantity BETWEEN 1 AND 1000),
  PRIMARY KEY (service_order_id, material_id)
);

-- After-repair photos, stored in the blob store like partner attachments. The id is the
-- client's (an upload sent again is the same photo); never sent to partners.
CREATE TABLE service_order_photo (
  id               uuid PRIMARY KEY,
  tenant_id        uuid NOT NULL REFERENCES tenant (id),
  service_order_id uuid NOT NULL REFERENCES service_order (id),
  content_type     text NOT NULL CHECK (content_type IN ('image/jpeg', 'image/png', 'image/webp')),
  blob_path        text NOT NULL,
  size_bytes       integer NOT NULL,
  content_sha256   bytea NOT NULL,
  uploaded_by      text NOT NULL,
  uploaded_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX service_order_photo_order_idx ON service_order_photo (service_order_id, uploaded_at);
