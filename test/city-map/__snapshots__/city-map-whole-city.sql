
    WITH w AS MATERIALIZED (
      SELECT * FROM (
        SELECT k.*, lumen_map_x(k.longitude, $1::int) AS x, lumen_map_y(k.latitude, $2::int) AS y
          FROM (
    SELECT p.id, p.code, p.address, p.latitude, p.longitude,
           CASE WHEN w.alert THEN 'alert' ELSE 'order' END AS state, lumen_map_state(g.online) AS device
      FROM (SELECT pole_id, bool_or(alert) AS alert
              FROM (SELECT so.pole_id, false AS alert FROM service_order so
                     WHERE so.tenant_id = $3 AND so.status IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS') AND so.pole_id IS NOT NULL    
                    UNION ALL
                    SELECT l.pole_id, true FROM telemetry_lamp_out l JOIN alert a ON a.id = l.alert_id
                     WHERE l.tenant_id = $4 AND a.status = 'Pending'    ) u
             GROUP BY pole_id) w
      JOIN pole p ON p.id = w.pole_id AND p.tenant_id = $5 AND p.active
      LEFT JOIN telegestor g ON g.pole_id = p.id) k
         WHERE true) v
       WHERE true
    )
    SELECT x, y,
           coalesce(sum(n) FILTER (WHERE state = 'alert'), 0)::int AS alert,
           coalesce(sum(n) FILTER (WHERE state = 'order'), 0)::int AS "order",
           coalesce(sum(n) FILTER (WHERE state = 'off'), 0)::int AS off,
           coalesce(sum(n) FILTER (WHERE state = 'unknown'), 0)::int AS unknown,
           coalesce(sum(n) FILTER (WHERE state = 'online'), 0)::int AS ok,
           sum(slat) / sum(n) AS latitude, sum(slon) / sum(n) AS longitude
      FROM (
      SELECT x >> $6::int AS x, y >> $7::int AS y, $8::text AS state, "online" AS n, "online_lat" AS slat, "online_lon" AS slon
        FROM pole_map_cell
       WHERE tenant_id = $9 AND level = $10::smallint AND true AND "online" <> 0 UNION ALL 
      SELECT x >> $11::int AS x, y >> $12::int AS y, $13::text AS state, "off" AS n, "off_lat" AS slat, "off_lon" AS slon
        FROM pole_map_cell
       WHERE tenant_id = $14 AND level = $15::smallint AND true AND "off" <> 0 UNION ALL 
      SELECT x >> $16::int AS x, y >> $17::int AS y, $18::text AS state, "unknown" AS n, "unknown_lat" AS slat, "unknown_lon" AS slon
        FROM pole_map_cell
       WHERE tenant_id = $19 AND level = $20::smallint AND true AND "unknown" <> 0 UNION ALL SELECT x, y, device AS state, -1 AS n, -latitude AS slat, -longitude AS slon FROM w UNION ALL SELECT x, y, state, 1 AS n, latitude AS slat, longitude AS slon FROM w) c
     GROUP BY x, y
    HAVING sum(n) > 0
     ORDER BY x, y
-- parameters: [14,14,"T","T","T",0,0,"online","T",14,0,0,"off","T",14,0,0,"unknown","T",14]
