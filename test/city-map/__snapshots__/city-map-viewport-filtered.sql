
    WITH w AS MATERIALIZED (
      SELECT * FROM (
        SELECT k.*, lumen_map_x(k.longitude, $1::int) AS x, lumen_map_y(k.latitude, $2::int) AS y
          FROM (
    SELECT p.id, p.code, p.address, p.latitude, p.longitude,
           CASE WHEN w.alert THEN 'alert' ELSE 'order' END AS state, lumen_map_state(g.online) AS device
      FROM (SELECT pole_id, bool_or(alert) AS alert
              FROM (SELECT so.pole_id, false AS alert FROM service_order so
                     WHERE so.tenant_id = $3 AND so.status IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS') AND so.pole_id IS NOT NULL AND so.priority = $4   
                    UNION ALL
                    SELECT l.pole_id, true FROM telemetry_lamp_out l JOIN alert a ON a.id = l.alert_id
                     WHERE l.tenant_id = $5 AND a.status = 'Pending' AND a.priority = $6   ) u
             GROUP BY pole_id) w
      JOIN pole p ON p.id = w.pole_id AND p.tenant_id = $7 AND p.active
      LEFT JOIN telegestor g ON g.pole_id = p.id) k
         WHERE "k"."device" = $8) v
       WHERE x BETWEEN lumen_map_x($9::float8, $10::int) << $11::int AND ((lumen_map_x($12::float8, $13::int) + 1) << $14::int) - 1
         AND y BETWEEN lumen_map_y($15::float8, $16::int) << $17::int AND ((lumen_map_y($18::float8, $19::int) + 1) << $20::int) - 1
    )
    SELECT x, y,
           coalesce(sum(n) FILTER (WHERE state = 'alert'), 0)::int AS alert,
           coalesce(sum(n) FILTER (WHERE state = 'order'), 0)::int AS "order",
           coalesce(sum(n) FILTER (WHERE state = 'off'), 0)::int AS off,
           coalesce(sum(n) FILTER (WHERE state = 'unknown'), 0)::int AS unknown,
           coalesce(sum(n) FILTER (WHERE state = 'online'), 0)::int AS ok,
           sum(slat) / sum(n) AS latitude, sum(slon) / sum(n) AS longitude
      FROM (SELECT x, y, state, 1 AS n, latitude AS slat, longitude AS slon FROM w) c
     GROUP BY x, y
    HAVING sum(n) > 0
     ORDER BY x, y
-- parameters: [17,17,"T","High","T","High","T","off",-49.3,17,0,-49.25,17,0,-25.4,17,0,-25.45,17,0]
