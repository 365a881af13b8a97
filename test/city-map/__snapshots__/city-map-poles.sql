
    WITH w AS MATERIALIZED (
    SELECT p.id, p.code, p.address, p.latitude, p.longitude,
           CASE WHEN w.alert THEN 'alert' ELSE 'order' END AS state, lumen_map_state(g.online) AS device
      FROM (SELECT pole_id, bool_or(alert) AS alert
              FROM (SELECT so.pole_id, false AS alert FROM service_order so
                     WHERE so.tenant_id = $1 AND so.status IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS') AND so.pole_id IS NOT NULL    
                    UNION ALL
                    SELECT l.pole_id, true FROM telemetry_lamp_out l JOIN alert a ON a.id = l.alert_id
                     WHERE l.tenant_id = $2 AND a.status = 'Pending'    ) u
             GROUP BY pole_id) w
      JOIN pole p ON p.id = w.pole_id AND p.tenant_id = $3 AND p.active
      LEFT JOIN telegestor g ON g.pole_id = p.id)
    SELECT p.id, p.code, p.address, p.latitude, p.longitude,
           coalesce(w.state, CASE lumen_map_state(g.online) WHEN 'online' THEN 'ok' ELSE lumen_map_state(g.online) END) AS state
      FROM pole p
      LEFT JOIN telegestor g ON g.pole_id = p.id
      LEFT JOIN w ON w.id = p.id
     WHERE p.tenant_id = $4 AND p.active
       AND p.latitude BETWEEN $5 AND $6 AND p.longitude BETWEEN $7 AND $8
       AND true
     ORDER BY p.code
     LIMIT $9
-- parameters: ["T","T","T","T",-25.45,-25.4,-49.3,-49.25,1001]
