-- Groups of Pending alerts (issues 23 §1 and 24 §2): duplicates (the same pole, or
-- within a distance, inside a time window) and suspected supply faults (telemetry
-- lamp-out alerts of poles on one circuit, or within a distance, that went dark
-- together). Groups are computed when read (no stored group to keep current); these
-- settings and indexes are what the reads need.
--   duplicate_radius_meters       two Pending alerts this close are duplicates (default 30 m)
--   duplicate_window_hours        ... when they arrived at most this far apart (default 72 h)
--   supply_fault_radius_meters    two dark poles this close belong to one suspected fault (default 100 m)
--   supply_fault_window_minutes   ... when their lamps went out at most this far apart (default 60 min)
ALTER TABLE tenant
  ADD COLUMN duplicate_radius_meters integer NOT NULL DEFAULT 30 CHECK (duplicate_radius_meters BETWEEN 1 AND 1000),
  ADD COLUMN duplicate_window_hours integer NOT NULL DEFAULT 72 CHECK (duplicate_window_hours BETWEEN 1 AND 720),
  ADD COLUMN supply_fault_radius_meters integer NOT NULL DEFAULT 100 CHECK (supply_fault_radius_meters BETWEEN 1 AND 5000),
  ADD COLUMN supply_fault_window_minutes integer NOT NULL DEFAULT 60 CHECK (supply_fault_window_minutes BETWEEN 1 AND 1440);

-- The electrical circuit a pole is fed by (optional, from the pole import).
ALTER TABLE pole ADD COLUMN circuit text CHECK (length(circuit) BETWEEN 1 AND 100);
CREATE INDEX pole_tenant_circuit_idx ON pole (tenant_id, circuit) WHERE circuit IS NOT NULL;

-- A Pending alert's neighbours are read through this box index (latitude range, then
-- longitude); the inbox reads it once or twice per row it shows.
CREATE INDEX alert_pending_position_idx ON alert (tenant_id, latitude, longitude, created_at) WHERE status = 'Pending' AND latitude IS NOT NULL;

-- The telemetry row of an alert (telemetry_lamp_out is keyed by pole).
CREATE INDEX telemetry_lamp_out_alert_idx ON telemetry_lamp_out (alert_id);

-- The nearest active pole of a tenant within `meters` of a point (the pole an alert is
-- on), or null; the same box-then-distance read as the service's nearestPoleId.
CREATE FUNCTION lumen_nearest_pole(p_tenant uuid, p_lat double precision, p_lon double precision, p_meters double precision)
RETURNS uuid LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT p.id FROM pole p
   WHERE p.tenant_id = p_tenant AND p.active AND p_meters > 0 AND p_lat IS NOT NULL
     AND p.latitude BETWEEN p_lat - p_meters / 111320.0 AND p_lat + p_meters / 111320.0
     AND p.longitude BETWEEN p_lon - p_meters / (111320.0 * greatest(cos(radians(p_lat)), 0.01)) AND p_lon + p_meters / (111320.0 * greatest(cos(radians(p_lat)), 0.01))
     AND 6371000 * sqrt(power(radians(p.latitude - p_lat), 2) + power(cos(radians((p.latitude + p_lat) / 2)) * radians(p.longitude - p_lon), 2)) <= p_meters
   ORDER BY 6371000 * sqrt(power(radians(p.latitude - p_lat), 2) + power(cos(radians((p.latitude + p_lat) / 2)) * radians(p.longitude - p_lon), 2)), p.id
   LIMIT 1
$$;
