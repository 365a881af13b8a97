WITH horizon AS MATERIALIZED (SELECT greatest(lumen_visibility_horizon(), $1::timestamptz) AS at), page AS MATERIALIZED (SELECT row_number() OVER (ORDER BY p.updated_at, p.id) AS ord, p.updated_at AS u, p.id, p.list_head || coalesce(t.list_item, 'null') || '}' AS item
      FROM "pole" p LEFT JOIN telegestor t ON t.pole_id = p.id
     WHERE "p"."tenant_id" = $2 AND "p"."updated_at" < (SELECT at FROM horizon) AND ("p"."updated_at", "p"."id") > ((SELECT $3::timestamptz), (SELECT $4::uuid))
     ORDER BY p.updated_at, p.id
     LIMIT 1001),
     n AS MATERIALIZED (SELECT (SELECT coalesce(sum(row_count), 0) FROM city_data_count WHERE tenant_id = $5 AND resource = $6)::bigint AS rows, (SELECT count(*) FROM "pole" WHERE tenant_id = $7 AND updated_at >= (SELECT at FROM horizon) AND updated_at <= 'infinity') AS tail_now,
                               NULL::bigint AS tail_rank, NULL::bigint AS tail_cache),
     m AS MATERIALIZED (SELECT NULL::bigint AS mid FROM n)
SELECT p.items,
       (SELECT count(*) FROM page WHERE ord <= $8) AS fetched,
       l.u AS last_u, l.id AS last_id,
       n.rows, n.tail_now, n.tail_rank, n.tail_cache, m.mid, NULL::bigint AS low,
       (SELECT to_char("at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') FROM horizon) AS h
  FROM n CROSS JOIN m
  LEFT JOIN LATERAL (SELECT to_char(u AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS u, id
                       FROM page WHERE ord <= $9 ORDER BY ord DESC LIMIT 1) l ON true
  LEFT JOIN LATERAL (SELECT (ord - 1) / 64 AS piece,
                            CASE WHEN (ord - 1) / 64 > 0 THEN ',' ELSE '' END || string_agg(item, ',' ORDER BY ord) AS items
                       FROM page WHERE ord <= $10 GROUP BY 1) p ON true
 ORDER BY p.piece
-- parameters: [null,"T","2026-03-14T12:01:00.123456Z","I","T","pole","T",1001,1000,1000]
