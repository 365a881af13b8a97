WITH page AS MATERIALIZED (SELECT row_number() OVER (ORDER BY so.updated_at, so.id) AS ord, so.updated_at AS u, so.id, '{"id":"' || so.id || '","number":' || to_json(so.number)::text || ',"status":' || to_json(so.status)::text
    || ',"priority":' || to_json(so.priority)::text || ',"type":' || to_json(so.reason_code)::text || ',"address":' || to_json(so.address)::text
    || ',"neighborhood":' || coalesce(to_json(so.neighborhood)::text, 'null') || ',"latitude":' || lumen_json_number(so.latitude)
    || ',"longitude":' || lumen_json_number(so.longitude) || ',"poleId":' || coalesce('"' || so.pole_id || '"', 'null')
    || ',"team":' || CASE WHEN so.team_id IS NULL THEN 'null'
      ELSE '{"id":"' || so.team_id || '","name":' || to_json(coalesce(t.name, ''))::text || '}' END
    || ',"openedAt":' || lumen_json_instant(so.opened_at) || ',"updatedAt":' || lumen_json_instant(so.updated_at)
    || ',"closedAt":' || lumen_json_instant(so.closed_at) || '}' AS item
      FROM "service_order" so LEFT JOIN team t ON t.id = so.team_id
     WHERE "so"."tenant_id" = $1 AND "so"."updated_at" < $2::timestamptz AND "so"."updated_at" >= $3::timestamptz AND ("so"."updated_at", "so"."id") > ((SELECT $4::timestamptz), (SELECT $5::uuid))
     ORDER BY so.updated_at, so.id
     LIMIT 1001),
     n AS MATERIALIZED (SELECT (SELECT coalesce(sum(row_count), 0) FROM city_data_count WHERE tenant_id = $6 AND resource = $7)::bigint AS rows, (SELECT count(*) FROM "service_order" WHERE tenant_id = $8 AND updated_at >= $9::timestamptz AND updated_at <= 'infinity') AS tail_now,
                               NULL::bigint AS tail_rank, (SELECT count(*) FROM "service_order" WHERE tenant_id = $10 AND updated_at >= $11::timestamptz AND updated_at <= 'infinity') AS tail_cache),
     m AS MATERIALIZED (SELECT NULL::bigint AS mid FROM n)
SELECT p.items,
       (SELECT count(*) FROM page WHERE ord <= $12) AS fetched,
       l.u AS last_u, l.id AS last_id,
       n.rows, n.tail_now, n.tail_rank, n.tail_cache, m.mid, CASE WHEN n.rows - n.tail_cache = $13::bigint THEN NULL ELSE (SELECT count(*) FROM (SELECT 1 FROM "service_order" WHERE tenant_id = $14 AND updated_at < $15::timestamptz) x) END AS low,
       NULL::text AS h
  FROM n CROSS JOIN m
  LEFT JOIN LATERAL (SELECT to_char(u AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS u, id
                       FROM page WHERE ord <= $16 ORDER BY ord DESC LIMIT 1) l ON true
  LEFT JOIN LATERAL (SELECT (ord - 1) / 64 AS piece,
                            CASE WHEN (ord - 1) / 64 > 0 THEN ',' ELSE '' END || string_agg(item, ',' ORDER BY ord) AS items
                       FROM page WHERE ord <= $17 GROUP BY 1) p ON true
 ORDER BY p.piece
-- parameters: ["T","2026-03-14T12:05:00.000000Z","2026-03-14T12:00:00.000000Z","2026-03-14T12:01:00.123456Z","I","T","service_order","T","2026-03-14T12:05:00.000000Z","T","2026-03-14T12:04:00.000000Z",1001,41,"T","2026-03-14T12:00:00.000000Z",1000,1000]
